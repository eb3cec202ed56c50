"""`degrade`: a visibly worse copy of a video with the source's size, frames and times."""

import subprocess
from pathlib import Path

import numpy as np
import pytest

from media_pipeline.ffmpeg.degrade import degrade
from media_pipeline.ffmpeg.errors import MediaError, TranscodeFailed


def frames_and_times(path) -> tuple[int, list[float]]:
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "v", "-show_entries",
         "frame=pts_time", "-of", "csv=p=0", str(path)],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    times = [round(float(t.strip(",")), 3) for t in out]
    return len(times), times


def luma(path, size: str) -> np.ndarray:
    raw = subprocess.run(
        ["ffmpeg", "-v", "error", "-i", str(path), "-f", "rawvideo", "-pix_fmt", "gray", "-"],
        capture_output=True, check=True,
    ).stdout  # fmt: skip
    width, height = map(int, size.split("x"))
    return np.frombuffer(raw, np.uint8).reshape(-1, height, width).astype(float)


@pytest.fixture
def variable_rate(tmp_path):
    """30 frames, the first ten at 10 fps and the rest at 5 fps."""
    path = tmp_path / "vfr.mp4"
    subprocess.run(
        ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=64x48:r=10",
         "-frames:v", "30", "-vf", "setpts='if(lt(N,10),N/(10*TB),(2*N-10)/(10*TB))'",
         "-fps_mode", "passthrough", "-pix_fmt", "yuv420p", str(path)],
        check=True,
    )  # fmt: skip
    return path


@pytest.mark.parametrize("kind", ["blur", "noise", "blocks"])
@pytest.mark.parametrize("suffix", [".mp4", ".webm"])
def test_a_degraded_copy_keeps_every_frame_and_its_time(tmp_path, variable_rate, kind, suffix):
    # when
    out = degrade(source=variable_rate, out=tmp_path / f"worse{suffix}", kind=kind)
    # then: the source's frames at the source's times (no frame added to fill a grid)
    assert frames_and_times(out) == frames_and_times(variable_rate)
    # and visibly different from it
    difference = np.abs(luma(out, "64x48") - luma(variable_rate, "64x48")).mean()
    assert difference > 2.0


def test_bad_requests_are_refused(tmp_path, variable_rate):
    with pytest.raises(ValueError, match="unknown kind 'smear'"):
        degrade(source=variable_rate, out=tmp_path / "x.mp4", kind="smear")
    with pytest.raises(ValueError, match=r"blur strength must be in \[0.1, 100\]"):
        degrade(source=variable_rate, out=tmp_path / "x.mp4", kind="blur", strength=500)
    (tmp_path / "notes.mp4").write_text("not a video")
    with pytest.raises(MediaError):
        degrade(source=tmp_path / "notes.mp4", out=tmp_path / "x.mp4")
    assert not (tmp_path / "x.mp4").exists()


@pytest.mark.parametrize("how", ["same name", "symlink", "hard link", "dotted path"])
def test_an_out_that_is_the_source_is_refused_and_the_source_kept(tmp_path, variable_rate, how):
    # before: by name, ffmpeg refused and the clean-up deleted the source; through a
    # link, the source was overwritten by its blurred copy and the run said ok
    before = variable_rate.read_bytes()
    out = {
        "same name": variable_rate,
        "symlink": tmp_path / "link.mp4",
        "hard link": tmp_path / "hard.mp4",
        "dotted path": tmp_path / "sub" / ".." / variable_rate.name,
    }[how]
    if how == "symlink":
        out.symlink_to(variable_rate)
    elif how == "hard link":
        out.hardlink_to(variable_rate)
    elif how == "dotted path":
        (tmp_path / "sub").mkdir()
    with pytest.raises(ValueError, match="is the source video itself"):
        degrade(source=variable_rate, out=out)
    assert variable_rate.read_bytes() == before


def test_a_failed_run_leaves_an_earlier_file_at_out_and_no_part_file(
    tmp_path, variable_rate, monkeypatch
):
    # given: a file already at --out, and ffmpeg failing once it has written part of the
    # copy (before, the clean-up removed whatever was at --out, an earlier file too)
    out = tmp_path / "copy.mp4"
    out.write_bytes(b"an earlier copy")

    def fails(command, **kwargs):
        (part,) = [arg for arg in command if ".part" in arg]  # the copy being written
        assert Path(part).parent == tmp_path
        Path(part).write_bytes(b"half a copy")
        raise TranscodeFailed("transcode failed: ffmpeg exited with code 1: boom")

    monkeypatch.setattr("media_pipeline.ffmpeg.degrade.run_ffmpeg", fails)
    # when
    with pytest.raises(MediaError, match="could not degrade vfr.mp4: .*boom"):
        degrade(source=variable_rate, out=out)
    # then
    assert out.read_bytes() == b"an earlier copy"
    assert [p.name for p in tmp_path.iterdir() if ".part" in p.name] == []


def test_the_cli_says_why_an_out_cannot_be_written(tmp_path, variable_rate):
    import subprocess as sp
    import sys

    (tmp_path / "a_file").write_text("x")
    result = sp.run(
        [sys.executable, "-m", "media_pipeline", "degrade", str(variable_rate), "--out",
         str(tmp_path / "a_file" / "x.mp4")],
        capture_output=True, text=True, timeout=60, cwd=Path(__file__).resolve().parents[2],
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: cannot write ") and "Traceback" not in result.stderr
