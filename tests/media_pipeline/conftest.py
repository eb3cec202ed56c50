"""Tiny clips in GAIA's range of shapes, made once per test session with real ffmpeg."""

import subprocess
from pathlib import Path

import pytest

from media_pipeline.ffmpeg.synth import make_clip

# (name, width, height, fps, seconds, vfr): 256x256 up to 1088x640, odd sizes, 4 to 50 fps,
# VFR, GIF, WebM and MOV; kept to a few dozen frames each.
CLIPS = [
    ("square.mp4", 256, 256, 8, 1.0, False),
    ("odd.mp4", 257, 255, 12, 1.0, False),
    ("wide.mp4", 1088, 640, 24, 0.25, False),
    ("slow.mp4", 160, 120, 4, 2.0, False),
    ("fast.mp4", 160, 120, 50, 1.0, False),
    ("vfr.mp4", 160, 120, 30, 1.0, True),
    ("anim.gif", 97, 72, 10, 1.0, False),
    ("clip.webm", 160, 120, 25, 1.0, False),
    ("clip.mov", 160, 120, 25, 1.0, False),
]


def ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", *args], check=True)


@pytest.fixture(scope="session")
def clips(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("clips")
    made = {}
    for name, width, height, fps, seconds, vfr in CLIPS:
        clip = make_clip(
            path=folder / name,
            width=width,
            height=height,
            fps=fps,
            seconds=seconds,
            vfr=vfr,
            text="test",
        )
        made[name] = clip.path
    return made


@pytest.fixture(scope="session")
def extra_clips(tmp_path_factory) -> dict[str, Path]:
    """Clips for single behaviours: sound, rotation, metadata, moov-first layout."""
    folder = tmp_path_factory.mktemp("extra")
    audio = make_clip(
        path=folder / "audio.mp4", width=128, height=96, fps=10, seconds=1.0, audio=True
    ).path
    plain = make_clip(path=folder / "plain.mp4", width=160, height=96, fps=10, seconds=1.0).path
    rotated = folder / "rotated.mp4"
    # A phone-style file: stored 160x96, displayed turned by 90 degrees (96x160).
    ffmpeg("-i", str(plain), "-c", "copy", "-metadata:s:v:0", "rotate=90", str(rotated))
    tagged = folder / "tagged.mp4"
    ffmpeg("-i", str(plain), "-c", "copy", "-metadata", "title=made by model-x", str(tagged))
    faststart = folder / "faststart.mp4"
    ffmpeg("-i", str(plain), "-c", "copy", "-movflags", "+faststart", str(faststart))
    return {
        "audio": audio,
        "plain": plain,
        "rotated": rotated,
        "tagged": tagged,
        "faststart": faststart,
    }


@pytest.fixture(scope="session")
def bad_files(tmp_path_factory, clips, extra_clips) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("bad")
    files = {}

    def write(name: str, data: bytes) -> None:
        files[name] = folder / name
        files[name].write_bytes(data)

    square = clips["square.mp4"].read_bytes()  # moov at the end: cut, it has no index
    write("truncated.mp4", square[: len(square) // 3])
    moov_first = extra_clips["faststart"].read_bytes()  # index intact, frames missing
    write("cut_faststart.mp4", moov_first[: len(moov_first) // 2])
    webm = clips["clip.webm"].read_bytes()
    write("cut.webm", webm[: len(webm) // 2])
    write("empty.mp4", b"")
    write("notes.mp4", b"these are my notes, not a video\n")
    still = folder / "still.mp4"  # a PNG picture under a video's name
    ffmpeg(
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=64x48",
        "-frames:v",
        "1",
        "-f",
        "image2",
        "-c:v",
        "png",
        str(still),
    )
    files["still.mp4"] = still
    tone = folder / "tone.mp4"  # sound only
    ffmpeg("-f", "lavfi", "-i", "sine=duration=0.5", "-c:a", "aac", str(tone))
    files["tone.mp4"] = tone
    # Keys the job tests (test_jobs.py) use.
    files["truncated"], files["empty"], files["text"] = (
        files["truncated.mp4"],
        files["empty.mp4"],
        files["notes.mp4"],
    )
    return files
