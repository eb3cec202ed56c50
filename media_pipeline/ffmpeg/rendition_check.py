"""Reading a finished rendition back and holding it to its source (transcode renames
it into place only when this passes): its size as shown in square pixels (plus the
padding), H.264 yuv420p, the frames, the time from the first frame to the last, and the
first frame at 0. A segment's rendition is held to the frames the source shows in it."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from pathlib import Path

from media_pipeline.ffmpeg.demux import libav_path
from media_pipeline.ffmpeg.errors import TranscodeFailed
from media_pipeline.ffmpeg.probe import ProbeResult
from media_pipeline.ffmpeg.timeline import Segment
from media_pipeline.ffmpeg.work import segment_frames

# The rendition keeps the source's time base, so its frame times are the source's
# exactly; 1 ms allows for a rounding while staying far below any frame interval (4 ms at
# 240 fps).
SPAN_TOLERANCE_S = 0.001


def _ratio(value: Fraction) -> str:
    return f"{value.numerator}/{value.denominator}"


def reprobe_rendition(path: Path) -> ProbeResult:
    """Read a finished rendition in-process with PyAV (libavformat, as ffprobe).

    Its packets are demuxed, not decoded, for the frame count and the first and last
    frame's times; doing it in-process saves the ~80 ms start of a second Debian ffprobe
    per video, which was most of the pipeline's overhead over a bare ffmpeg run
    (bench/transcode.py).
    """
    import av  # lazily: a worker pays the import once, `--help` never

    try:
        with av.open(libav_path(path)) as container:
            if not container.streams.video:
                raise TranscodeFailed(
                    "transcode failed: ffmpeg wrote no video: not one frame of the source "
                    "(or of its segment) decoded"
                )
            stream = container.streams.video[0]
            rate = stream.average_rate or stream.guessed_rate or Fraction(0)
            duration = float(container.duration or 0) / av.time_base
            if stream.duration is not None and stream.time_base:
                duration = float(stream.duration * stream.time_base)
            pts = [
                packet.pts
                for packet in container.demux(stream)
                if packet.size and not packet.is_discard
            ]
            span, start = None, 0.0
            if pts and None not in pts and stream.time_base:
                span = round(float((max(pts) - min(pts)) * stream.time_base), 6)
                start = round(float(min(pts) * stream.time_base), 6)
            return ProbeResult(
                container=container.format.name,
                codec=stream.codec_context.name,
                width=stream.codec_context.width,
                height=stream.codec_context.height,
                fps=round(float(rate), 6),
                fps_exact=f"{rate.numerator}/{rate.denominator}",
                frames=len(pts),
                duration=round(duration, 6),
                has_audio=bool(container.streams.audio),
                pix_fmt=stream.codec_context.pix_fmt or "",
                is_vfr=False,
                rotation=0,
                coded_width=stream.codec_context.width,
                coded_height=stream.codec_context.height,
                frame_span=span,
                video_start=start,  # the first frame's time: the rendition's clock is 0 there
                sar=_ratio(stream.sample_aspect_ratio or Fraction(1)),
            )
    except (av.error.FFmpegError, IndexError) as exc:
        raise TranscodeFailed(f"transcode failed: the rendition cannot be read ({exc})") from None


def segment_source(source: ProbeResult, segment: Segment) -> ProbeResult:
    """What the rendition of a segment should match: the source's size and format, the
    segment's length, and the frames the source shows in it (its rate times its length,
    to a frame: where the cut falls between two frames decides one more or less)."""
    frames = segment_frames(source, segment.duration)
    span = max(frames - 1, 0) / source.fps if source.fps else None
    return replace(source, duration=segment.duration, frames=frames, frame_span=span)


def check_rendition(
    source: ProbeResult, rendition: ProbeResult, pad: tuple[int, int], *, frames_off: int = 0
) -> None:
    """The rendition must show the source unchanged: size as shown (+ padding) in square
    pixels, frames, timing.

    Timing is checked on the time from the first frame to the last, read from both files'
    own timestamps, not on a frame rate: the average rate a Matroska or GIF file declares
    is a guess, and the last frame's duration is often unknown. Frame count and span
    together catch a frame dropped or doubled and a clip played faster or slower. A
    segment's expected frames are known to `frames_off` frames (its cut), its span to as
    many frame intervals.
    """
    expected = (source.width + pad[0], source.height + pad[1])
    problems = []
    if (rendition.width, rendition.height) != expected:
        problems.append(
            f"size {rendition.width}x{rendition.height}, expected {expected[0]}x{expected[1]}"
        )
    if Fraction(rendition.sar) != 1:
        problems.append(f"pixels {rendition.sar.replace('/', ':')} wide, expected square")
    if (rendition.codec, rendition.pix_fmt) != ("h264", "yuv420p"):
        problems.append(f"format {rendition.codec}/{rendition.pix_fmt}, expected h264/yuv420p")
    if abs(rendition.frames - source.frames) > frames_off:
        problems.append(f"{rendition.frames} frames, the source has {source.frames}")
    interval = 1 / source.fps if source.fps else 0
    span_tolerance = SPAN_TOLERANCE_S + frames_off * interval
    # A cut between two frames starts at the next one, up to an interval later; a later
    # first frame is a seek that missed (frames lost) or a track not moved to 0.
    if rendition.video_start > interval + SPAN_TOLERANCE_S:
        problems.append(f"first frame at {rendition.video_start:g} s, expected at 0")
    if (
        source.frame_span is not None
        and rendition.frame_span is not None
        and abs(rendition.frame_span - source.frame_span) > span_tolerance
    ):
        problems.append(
            f"first to last frame {rendition.frame_span:g} s, in the source {source.frame_span:g} s"
        )
    if problems:
        raise TranscodeFailed("transcode failed: the rendition differs: " + "; ".join(problems))
