"""The ffmpeg core on real tiny clips; ffprobe with full decoding is the independent oracle."""

import hashlib
import json
import struct
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from media_pipeline.ffmpeg import (
    CorruptVideo,
    DiskFull,
    MediaError,
    NotAVideo,
    TranscodeFailed,
    TranscodeTimeout,
    probe,
    sha256_file,
    transcode,
)
from media_pipeline.ffmpeg.rendition_check import reprobe_rendition
from tests.media_pipeline.conftest import CLIPS

GOOD = [name for name, *_ in CLIPS]
SHAPES = {name: (width, height, fps, vfr) for name, width, height, fps, _, vfr in CLIPS}


def ffprobe_json(path: Path, *args: str) -> dict:
    out = subprocess.run(
        ["ffprobe", "-v", "error", *args, "-of", "json", str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def decoded_stream(path: Path) -> dict:
    """The first video stream, with its frames counted by decoding every one."""
    entries = "stream=codec_name,profile,pix_fmt,width,height,nb_read_frames,r_frame_rate"
    return ffprobe_json(path, "-select_streams", "v:0", "-count_frames", "-show_entries", entries)[
        "streams"
    ][0]


def frame_times(path: Path) -> list[float]:
    """Presentation times of the video frames, relative to the first one."""
    packets = ffprobe_json(path, "-select_streams", "v:0", "-show_entries", "packet=pts_time")
    times = sorted(float(p["pts_time"]) for p in packets["packets"])
    return [round(t - times[0], 4) for t in times]


def top_level_boxes(path: Path) -> list[str]:
    """The MP4 box types at file level, in byte order (ISO/IEC 14496-12 box headers)."""
    data, boxes, offset = path.read_bytes(), [], 0
    while offset + 8 <= len(data):
        size, kind = struct.unpack(">I4s", data[offset : offset + 8])
        if size == 1:
            size = struct.unpack(">Q", data[offset + 8 : offset + 16])[0]
        boxes.append(kind.decode("latin-1"))
        offset += size if size else len(data)
    return boxes


@pytest.mark.parametrize("name", GOOD)
def test_probe_reads_the_true_shape(clips, name):
    width, height, fps, vfr = SHAPES[name]
    result = probe(clips[name])
    reference = decoded_stream(clips[name])
    assert (result.width, result.height) == (width, height)
    assert result.frames == int(reference["nb_read_frames"])
    assert result.is_vfr is vfr
    if not vfr:
        assert Fraction(result.fps_exact) == Fraction(fps)
        assert result.fps == fps


@pytest.mark.parametrize("name", GOOD)
def test_transcode_keeps_native_size_rate_frames_and_timing(clips, tmp_path, name):
    # given
    source = probe(clips[name])
    # when
    result = transcode(src=clips[name], out_dir=tmp_path, stem="r")
    # then: H.264 High 4:2:0, one pixel of padding only where a side is odd
    out = decoded_stream(Path(result.output))
    assert (out["codec_name"], out["profile"], out["pix_fmt"]) == ("h264", "High", "yuv420p")
    pad = (source.width % 2, source.height % 2)
    assert (result.pad_right, result.pad_bottom) == pad
    assert (out["width"], out["height"]) == (source.width + pad[0], source.height + pad[1])
    assert (result.width, result.height) == (out["width"], out["height"])
    # every frame is kept, each at its own time: no frame dropped, doubled or moved
    assert int(out["nb_read_frames"]) == source.frames == result.frames
    assert frame_times(Path(result.output)) == frame_times(clips[name])
    if not source.is_vfr:
        assert Fraction(out["r_frame_rate"]) == Fraction(source.fps_exact)
    # the poster is the first frame at the source's own size, not the padded one
    poster = decoded_stream(Path(result.poster))
    assert (poster["codec_name"], poster["width"], poster["height"]) == (
        "mjpeg",
        source.width,
        source.height,
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.jpg", "r.mp4"]


def test_rendition_puts_the_index_before_the_media(clips, tmp_path):
    # given: the generated source is laid out the usual way, index last
    assert top_level_boxes(clips["square.mp4"]).index("moov") > top_level_boxes(
        clips["square.mp4"]
    ).index("mdat")
    # when
    result = transcode(src=clips["square.mp4"], out_dir=tmp_path, stem="r")
    # then: moov (the index) comes before mdat, so browsers start before the download ends
    boxes = top_level_boxes(Path(result.output))
    assert boxes[0] == "ftyp"
    assert boxes.index("moov") < boxes.index("mdat")


def test_the_pad_pixel_copies_its_neighbour_instead_of_black(clips, tmp_path):
    result = transcode(src=clips["odd.mp4"], out_dir=tmp_path, stem="r")
    raw = subprocess.run(
        ["ffmpeg", "-v", "error", "-i", result.output, "-frames:v", "1", "-pix_fmt", "gray"]
        + ["-f", "rawvideo", "-"],
        capture_output=True,
        check=True,
    ).stdout
    width, height = 258, 256
    assert len(raw) == width * height
    rows = [raw[y * width : (y + 1) * width] for y in range(height)]
    pad_column = [row[257] for row in rows[:255]]
    last_real_column = [row[256] for row in rows[:255]]
    # testsrc2's right edge is not black, so a black pad would differ by far more than 8
    assert sum(abs(a - b) for a, b in zip(pad_column, last_real_column, strict=True)) / 255 < 8
    assert sum(abs(a - b) for a, b in zip(rows[255][:257], rows[254][:257], strict=True)) / 257 < 8


def test_rotated_source_is_shown_upright_at_its_display_size(extra_clips, tmp_path):
    source = probe(extra_clips["rotated"])
    assert (source.rotation, source.width, source.height) == (90, 96, 160)
    assert (source.coded_width, source.coded_height) == (160, 96)
    result = transcode(src=extra_clips["rotated"], out_dir=tmp_path, stem="r")
    out = decoded_stream(Path(result.output))
    assert (out["width"], out["height"]) == (96, 160)
    assert probe(result.output).rotation == 0
    poster = decoded_stream(Path(result.poster))
    assert (poster["width"], poster["height"]) == (96, 160)


def test_audio_is_dropped_unless_asked_for_then_aac(extra_clips, tmp_path):
    dropped = transcode(src=extra_clips["audio"], out_dir=tmp_path / "a", stem="r")
    kept = transcode(src=extra_clips["audio"], out_dir=tmp_path / "b", stem="r", keep_audio=True)

    def audio_codecs(path: str) -> list[str]:
        streams = ffprobe_json(Path(path), "-show_entries", "stream=codec_type,codec_name")
        return [s["codec_name"] for s in streams["streams"] if s["codec_type"] == "audio"]

    assert (audio_codecs(dropped.output), dropped.has_audio) == ([], False)
    assert (audio_codecs(kept.output), kept.has_audio) == (["aac"], True)


def test_container_metadata_naming_the_model_is_not_copied(extra_clips, tmp_path):
    assert ffprobe_json(extra_clips["tagged"], "-show_format")["format"]["tags"]["title"]
    result = transcode(src=extra_clips["tagged"], out_dir=tmp_path, stem="r")
    tags = ffprobe_json(Path(result.output), "-show_format")["format"].get("tags", {})
    assert "title" not in tags


def test_default_names_come_from_the_content_checksum(clips, tmp_path):
    expected = hashlib.sha256(clips["slow.mp4"].read_bytes()).hexdigest()
    result = transcode(src=clips["slow.mp4"], out_dir=tmp_path)
    assert result.stem == expected
    assert (Path(result.output).name, Path(result.poster).name) == (
        f"{expected}.mp4",
        f"{expected}.jpg",
    )


@pytest.mark.parametrize("stem", ["../escape", ".hidden", "", "a/b"])
def test_a_stem_that_is_not_a_plain_name_is_refused(clips, tmp_path, stem):
    with pytest.raises(ValueError):
        transcode(src=clips["slow.mp4"], out_dir=tmp_path, stem=stem)
    assert list(tmp_path.iterdir()) == []


def test_sha256_file_streams_in_chunks(tmp_path):
    path = tmp_path / "blob"
    data = bytes(range(256)) * 1000
    path.write_bytes(data)
    assert sha256_file(path, chunk_size=4096) == hashlib.sha256(data).hexdigest()


def test_progress_is_monotone_and_ends_at_one(clips, tmp_path):
    seen: list[float] = []
    transcode(src=clips["slow.mp4"], out_dir=tmp_path, on_progress=seen.append)
    assert seen[-1] == 1.0
    assert seen.count(1.0) == 1
    assert seen == sorted(seen) and all(0 < f <= 1 for f in seen)


@pytest.mark.parametrize(
    ("name", "error", "message"),
    [
        (
            "truncated.mp4",
            CorruptVideo,
            "corrupt video: truncated.mp4 has a MP4/MOV header but cannot be read",
        ),
        ("cut_faststart.mp4", CorruptVideo, "corrupt video: cut_faststart.mp4 is truncated"),
        ("cut.webm", CorruptVideo, "corrupt video: cut.webm is truncated"),
        ("empty.mp4", NotAVideo, "not a video: empty.mp4 is empty (0 bytes)"),
        (
            "notes.mp4",
            NotAVideo,
            "not a video: notes.mp4 is not a media file ffmpeg can read "
            "(Invalid data found when processing input)",
        ),
        ("still.mp4", NotAVideo, "not a video: still.mp4 is a still image (png_pipe)"),
        ("tone.mp4", NotAVideo, "not a video: no video stream found in tone.mp4"),
    ],
)
def test_bad_files_fail_with_a_clear_error_and_leave_nothing(
    bad_files, tmp_path, name, error, message
):
    with pytest.raises(error) as caught:
        transcode(src=bad_files[name], out_dir=tmp_path, stem="r")
    assert str(caught.value).startswith(message)
    assert isinstance(caught.value, MediaError)
    assert list(tmp_path.iterdir()) == []


def fake_ffmpeg(tmp_path: Path, body: str) -> str:
    script = tmp_path / "fake-ffmpeg"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    return str(script)


@pytest.fixture
def transcode_module():
    return sys.modules["media_pipeline.ffmpeg.transcode"]


@pytest.fixture
def good_output(clips, tmp_path):
    out = tmp_path / "out"
    result = transcode(src=clips["square.mp4"], out_dir=out, stem="r")
    return out, Path(result.output).read_bytes(), Path(result.poster).read_bytes()


def assert_untouched(good_output) -> None:
    out, video, poster = good_output
    assert sorted(p.name for p in out.iterdir()) == ["r.jpg", "r.mp4"]  # no temp file left
    assert (out / "r.mp4").read_bytes() == video
    assert (out / "r.jpg").read_bytes() == poster


def test_a_rendition_without_video_fails_saying_so(bad_files):
    # given: what ffmpeg wrote when not one frame decoded: a file of sound alone
    # when / then
    with pytest.raises(TranscodeFailed) as caught:
        reprobe_rendition(bad_files["tone.mp4"])
    assert str(caught.value) == (
        "transcode failed: ffmpeg wrote no video: not one frame of the source (or of its "
        "segment) decoded"
    )


def test_ffmpeg_refusing_its_options_fails_and_keeps_the_good_output(
    clips, good_output, monkeypatch, transcode_module
):
    monkeypatch.setattr(
        transcode_module, "ENCODER", {**transcode_module.ENCODER, "crf": "not-a-number"}
    )
    with pytest.raises(TranscodeFailed) as caught:
        transcode(src=clips["square.mp4"], out_dir=good_output[0], stem="r")
    assert str(caught.value).startswith("transcode failed: ffmpeg exited with code ")
    assert "crf" in str(caught.value)  # the tail of ffmpeg's stderr names the culprit
    assert_untouched(good_output)


def test_a_crashing_ffmpeg_fails_with_its_stderr_tail(
    clips, good_output, tmp_path, monkeypatch, transcode_module
):
    crash = fake_ffmpeg(tmp_path, 'echo "x264 [error]: out of cheese" >&2\nkill -SEGV $$')
    monkeypatch.setattr(transcode_module, "FFMPEG", crash)
    with pytest.raises(TranscodeFailed) as caught:
        transcode(src=clips["square.mp4"], out_dir=good_output[0], stem="r")
    assert str(caught.value) == (
        "transcode failed: ffmpeg was killed by signal 11: x264 [error]: out of cheese"
    )
    assert_untouched(good_output)


def test_a_silent_hung_ffmpeg_is_killed_at_the_deadline(
    clips, good_output, tmp_path, monkeypatch, transcode_module
):
    monkeypatch.setattr(transcode_module, "FFMPEG", fake_ffmpeg(tmp_path, "exec sleep 60"))
    with pytest.raises(TranscodeTimeout) as caught:
        transcode(src=clips["square.mp4"], out_dir=good_output[0], stem="r", timeout_s=0.3)
    assert not isinstance(caught.value, MediaError)  # transient: the job is retried
    assert "ran past its limit of 0.3 s" in str(caught.value)
    assert_untouched(good_output)


def test_a_real_transcode_past_its_deadline_leaves_nothing(clips, good_output):
    with pytest.raises(TranscodeTimeout):
        transcode(src=clips["wide.mp4"], out_dir=good_output[0], stem="r", timeout_s=0.001)
    assert_untouched(good_output)


def test_a_good_rerun_replaces_the_output(clips, good_output):
    out = good_output[0]
    transcode(src=clips["slow.mp4"], out_dir=out, stem="r")
    assert probe(out / "r.mp4").frames == probe(clips["slow.mp4"]).frames == 8
    assert sorted(p.name for p in out.iterdir()) == ["r.jpg", "r.mp4"]


def test_leftovers_of_a_killed_run_go_but_a_live_runs_part_files_stay(clips, tmp_path):
    # given: a killed run's part files (no lock held), and those of a run going on beside
    # this one, whose .part.mp4 it holds locked
    import fcntl
    import os

    dead = [tmp_path / ".r.deadbeef0000.part.mp4", tmp_path / ".r.deadbeef0000.part.jpg"]
    live = [tmp_path / ".r.cafe00000000.part.mp4", tmp_path / ".r.cafe00000000.part.jpg"]
    other_stem = tmp_path / ".r2.feed00000000.part.mp4"
    for part in [*dead, *live, other_stem]:
        part.write_bytes(b"half-written")
    lock = os.open(live[0], os.O_RDONLY)
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        # when
        transcode(src=clips["slow.mp4"], out_dir=tmp_path, stem="r")
    finally:
        os.close(lock)
    # then
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["r.jpg", "r.mp4", *(p.name for p in live), other_stem.name]
    )


def test_a_full_disk_is_worth_a_retry_and_leaves_nothing(
    clips, good_output, tmp_path, monkeypatch, transcode_module
):
    full = fake_ffmpeg(tmp_path, 'echo "r.mp4: No space left on device" >&2\nexit 1')
    monkeypatch.setattr(transcode_module, "FFMPEG", full)
    with pytest.raises(DiskFull) as caught:
        transcode(src=clips["square.mp4"], out_dir=good_output[0], stem="r")
    assert not isinstance(caught.value, MediaError)  # transient: the job is retried
    assert str(caught.value) == (
        "transcode failed: no space left to write the rendition (r.mp4: No space left on device)"
    )
    assert_untouched(good_output)
