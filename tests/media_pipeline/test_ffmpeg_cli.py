"""`python -m media_pipeline transcode`: one JSON object on stdout, exit 0, 2, 3 or 143."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from media_pipeline.ffmpeg.cli import add_parser, run
from media_pipeline.ffmpeg.synth import make_clip


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


def test_sigterm_stops_the_cli_and_leaves_no_part_file(tmp_path):
    # given: a transcode that takes a few seconds
    big = make_clip(path=tmp_path / "big.mp4", width=1280, height=720, fps=30, seconds=4).path
    out = tmp_path / "out"
    cli = subprocess.Popen(
        [sys.executable, "-m", "media_pipeline", "transcode", str(big), "--out", str(out)]
        + ["--stem", "r"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    deadline = time.monotonic() + 60
    while not any(p.stat().st_size for p in out.glob(".r.*.part.mp4")):  # ffmpeg is writing
        assert time.monotonic() < deadline and cli.poll() is None, cli.communicate()
        time.sleep(0.05)
    # when
    cli.send_signal(signal.SIGTERM)
    stdout, _ = cli.communicate(timeout=30)
    # then
    assert cli.returncode == 143
    body = json.loads(stdout)
    assert (body["status"], body["error"], body["error_class"]) == (
        "error",
        "stopped by SIGTERM",
        "Stopped",
    )
    assert list(out.iterdir()) == []
