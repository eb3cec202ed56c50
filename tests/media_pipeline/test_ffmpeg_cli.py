"""`python -m media_pipeline transcode`: one JSON object on stdout, exit 0, 2, 3 or 143."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from media_pipeline.ffmpeg.cli import add_parser, run
from media_pipeline.ffmpeg.synth import make_clip

ROOT = Path(__file__).resolve().parents[2]


def run_cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # run from another folder too
    return subprocess.run(
        [sys.executable, "-m", "media_pipeline", "transcode", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=env,
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


def test_a_stem_naming_the_source_is_refused_and_the_source_kept(clips, tmp_path):
    # before: the rendition replaced the source, and the run said ok
    source = tmp_path / "self.mp4"
    source.write_bytes(Path(clips["odd.mp4"]).read_bytes())
    before = source.read_bytes()
    result = run_cli(str(source), "--out", str(tmp_path), "--stem", "self")
    assert result.returncode == 2
    assert "is the source video itself" in json.loads(result.stdout)["error"]
    assert source.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["self.mp4"]


def test_a_source_named_as_its_checksum_in_out_is_not_replaced(clips, tmp_path):
    from media_pipeline.ffmpeg.probe import sha256_file

    data = Path(clips["odd.mp4"]).read_bytes()
    source = tmp_path / "x.mp4"
    source.write_bytes(data)
    named = tmp_path / f"{sha256_file(source)}.mp4"
    source.rename(named)
    result = run_cli(str(named), "--out", str(tmp_path))
    assert result.returncode == 2 and "is the source video itself" in result.stdout
    assert named.read_bytes() == data
    assert [p.name for p in tmp_path.iterdir()] == [named.name]


@pytest.mark.parametrize("timeout", ["-1", "nan", "0", "inf", "soon"])
def test_a_timeout_that_is_not_a_positive_number_of_seconds_is_refused(clips, tmp_path, timeout):
    # before: -1 and nan timed out at once "worth retrying", 0 meant no limit, inf a
    # traceback and ok
    result = run_cli(str(clips["odd.mp4"]), "--out", str(tmp_path / "o"), f"--timeout={timeout}")
    assert result.returncode == 2
    assert "argument --timeout" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("out", ["a_file", "a_file/sub", ""])
def test_an_out_that_cannot_be_a_folder_is_refused_with_a_message(clips, tmp_path, out):
    (tmp_path / "a_file").write_text("x")
    target = str(tmp_path / out) if out else ""
    # from tmp_path: an empty --out taken for the current folder would write there
    result = run_cli(str(clips["odd.mp4"]), "--out", target, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert (tmp_path / "a_file").read_text() == "x"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file"]
