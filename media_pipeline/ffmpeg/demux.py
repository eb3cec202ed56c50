"""One pass over a video file with PyAV: the fields ffprobe reports of its first real
video stream (not cover art), its packets counted if asked, its first frame decoded (the
display rotation shows only there), and what libav logged meanwhile. Nothing is judged
here: media_pipeline.ffmpeg.probe decides what the read means (NotAVideo, CorruptVideo,
TooLarge) and reports it as a ProbeResult.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from media_pipeline.ffmpeg.display import FIELD_ORDERS, MATRICES, PRIMARIES, RANGES, TRANSFERS

if TYPE_CHECKING:
    from pathlib import Path

    from av.container import InputContainer
    from av.video.stream import VideoStream

# Demuxers of still pictures: libav reports a "video" stream for a PNG or a JPEG too.
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
# Demuxers of text art (ANSI, BinText, XBin): libav "plays" any .ans, .nfo or .bin file.
TEXT_FORMATS = {"tty", "bin", "adf", "idf", "xbin"}
# H.264 level 6.2, the highest: a frame of at most 139264 macroblocks of 16x16 (8192x4320
# is 138240), neither side over sqrt(8 * 139264) = 1055 of them (16880 pixels). A larger
# frame has no rendition a browser plays; a few KB can declare one (a PNG-in-MOV of
# 16000x16000 is 32 KB), so it is refused before a frame is decoded.
MAX_FRAME_MACROBLOCKS = 139264
MAX_SIDE_MACROBLOCKS = 1055
# PyAV's log settings are global to the process: one probe at a time changes them.
_LOG_LOCK = threading.Lock()


def libav_path(path: Path | str) -> str:
    """`path` as libav and the ffmpeg command line must be given it: absolute. libav reads
    a relative name with a colon as a protocol ("concat:a.mp4|b.mp4" reads other files,
    "x:y.mp4" fails as an unknown protocol), ffmpeg one that starts with a dash as an
    option ("-out/r.mp4"); an absolute path is always a local file."""
    return os.path.abspath(path)


def too_large(width: int, height: int) -> bool:
    mb_width, mb_height = -(-width // 16), -(-height // 16)
    return (
        mb_width * mb_height > MAX_FRAME_MACROBLOCKS
        or max(mb_width, mb_height) > MAX_SIDE_MACROBLOCKS
    )


@contextlib.contextmanager
def _libav_log() -> Iterator[list[str]]:
    """Collect what libav logs in this thread at warning level or above, as ffprobe's stderr.

    PyAV drops libav's log by default and skips a message equal to the previous one (a
    second probe of the same broken file would then miss its warning); both settings are
    changed for the read and restored after it. The list is filled when the block ends.
    """
    import av.logging

    messages: list[str] = []
    with _LOG_LOCK:
        level, skip_repeated = av.logging.get_level(), av.logging.get_skip_repeated()
        av.logging.set_level(av.logging.WARNING)
        av.logging.set_skip_repeated(False)
        try:
            with av.logging.Capture() as logs:
                yield messages
        finally:
            av.logging.set_skip_repeated(skip_repeated)
            av.logging.set_level(level)
    messages.extend(text for _, _, message in logs if (text := message.strip()))


@dataclass
class VideoRead:
    """The first real video stream's fields, named as ffprobe names them."""

    codec_name: str
    width: int
    height: int
    pix_fmt: str
    nb_frames: int  # what the container's index states, 0 when it states nothing
    avg_frame_rate: Fraction
    r_frame_rate: Fraction
    duration: float | None  # the stream's, else the container's
    container_duration: bool  # whether `duration` is the container's (no stream's stated)
    time_base: Fraction | None
    sar: Fraction  # 1 where the file states none (0:1)
    start: float  # the video's first frame from the file's start (see ProbeResult)
    field_order: str = "unknown"
    color_transfer: str = ""  # "" where the file states none
    color_primaries: str = ""
    color_matrix: str = ""
    color_range: str = ""
    nb_read_packets: int = 0
    # Packets a decoder turns into frames: an MP4 edit list marks those it hides "discard".
    nb_shown_packets: int = 0
    frame_span: float | None = None  # first to last shown frame, when every packet was read
    # Whether frame intervals differ by more than the time base's rounding (one tick);
    # None when not every packet was read.
    uneven_intervals: bool | None = None
    rotation: int | None = None  # None: no frame could be decoded
    read_error: str | None = None
    decode_error: str | None = None


@dataclass
class FileRead:
    """What one pass over the file gave, before it is judged."""

    error: str | None = None  # libav could not open the file at all
    container: str = ""
    too_large: tuple[int, int] | None = None  # the declared size, not read further
    has_audio: bool = False
    video: VideoRead | None = None


def _error_text(exc: Exception) -> str:
    return str(getattr(exc, "strerror", None) or exc)


def _video_start(container: InputContainer, stream: VideoStream, first_pts: int | None) -> float:
    """Seconds from the file's start to the video's first frame that decodes (`first_pts`,
    else the stream's first timestamp); 0 where they are unknown. ffmpeg reads a file
    with its earliest stream's first timestamp as 0, so this is where the video starts
    in the rendition's timeline before it is moved to 0."""
    import av

    pts = first_pts if first_pts is not None else stream.start_time
    if pts is None or not stream.time_base or container.start_time is None:
        return 0.0
    return max(float(pts * stream.time_base) - container.start_time / av.time_base, 0.0)


def _read_video(
    container: InputContainer, stream: VideoStream, *, count_packets: bool
) -> VideoRead:
    """Read the stream's fields; count its packets if asked; decode its first frame.

    The display rotation is read from the first decoded frame, the only place PyAV shows
    the container's display matrix; without counting, demuxing stops right after it.
    """
    import av

    codec = stream.codec_context
    duration = None
    if stream.duration is not None and stream.time_base:
        duration = float(stream.duration * stream.time_base)
    elif container.duration:
        duration = container.duration / av.time_base
    video = VideoRead(
        codec_name=codec.codec.canonical_name,
        width=codec.width,
        height=codec.height,
        pix_fmt=codec.pix_fmt or "",
        nb_frames=stream.frames,
        avg_frame_rate=stream.average_rate or Fraction(0),
        r_frame_rate=stream.base_rate or Fraction(0),
        duration=duration,
        container_duration=stream.duration is None or not stream.time_base,
        time_base=stream.time_base,
        start=0.0,  # known once the first frame is decoded
        # The container's ratio where it states one, else the bitstream's: the rule the
        # ffmpeg command line follows (av_guess_sample_aspect_ratio).
        sar=stream.sample_aspect_ratio or Fraction(1),
        field_order=FIELD_ORDERS.get(codec.field_order, "unknown"),
        color_transfer=TRANSFERS.get(codec.color_trc, ""),
        color_primaries=PRIMARIES.get(codec.color_primaries, ""),
        color_matrix=MATRICES.get(codec.colorspace, ""),
        color_range=RANGES.get(codec.color_range, ""),
    )

    def decode(packet: av.Packet | None) -> None:
        try:
            frames = stream.decode(packet)
        except av.error.FFmpegError as exc:
            video.decode_error = _error_text(exc)
        else:
            if frames:
                video.rotation = int(round(frames[0].rotation)) % 360
                first_pts.append(frames[0].pts)

    def first_frame_done() -> bool:
        return video.rotation is not None or video.decode_error is not None

    shown_pts: list[int | None] = []
    first_pts: list[int | None] = []  # the first decoded frame's
    try:
        for packet in container.demux(stream):
            if packet.size == 0:  # PyAV's end-of-stream marker, not a packet of the file
                continue
            video.nb_read_packets += 1
            if not packet.is_discard:
                shown_pts.append(packet.pts)
            if not first_frame_done():
                decode(packet)
            elif not count_packets:
                break
    except av.error.FFmpegError as exc:
        video.read_error = _error_text(exc)
    if not first_frame_done():
        decode(None)  # a decoder with delay (B-frames, threads) may hold the first frame
    start = first_pts[0] if first_pts else None
    video.start = _video_start(container, stream, start)
    if start is not None and None not in shown_pts:
        # A file cut mid-GOP (an MPEG-TS recording) begins with frames that refer to
        # frames before the cut: no decoder shows them, the video begins at its first
        # keyframe (open GOPs' leading B-frames before it are dropped likewise).
        shown_pts = [pts for pts in shown_pts if pts >= start]
        skipped = start - stream.start_time if stream.start_time is not None else 0
        if skipped > 0 and video.duration and not video.container_duration:
            video.duration = max(video.duration - float(skipped * stream.time_base), 0.0)
    video.nb_shown_packets = len(shown_pts)
    if count_packets and shown_pts and None not in shown_pts and video.time_base:
        shown_pts.sort()
        video.frame_span = float((shown_pts[-1] - shown_pts[0]) * video.time_base)
        intervals = [b - a for a, b in zip(shown_pts, shown_pts[1:], strict=False)]
        video.uneven_intervals = bool(intervals) and max(intervals) - min(intervals) > 1
    return video


def read_file(path: Path, *, count_packets: bool) -> tuple[FileRead, list[str]]:
    """One pass over the file, with what libav logged during it."""
    import av

    read = FileRead()
    with _libav_log() as messages:
        try:
            # Tags are never shown to anyone: a badly encoded one must not fail the probe.
            container = av.open(libav_path(path), metadata_errors="replace")
        except av.error.FFmpegError as exc:
            read.error = _error_text(exc)
        else:
            with container:
                read.container = container.format.name
                read.has_audio = bool(container.streams.audio)
                video = [
                    s
                    for s in container.streams.video
                    if not s.disposition & av.stream.Disposition.attached_pic
                ]
                if video and read.container not in IMAGE_FORMATS | TEXT_FORMATS:
                    codec = video[0].codec_context
                    if too_large(codec.width, codec.height):
                        read.too_large = (codec.width, codec.height)
                    else:
                        read.video = _read_video(container, video[0], count_packets=count_packets)
    return read, messages
