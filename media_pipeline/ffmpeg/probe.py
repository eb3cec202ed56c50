"""Probing a file by its content with Debian's ffprobe, never by its name.

ffmpeg-python's own `ffmpeg.probe` throws ffprobe's warnings away when it succeeds, and the
warnings are what give a truncated WebM away ("File ended prematurely"), so ffprobe is run
here directly with the same arguments ffmpeg-python would pass, plus `-count_packets`.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from dataclasses import asdict, dataclass
from fractions import Fraction
from pathlib import Path

from media_pipeline.ffmpeg.errors import CorruptVideo, NotAVideo

FFPROBE = "ffprobe"
# Demuxers of still pictures: ffprobe reports a "video" stream for a PNG or a JPEG too.
IMAGE_FORMATS = {
    "image2",
    "png_pipe",
    "jpeg_pipe",
    "webp_pipe",
    "bmp_pipe",
    "tiff_pipe",
    "gif_pipe",
    "svg_pipe",
    "jpegxl_pipe",
    "qoi_pipe",
}
# ffprobe warnings that mean the bytes stop before the container says they should.
TRUNCATION_MARKERS = ("File ended prematurely", "partial file", "truncated", "moov atom not found")


@dataclass(frozen=True)
class ProbeResult:
    """What a video file really holds.

    `width` and `height` are the size the viewer sees, i.e. after the container's rotation
    (a phone video stored 1920x1080 with a 90 degree display matrix is 1080x1920 here);
    `coded_width`/`coded_height` are the size stored in the bitstream. `fps` is the average
    frame rate (frames / duration) as a float, `fps_exact` the same rate as ffprobe's exact
    rational ("30000/1001"). `is_vfr` is a guess: ffprobe's average rate and its "real base
    rate" (the smallest rate that represents every timestamp) disagree when frame durations
    vary, as in GIFs with uneven delays or VFR screen recordings.
    """

    container: str
    codec: str
    width: int
    height: int
    fps: float
    fps_exact: str
    frames: int
    duration: float
    has_audio: bool
    pix_fmt: str
    is_vfr: bool
    rotation: int
    coded_width: int
    coded_height: int

    @property
    def fps_fraction(self) -> Fraction:
        return Fraction(self.fps_exact)

    def as_dict(self) -> dict:
        return asdict(self)


def sha256_file(path: Path | str, *, chunk_size: int = 1 << 20) -> str:
    """SHA-256 of a file's bytes, read in 1 MiB chunks so a large video never sits in memory."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(chunk_size):
            digest.update(chunk)
    return digest.hexdigest()


def _rate(text: str | None) -> Fraction:
    try:
        return Fraction(text or "0/1")
    except (ValueError, ZeroDivisionError):  # ffprobe writes "0/0" for "unknown"
        return Fraction(0)


def _container_from_magic(path: Path) -> str | None:
    """The video container a file's first bytes announce, if any (for the error message)."""
    with open(path, "rb") as handle:
        head = handle.read(16)
    if head[4:8] in (b"ftyp", b"moov", b"mdat", b"wide", b"free", b"skip"):
        return "MP4/MOV"
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        return "WebM/Matroska"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "GIF"
    if head.startswith(b"RIFF") and head[8:12] == b"AVI ":
        return "AVI"
    return None


def _last_line(text: str, path: Path) -> str:
    """ffprobe's last message without its "[demuxer @ 0x...]" or "/full/path: " prefix."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return "no message from ffprobe"
    line = re.sub(r"^\[[^\]]* @ 0x[0-9a-f]+\]\s*", "", lines[-1])
    return line.removeprefix(f"{path}: ")


def _rotation(stream: dict) -> int:
    for side in stream.get("side_data_list", []):
        if "rotation" in side:
            return int(round(float(side["rotation"]))) % 360
    rotate = stream.get("tags", {}).get("rotate")  # older muxers wrote a tag instead
    return int(rotate) % 360 if rotate and rotate.lstrip("-").isdigit() else 0


def _run_ffprobe(path: Path, *, count_packets: bool) -> tuple[dict | None, str]:
    args = [FFPROBE, "-v", "warning", "-show_format", "-show_streams", "-of", "json"]
    if count_packets:
        args.append("-count_packets")
    completed = subprocess.run([*args, str(path)], capture_output=True, check=False)
    stderr = completed.stderr.decode("utf-8", "replace")
    if completed.returncode != 0:
        return None, stderr
    return json.loads(completed.stdout.decode("utf-8", "replace")), stderr


def probe(path: Path | str, *, count_packets: bool = True) -> ProbeResult:
    """Probe `path` by content; raise `NotAVideo` or `CorruptVideo` with an admin's message.

    The frame count is the container's (`nb_frames`) when it states one, else the number of
    video packets counted by demuxing (`-count_packets`: no decoding, so fast). A file whose
    packets stop before the count its index promises, or whose demuxer warns that it ended
    early, is reported as truncated. `count_packets=False` trusts the container alone (used
    to re-probe our own renditions, whose MP4 index is complete).
    """
    path = Path(path)
    name = path.name
    if not path.is_file():
        raise NotAVideo(f"not a video: {name} does not exist")
    if path.stat().st_size == 0:
        raise NotAVideo(f"not a video: {name} is empty (0 bytes)")
    info, warnings = _run_ffprobe(path, count_packets=count_packets)
    if info is None:
        kind = _container_from_magic(path)
        if kind:
            raise CorruptVideo(
                f"corrupt video: {name} has a {kind} header but cannot be read, "
                f"probably truncated or damaged ({_last_line(warnings, path)})"
            )
        reason = _last_line(warnings, path)
        raise NotAVideo(f"not a video: {name} is not a media file ffmpeg can read ({reason})")
    container = info.get("format", {}).get("format_name", "")
    streams = info.get("streams", [])
    video = [
        s
        for s in streams
        if s.get("codec_type") == "video" and not s.get("disposition", {}).get("attached_pic")
    ]
    if container in IMAGE_FORMATS:
        raise NotAVideo(f"not a video: {name} is a still image ({container}), not a video")
    if not video:
        raise NotAVideo(
            f"not a video: no video stream found in {name} (container: {container or 'unknown'})"
        )
    stream = video[0]
    if any(marker in warnings for marker in TRUNCATION_MARKERS):
        raise CorruptVideo(f"corrupt video: {name} is truncated ({_last_line(warnings, path)})")

    listed = int(stream.get("nb_frames") or 0)
    counted = int(stream.get("nb_read_packets") or 0)
    if count_packets and listed and counted < listed:
        raise CorruptVideo(
            f"corrupt video: {name} is truncated: its index lists {listed} frames "
            f"but only {counted} are present"
        )
    frames = listed or counted
    avg, real = _rate(stream.get("avg_frame_rate")), _rate(stream.get("r_frame_rate"))
    duration = float(stream.get("duration") or info.get("format", {}).get("duration") or 0)
    fps = avg or real
    if not fps and frames and duration:
        fps = Fraction(frames / duration).limit_denominator(1001)
    if not frames and fps and duration:
        frames = round(float(fps) * duration)
    coded_width, coded_height = int(stream.get("width") or 0), int(stream.get("height") or 0)
    if frames <= 0 or coded_width <= 0 or coded_height <= 0:
        raise CorruptVideo(f"corrupt video: {name} has a video stream without readable frames")
    rotation = _rotation(stream)
    width, height = (
        (coded_height, coded_width) if rotation in (90, 270) else (coded_width, coded_height)
    )
    return ProbeResult(
        container=container,
        codec=stream.get("codec_name", ""),
        width=width,
        height=height,
        fps=round(float(fps), 6),
        fps_exact=f"{fps.numerator}/{fps.denominator}",
        frames=frames,
        duration=round(duration, 6),
        has_audio=any(s.get("codec_type") == "audio" for s in streams),
        pix_fmt=stream.get("pix_fmt", ""),
        is_vfr=bool(avg and real and abs(float(avg) - float(real)) > 0.01 * float(real)),
        rotation=rotation,
        coded_width=coded_width,
        coded_height=coded_height,
    )
