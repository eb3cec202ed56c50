"""Probing a file by its content, never by its name, in-process with PyAV.

PyAV makes the libavformat calls ffprobe makes (open, find stream info, read packets)
and reports the same fields, without the ~80 ms an ffprobe process takes to start for
each video: that start was most of the pipeline's overhead over a plain ffmpeg run
(bench/transcode.py). libav's warnings are captured while the file is read, because they
are what gives a truncated WebM away ("File ended prematurely"). PyAV brings its own,
newer libav; a file it reads that Debian's ffmpeg then cannot still fails, in the
transcode, with ffmpeg's own message. The read itself is media_pipeline.ffmpeg.demux's;
this module judges it.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from fractions import Fraction
from pathlib import Path

from media_pipeline.ffmpeg.demux import (
    IMAGE_FORMATS,
    TEXT_FORMATS,
    read_file,
    too_large,
)
from media_pipeline.ffmpeg.errors import CorruptVideo, NotAVideo, TooLarge

# libav warnings that mean the bytes stop before the container says they should.
TRUNCATION_MARKERS = ("File ended prematurely", "partial file", "truncated", "moov atom not found")
TOO_LARGE_REASON = (
    "more than any browser plays (H.264: at most 8192x4320 or as many pixels, 16880 a side)"
)


@dataclass(frozen=True)
class ProbeResult:
    """What a video file really holds.

    `width` and `height` are the size the viewer sees, i.e. after the container's rotation
    (a phone video stored 1920x1080 with a 90 degree display matrix is 1080x1920 here)
    and in square pixels: a source whose pixels are not square (`sar`, the sample aspect
    ratio, not 1:1: a 720x576 PAL DV file with 64:45 pixels) has its stored width times
    `sar`, to the nearest even number (1024x576 here), as a player shows it;
    `coded_width`/`coded_height` are the size stored in the bitstream. `frames` is the
    number of frames a player shows (an MP4 edit list can hide packets its index counts;
    in a file cut mid-GOP, as MPEG-TS recordings are, the frames before the first keyframe
    refer to frames cut away and never show).
    `fps` is the average frame rate as a float, `fps_exact` the same rate as an exact
    rational ("30000/1001"): the container's declared rate, unless the frames are unevenly
    spaced and it disagrees with their own average (intervals over the first-to-last span;
    Matroska and GIF declare a rate libav guesses from the first few frames). `is_vfr`:
    the frames' intervals differ by more than their timestamps' rounding, as in GIFs with
    uneven delays or VFR recordings (when the packets were not all read, a guess: that
    rate and libav's "real base rate", r_frame_rate, disagree).
    `frame_span` is the time from the first shown frame to the last, in seconds, from the
    packets' own timestamps (None where the packets were not all read or carry none).
    `duration` is the video's: its stream's, where the container states none (Matroska,
    WebM) the frames' own end (`frame_span` plus an interval) or the container's if
    shorter, never an audio track's that runs on after the video.
    `time_base` is the unit of the stream's timestamps ("1/1000" in Matroska).
    `video_start` is where the video's first frame that shows lies on the clock ffmpeg
    reads the file by, in seconds: from the file's start (its earliest stream's first
    timestamp, which ffmpeg makes 0) to that frame. 0 in most MP4s; MPEG-TS video often
    starts a few ms after its audio, a track muxed with a delay seconds after it, and a
    file cut mid-GOP at its first keyframe (`duration` is then counted from there).
    `field_order` ("progressive"; "tt", "bb", "tb", "bt" for interlaced fields; "unknown")
    and the colour fields (`color_transfer`: "smpte2084" is HDR's PQ, "arib-std-b67" its
    HLG; "" where the file states none) are ffprobe's, see media_pipeline.ffmpeg.display.
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
    frame_span: float | None = None
    time_base: str = ""
    sar: str = "1/1"
    field_order: str = "unknown"
    color_transfer: str = ""
    color_primaries: str = ""
    color_matrix: str = ""
    color_range: str = ""
    video_start: float = 0.0

    @property
    def fps_fraction(self) -> Fraction:
        return Fraction(self.fps_exact)

    def as_dict(self) -> dict:
        return asdict(self)


def display_width(coded_width: int, sar: Fraction) -> int:
    """The stored width shown in square pixels: times the sample aspect ratio, to the
    nearest even number (4:2:0 needs one; halfway rounds up); the height stays as stored,
    as ffmpeg's `scale=iw*sar:ih` keeps it. A ratio that moves the width by less than a
    pixel is square: ffmpeg's scale leaves one such on a frame it scaled to an odd size
    (32895:32896 on 257x255), and resampling for it would only blur the frame."""
    if abs(coded_width * sar - coded_width) < 1:
        return coded_width
    return max(2, int((coded_width * sar + 1) // 2) * 2)


def sha256_file(path: Path | str, *, chunk_size: int = 1 << 20) -> str:
    """SHA-256 of a file's bytes, read in 1 MiB chunks so a large video never sits in memory."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(chunk_size):
            digest.update(chunk)
    return digest.hexdigest()


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


def _is_animated_webp(path: Path) -> bool:
    """Whether a WebP file says it is animated: the animation flag (0x02) of its extended
    header, the VP8X chunk (Google's WebP container specification)."""
    with open(path, "rb") as handle:
        head = handle.read(21)
    return (
        len(head) == 21
        and head[:4] == b"RIFF"
        and head[8:16] == b"WEBPVP8X"
        and bool(head[20] & 0x02)
    )


def probe(path: Path | str, *, count_packets: bool = True) -> ProbeResult:
    """Probe `path` by content; raise `NotAVideo`, `CorruptVideo` or `TooLarge` (frames
    larger than H.264 allows, refused before any is decoded) with an admin's message.

    The frame count is the container's (`nb_frames`) when it states one, else the number of
    video packets counted by demuxing (no decoding past the first frame, so fast). A file
    whose packets stop before the count its index promises, or whose demuxer warns that it
    ended early, is reported as truncated. `count_packets=False` trusts the container alone
    (for files whose index is known complete).
    """
    path = Path(path)
    name = path.name
    if not path.exists():
        raise NotAVideo(f"not a video: {name} does not exist")
    if not path.is_file():  # a folder, a device, a pipe (which would block the read)
        raise NotAVideo(f"not a video: {name} is not a regular file")
    if path.stat().st_size == 0:
        raise NotAVideo(f"not a video: {name} is empty (0 bytes)")
    read, warnings = read_file(path, count_packets=count_packets)
    if read.error is not None:
        kind = _container_from_magic(path)
        if kind:
            raise CorruptVideo(
                f"corrupt video: {name} has a {kind} header but cannot be read, "
                f"probably truncated or damaged ({read.error})"
            )
        raise NotAVideo(f"not a video: {name} is not a media file ffmpeg can read ({read.error})")
    container = read.container
    if container == "webp_pipe" and _is_animated_webp(path):
        raise NotAVideo(
            f"not a video: {name} is an animated WebP, which ffmpeg cannot decode (its "
            "WebP decoder reads still pictures only); export it as MP4, WebM or GIF"
        )
    if container in IMAGE_FORMATS:
        raise NotAVideo(f"not a video: {name} is a still image ({container}), not a video")
    if container in TEXT_FORMATS:
        raise NotAVideo(f"not a video: {name} is text ({container}), not a video")
    if read.too_large is not None:
        width, height = read.too_large
        raise TooLarge(f"video too large: {name} is {width}x{height} pixels, {TOO_LARGE_REASON}")
    stream = read.video
    if stream is None:
        raise NotAVideo(
            f"not a video: no video stream found in {name} (container: {container or 'unknown'})"
        )
    if any(marker in warning for warning in warnings for marker in TRUNCATION_MARKERS):
        raise CorruptVideo(f"corrupt video: {name} is truncated ({warnings[-1]})")
    if stream.read_error:
        raise CorruptVideo(f"corrupt video: {name} cannot be read to its end ({stream.read_error})")
    if stream.decode_error:
        raise CorruptVideo(
            f"corrupt video: the first frame of {name} cannot be decoded ({stream.decode_error})"
        )

    listed, counted = stream.nb_frames, stream.nb_read_packets
    if count_packets and listed and counted < listed:
        raise CorruptVideo(
            f"corrupt video: {name} is truncated: its index lists {listed} frames "
            f"but only {counted} are present"
        )
    # An edit list (a stream-copied trim) hides packets that nb_frames still counts; the
    # decoder drops the frames of packets marked discard, so the shown ones are what plays.
    frames = stream.nb_shown_packets if count_packets and counted else listed or counted
    avg, real = stream.avg_frame_rate, stream.r_frame_rate
    duration = stream.duration or 0.0
    fps = _average_rate(
        declared=avg or real,
        frames=frames,
        frame_span=stream.frame_span,
        uneven=stream.uneven_intervals,
    )
    if stream.container_duration and stream.frame_span is not None and fps:
        # Matroska and WebM state no stream's duration, and the container's covers an
        # audio track that runs on after the video (or whatever a header claims): the
        # video ends one frame interval after its last frame, if not before.
        frames_end = stream.frame_span + float(1 / fps)
        duration = min(duration, frames_end) if duration else frames_end
    if not frames and fps and duration:
        frames = round(float(fps) * duration)
    coded_width, coded_height = stream.width, stream.height
    rotation = stream.rotation
    if frames <= 0 or coded_width <= 0 or coded_height <= 0 or rotation is None:
        raise CorruptVideo(f"corrupt video: {name} has a video stream without readable frames")
    shown_width = display_width(coded_width, stream.sar)
    width, height = (
        (coded_height, shown_width) if rotation in (90, 270) else (shown_width, coded_height)
    )
    if too_large(width, height):  # only where the pixels are wider than they are high
        raise TooLarge(
            f"video too large: {name} is {width}x{height} pixels as shown (stored "
            f"{coded_width}x{coded_height}, its pixels {stream.sar.numerator}:"
            f"{stream.sar.denominator} wide), {TOO_LARGE_REASON}"
        )
    return ProbeResult(
        container=container,
        codec=stream.codec_name,
        width=width,
        height=height,
        fps=round(float(fps), 6),
        fps_exact=f"{fps.numerator}/{fps.denominator}",
        frames=frames,
        duration=round(duration, 6),
        has_audio=read.has_audio,
        pix_fmt=stream.pix_fmt,
        is_vfr=stream.uneven_intervals
        if stream.uneven_intervals is not None
        else bool(fps and real and abs(float(fps) - float(real)) > 0.01 * float(real)),
        rotation=rotation,
        coded_width=coded_width,
        coded_height=coded_height,
        frame_span=None if stream.frame_span is None else round(stream.frame_span, 6),
        time_base=f"{stream.time_base.numerator}/{stream.time_base.denominator}"
        if stream.time_base
        else "",
        sar=f"{stream.sar.numerator}/{stream.sar.denominator}",
        field_order=stream.field_order,
        color_transfer=stream.color_transfer,
        color_primaries=stream.color_primaries,
        color_matrix=stream.color_matrix,
        color_range=stream.color_range,
        video_start=round(stream.start, 6),
    )


def _average_rate(
    *, declared: Fraction, frames: int, frame_span: float | None, uneven: bool | None
) -> Fraction:
    """The frame rate: the container's declared one for evenly spaced frames; for unevenly
    spaced ones (variable frame rate), the declared one where it agrees with the frames'
    own timestamps (frames - 1 intervals over the first-to-last span, within 0.5 %: far
    below any confusion of real rates, 24 vs 25 fps is 4 %), else that measured rate.
    libav's average rate of a Matroska or GIF stream is a guess from its first few frames,
    wrong for a variable rate (a VFR WebM "declares" 30 fps). The container's duration is
    no measure: it covers an audio track that runs on after the video."""
    if uneven is False and declared:
        return declared
    if frames < 2 or not frame_span:
        return declared
    measured = Fraction(frames - 1) / Fraction(frame_span)
    if declared and abs(declared / measured - 1) <= Fraction(1, 200):
        return declared
    return measured.limit_denominator(1001)
