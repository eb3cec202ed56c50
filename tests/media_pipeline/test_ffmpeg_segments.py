"""Cutting a segment around a keyframe (AVA: 3 s, the keyframe as the poster) out of a
longer video; PyAV decoding the source is the independent oracle."""

from pathlib import Path

import av
import numpy as np
import pytest

from media_pipeline.ffmpeg import Segment, transcode
from media_pipeline.ffmpeg.synth import make_clip


@pytest.fixture(scope="module")
def film(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("film") / "film.mp4"
    make_clip(path=path, width=192, height=144, fps=12, seconds=8.0, pattern="testsrc2")
    return path


def frame_at(path: Path, seconds: float) -> np.ndarray:
    """The source frame shown at `seconds` (the last one starting at or before it)."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        chosen = None
        for frame in container.decode(stream):
            if frame.time is not None and frame.time <= seconds + 1e-6:
                chosen = frame
        return chosen.to_ndarray(format="rgb24").astype(np.int16)


def poster(path: Path) -> np.ndarray:
    with av.open(str(path)) as container:
        return next(container.decode(video=0)).to_ndarray(format="rgb24").astype(np.int16)


@pytest.mark.parametrize(
    ("keyframe", "expected"),
    [
        (4.0, Segment(start=2.5, duration=3.0, poster_at=1.5)),
        (0.5, Segment(start=0.0, duration=3.0, poster_at=0.5)),  # moved to the start
        (7.9, Segment(start=5.0, duration=3.0, poster_at=2.9)),  # moved to the end
    ],
)
def test_a_segment_is_centred_on_its_keyframe_and_kept_inside_the_video(keyframe, expected):
    assert Segment.around(keyframe=keyframe, seconds=3.0, length=8.0) == expected


def test_a_video_shorter_than_the_segment_is_taken_whole_and_a_keyframe_past_it_refused():
    assert Segment.around(keyframe=1.0, seconds=3.0, length=2.0) == Segment(0.0, 2.0, 1.0)
    with pytest.raises(ValueError, match="keyframe 9 s is outside the video"):
        Segment.around(keyframe=9.0, seconds=3.0, length=8.0)


def test_the_cut_holds_the_segments_frames_and_the_poster_is_the_keyframe(film, tmp_path):
    # given: 3 s around 4.0 s of an 8 s, 12 fps video
    # when
    result = transcode(src=film, out_dir=tmp_path, stem="seg", around=(4.0, 3.0))
    # then: 36 frames (to one), the source's size, and the poster is the frame at 4.0 s
    assert abs(result.frames - 36) <= 1
    assert (result.width, result.height) == (192, 144)
    assert result.duration == pytest.approx(3.0, abs=0.1)
    shown = poster(Path(result.poster))
    keyframe = frame_at(film, 4.0)
    assert np.abs(shown - keyframe).mean() < 4  # JPEG noise only
    elsewhere = frame_at(film, 2.5)
    assert np.abs(shown - elsewhere).mean() > 3 * np.abs(shown - keyframe).mean()
    # and the rendition's first frame is the segment's first
    first = poster(Path(result.output))
    assert np.abs(first - frame_at(film, 2.5)).mean() < 4
