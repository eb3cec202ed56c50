"""`python -m media_pipeline transcode`: one JSON object on stdout, exit 0 or 2."""

import json
import subprocess
import sys
from pathlib import Path

from media_pipeline.ffmpeg.cli import add_parser, run


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "media_pipeline", "transcode", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],
    )


def test_cli_prints_one_json_object(clips, tmp_path):
    result = run_cli(str(clips["odd.mp4"]), "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    (line,) = result.stdout.strip().splitlines()
    body = json.loads(line)
    assert (body["status"], body["width"], body["height"], body["fps"], body["frames"]) == (
        "ok",
        257,
        255,
        12.0,
        12,
    )
    assert (body["rendition_width"], body["rendition_height"]) == (258, 256)
    assert (body["pad_right"], body["pad_bottom"]) == (1, 1)
    assert body["duration"] == 1.0
    assert Path(body["output"]).parent == tmp_path
    assert Path(body["output"]).is_file() and Path(body["poster"]).is_file()


def test_cli_refuses_bad_input_with_exit_code_2(bad_files, tmp_path):
    result = run_cli(str(bad_files["notes.mp4"]), "--out", str(tmp_path))
    assert result.returncode == 2
    (line,) = result.stdout.strip().splitlines()
    body = json.loads(line)
    assert body["status"] == "error"
    assert body["error"].startswith("not a video: notes.mp4 is not a media file")
    assert body["error_class"] == "NotAVideo"
    assert result.stderr.startswith("error: not a video: notes.mp4")
    assert list(tmp_path.iterdir()) == []


def test_the_handler_reports_a_timeout_as_an_error(clips, tmp_path, capsys):
    import argparse

    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(
        ["transcode", str(clips["wide.mp4"]), "--out", str(tmp_path), "--timeout", "0.001"]
    )
    assert args.handler is run
    assert args.handler(args) == 3
    body = json.loads(capsys.readouterr().out)
    assert (body["status"], body["error_class"]) == ("error", "TranscodeTimeout")
