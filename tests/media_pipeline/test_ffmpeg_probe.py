"""The in-process probe (PyAV) and the poster written beside the rendition."""

import struct
import subprocess
from pathlib import Path

import av.logging
import pytest

from media_pipeline.ffmpeg import CorruptVideo, NotAVideo, probe, transcode
from tests.media_pipeline.conftest import CLIPS

GOOD = [name for name, *_ in CLIPS]


def rgb_frames(path: Path, width: int, height: int) -> list[bytes]:
    """Every frame as it is stored (no frame added or dropped), upright, as RGB bytes."""
    raw = subprocess.run(
        ["ffmpeg", "-v", "error", "-i", str(path), "-fps_mode", "passthrough"]
        + ["-pix_fmt", "rgb24", "-f", "rawvideo", "-"],
        capture_output=True,
        check=True,
    ).stdout
    size = width * height * 3
    return [raw[i : i + size] for i in range(0, len(raw), size)]


def mean_abs_difference(a: bytes, b: bytes) -> float:
    return sum(abs(x - y) for x, y in zip(a, b, strict=True)) / len(a)


@pytest.mark.parametrize("name", GOOD)
def test_the_poster_is_the_first_frame_for_every_shape(clips, tmp_path, name):
    # given: odd sizes, a GIF, VFR, 4 and 50 fps, WebM and MOV
    source = probe(clips[name])
    frames = rgb_frames(clips[name], source.width, source.height)
    # when
    result = transcode(src=clips[name], out_dir=tmp_path, stem="r")
    # then: the JPEG shows frame 0 (only its compression differs), not the frame after it
    (poster,) = rgb_frames(Path(result.poster), source.width, source.height)
    to_first = mean_abs_difference(poster, frames[0])
    assert to_first < 3
    assert to_first < mean_abs_difference(poster, frames[1])


def test_a_quarter_turn_the_other_way_is_read_too(extra_clips, tmp_path):
    turned = tmp_path / "turned.mp4"
    subprocess.run(
        ["ffmpeg", "-v", "error", "-i", str(extra_clips["plain"]), "-c", "copy"]
        + ["-metadata:s:v:0", "rotate=270", str(turned)],
        check=True,
    )
    result = probe(turned)
    assert (result.rotation, result.width, result.height) == (270, 96, 160)
    assert (result.coded_width, result.coded_height) == (160, 96)


def test_a_second_probe_of_the_same_broken_file_still_finds_it_truncated(bad_files):
    # PyAV drops a log line equal to the one before it; the probe must not lose its warning
    for _ in range(2):
        with pytest.raises(CorruptVideo) as caught:
            probe(bad_files["cut.webm"])
        assert str(caught.value) == "corrupt video: cut.webm is truncated (File ended prematurely)"


@pytest.mark.parametrize(("level", "skip_repeated"), [(None, True), (av.logging.ERROR, False)])
def test_probing_leaves_pyav_logging_as_it_was(clips, bad_files, level, skip_repeated):
    before = (av.logging.get_level(), av.logging.get_skip_repeated())
    av.logging.set_level(level)
    av.logging.set_skip_repeated(skip_repeated)
    try:
        probe(clips["square.mp4"])
        with pytest.raises(CorruptVideo):
            probe(bad_files["cut.webm"])
        assert (av.logging.get_level(), av.logging.get_skip_repeated()) == (level, skip_repeated)
    finally:
        av.logging.set_level(before[0])
        av.logging.set_skip_repeated(before[1])


def first_sample_overwritten(source: Path, target: Path) -> Path:
    """`source` (index first) with its first H.264 NAL length prefix set to 0xFFFFFFFF."""
    data, offset = bytearray(source.read_bytes()), 0
    while True:
        size, kind = struct.unpack(">I4s", data[offset : offset + 8])
        if kind == b"mdat":
            break
        offset += size
    data[offset + 8 : offset + 8 + 64] = b"\xff" * 64
    target.write_bytes(data)
    return target


def test_a_video_whose_first_frame_cannot_be_decoded_is_corrupt(extra_clips, tmp_path):
    # given: a complete index, but the first frame's bytes are garbage
    damaged = first_sample_overwritten(extra_clips["faststart"], tmp_path / "damaged.mp4")
    out = tmp_path / "out"
    out.mkdir()
    # when / then
    with pytest.raises(CorruptVideo) as caught:
        transcode(src=damaged, out_dir=out, stem="r")
    assert str(caught.value).startswith(
        "corrupt video: the first frame of damaged.mp4 cannot be decoded ("
    )
    assert list(out.iterdir()) == []


@pytest.mark.parametrize(("name", "demuxer"), [("notes.nfo", "tty"), ("notes.ans", "tty")])
def test_text_art_files_are_not_videos(tmp_path, name, demuxer):
    # libav plays .nfo/.ans files as ANSI art "videos"; a rater must never see one
    path = tmp_path / name
    path.write_text("these are my notes, not a video\n" * 40)
    with pytest.raises(NotAVideo) as caught:
        probe(path)
    assert str(caught.value) == f"not a video: {name} is text ({demuxer}), not a video"
