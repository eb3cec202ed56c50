"""Which part of the source's timeline the rendition holds, and how its sound is fitted to it.

ffmpeg reads a file on a clock whose 0 is the earliest first timestamp of any stream,
not the video's: MPEG-TS video usually starts a few milliseconds after its audio, and a
video track muxed with a delay (an MPEG-TS capture, an MP4 whose edit list moves a
track) seconds after it. The rendition starts at the video's first frame
(`ProbeResult.video_start` on that clock) and lasts as long as the video
(`ProbeResult.duration`), a segment at `video_start` plus its start. Video and sound are
moved by the same amount, so they stay in sync, and the sound is cut to that span and
filled with silence where it starts late or ends early, so both tracks start at 0 and
end together.

A segment is reached by input seeking (`-ss`/`-t` before `-i`: ffmpeg seeks to the
keyframe before the cut and drops the frames before it) where the container has an
index. An MPEG-TS or MPEG-PS file has none: libav's seek there searches by timestamp and
can land past the keyframe the cut needs, and the frames up to the next keyframe are then
lost (the segment would silently start half a second late, on other frames). Such a
source is decoded from its start and cut with `trim`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ffmpeg.nodes import FilterableStream

    from media_pipeline.ffmpeg.probe import ProbeResult

# libav demuxers whose seek goes by an index of keyframes, so input seeking is exact.
INDEXED_CONTAINERS = frozenset({"mov,mp4,m4a,3gp,3g2,mj2", "matroska,webm", "avi"})


@dataclass(frozen=True)
class Segment:
    """A part of the source to cut out (AVA's 3 s around a keyframe): `start` seconds
    from the video's first frame, `duration` seconds long; the poster is the frame shown
    at `poster_at` seconds into the part (the keyframe, where the person's box was
    drawn)."""

    start: float
    duration: float
    poster_at: float

    @classmethod
    def around(cls, *, keyframe: float, seconds: float, length: float) -> Segment:
        """`seconds` centred on `keyframe`, moved (not shortened) to fit inside a source
        of `length` seconds where it can be; a source shorter than `seconds` is taken
        whole. Raises ValueError for a keyframe outside the source."""
        if not 0 <= keyframe <= length:
            raise ValueError(f"keyframe {keyframe:g} s is outside the video (0 to {length:g} s)")
        duration = min(seconds, length)
        start = min(max(0.0, keyframe - seconds / 2), length - duration)
        return cls(
            start=round(start, 6), duration=round(duration, 6), poster_at=round(keyframe - start, 6)
        )


@dataclass(frozen=True)
class Cut:
    """The span of the source the rendition holds. `input_options` are ffmpeg's input
    seek (`ss`, `t`), where one is used; `start` and `length` (seconds; a length of 0:
    to the end) are the span on the clock ffmpeg reads the input by after that seek;
    `trim_video`: whether the video must be cut to the span by a filter (no seek did)."""

    input_options: dict[str, str]
    start: float
    length: float
    trim_video: bool


def cut_of(source: ProbeResult, segment: Segment | None) -> Cut:
    """The span of `source` (the video's, from its first frame) or of its `segment`."""
    if segment is None:
        return Cut(
            input_options={}, start=source.video_start, length=source.duration, trim_video=False
        )
    start = source.video_start + segment.start
    if source.container in INDEXED_CONTAINERS:
        seek = {"ss": f"{start:.6f}", "t": f"{segment.duration:.6f}"}
        return Cut(input_options=seek, start=0.0, length=segment.duration, trim_video=False)
    return Cut(input_options={}, start=start, length=segment.duration, trim_video=True)


def video_in(video: FilterableStream, cut: Cut) -> FilterableStream:
    """The video of the span, its first frame at 0 (a segment's: where the cut falls)."""
    if cut.trim_video:
        video = video.trim(start=f"{cut.start:.6f}", end=f"{cut.start + cut.length:.6f}")
    if cut.start:
        video = video.setpts(f"PTS-{cut.start:.6f}/TB")
    return video


def audio_in(audio: FilterableStream, cut: Cut) -> FilterableStream:
    """The sound of the span, moved as its video is, so that the two stay in sync: cut to
    the span (a track that runs on would make the rendition, and the rater's wait,
    longer), then filled with silence from 0 where it starts after the video and to the
    video's end where it stops before it."""
    if not cut.length:  # a length unknown: the sound as it is, moved with the video
        return audio.filter("asetpts", f"PTS-{cut.start:.6f}/TB") if cut.start else audio
    return (
        audio.filter("atrim", start=f"{cut.start:.6f}", end=f"{cut.start + cut.length:.6f}")
        .filter("asetpts", f"PTS-{cut.start:.6f}/TB")
        .filter("aresample", first_pts=0)
        .filter("apad", whole_dur=f"{cut.length:.6f}")
    )
