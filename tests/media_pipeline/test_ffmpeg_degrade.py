"""`degrade`: a visibly worse copy of a video with the source's size, frames and times."""

import subprocess

import numpy as np
import pytest

from media_pipeline.ffmpeg.degrade import degrade
from media_pipeline.ffmpeg.errors import MediaError


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
