"""Small real videos for tests that import files: imports probe every file as uploads
do, so a test's "video" must be one. Each carries its tag in an mp4 `free` box (a box
readers skip), so that files with different tags have different checksums. And
`h264_clip`, a clip of a given shape made by ffmpeg's own filters (pixel aspect, fields,
colour tags)."""

from __future__ import annotations

import functools
import struct
import subprocess
import tempfile
from pathlib import Path


@functools.cache
def _clip() -> bytes:
    """A 16 x 16, 2-frame H.264 mp4, made once per test run."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "clip.mp4"
        subprocess.run(
            ["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi",
             "-i", "testsrc2=size=16x16:rate=10", "-frames:v", "2", "-pix_fmt", "yuv420p",
             "-c:v", "libx264", "-movflags", "+faststart", str(path)],
            check=True,
        )  # fmt: skip
        return path.read_bytes()


def video_bytes(tag: str) -> bytes:
    """The clip with ``tag`` in a trailing `free` box: a valid mp4 of its own checksum."""
    payload = tag.encode()
    return _clip() + struct.pack(">I", 8 + len(payload)) + b"free" + payload


def write_video(path: Path, tag: str | None = None) -> Path:
    """A real video at ``path``, unique to ``tag`` (default: the path)."""
    path.write_bytes(video_bytes(tag if tag is not None else str(path)))
    return path


def h264_clip(
    path: Path,
    *,
    size: str,
    frames: int,
    filters: str,
    rate: int = 10,
    pattern: str = "testsrc2",
    pix_fmt: str = "yuv420p",
    options: tuple[str, ...] = (),
) -> Path:
    """`frames` frames of a lavfi `pattern` at `size`, through `filters`, in H.264 with
    the encoder's `options`."""
    lavfi = f"{pattern}{':' if '=' in pattern else '='}size={size}:rate={rate}"
    subprocess.run(
        ["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", lavfi,
         "-frames:v", str(frames), "-vf", filters, "-c:v", "libx264", "-preset", "ultrafast",
         "-pix_fmt", pix_fmt, *options, str(path)],
        check=True,
    )  # fmt: skip
    return path
