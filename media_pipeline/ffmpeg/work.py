"""How much work a transcode of a video is, and the limit on it.

A few kilobytes can hold hours of 8K frames at a high rate (frames that repeat compress
to almost nothing), and the transcode decodes and encodes every one of them: a media
worker would be tied up for the whole of its time-out, four times over with the retries.
The work is counted in pixels encoded, width x height x frames (pixels a second x
seconds), at the size shown, where libx264 spends its time; the probe counts the frames
from the packets themselves, not from what a header claims.
"""

from __future__ import annotations

from media_pipeline.ffmpeg.errors import TooLarge
from media_pipeline.ffmpeg.probe import ProbeResult


def segment_frames(source: ProbeResult, seconds: float) -> int:
    """The frames a `seconds`-long part of the source shows: its rate times its length,
    to a frame (where the cut falls between two frames decides one more or less)."""
    return round(seconds * source.fps) if source.fps else 0


def pixels_to_encode(source: ProbeResult, *, seconds: float | None = None) -> int:
    """width x height x frames of the source, or of a `seconds`-long part of it."""
    frames = source.frames
    if seconds is not None and seconds < source.duration:
        frames = min(frames, segment_frames(source, seconds))
    return source.width * source.height * frames


def check_work(
    source: ProbeResult, *, name: str, max_pixels: int | None, seconds: float | None = None
) -> None:
    """Raise TooLarge when transcoding `source` (a `seconds`-long part of it, where given)
    means encoding more than `max_pixels` pixels; None: no limit."""
    if max_pixels is None:
        return
    pixels = pixels_to_encode(source, seconds=seconds)
    if pixels <= max_pixels:
        return
    what = name
    if seconds is not None and seconds < source.duration:
        what = f"the {seconds:g} s segment of {name}"
    frames = pixels // (source.width * source.height)
    raise TooLarge(
        f"video too large: {what} is {frames:,} frames of {source.width}x{source.height} "
        f"at {source.fps:g} fps, {pixels:,} pixels to transcode, more than the limit of "
        f"{max_pixels:,} (MOSAIC_MAX_DECODED_PIXELS)"
    )
