"""Interlaced and HDR sources: the rendition (and poster) is what a player shows, whole
frames and SDR BT.709, where a browser would show combing or washed-out colours. The
sources are real files made by ffmpeg: fields from a 50 fps picture moving sideways, 10-bit
frames tagged PQ or HLG with BT.2020 primaries."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from media_pipeline.ffmpeg import TranscodeFailed, probe, transcode
from media_pipeline.ffmpeg.build import available_filters
from tests.media_pipeline.test_ffmpeg import decoded_stream, ffprobe_json
from tests.videos import h264_clip

HDR_TAGS = ("-color_primaries", "bt2020", "-colorspace", "bt2020nc", "-color_range", "tv")


def frames_of(path: Path, pix_fmt: str, width: int, height: int, planes: int) -> np.ndarray:
    """Every frame as it is stored, as (frames, height, width, planes) 8-bit samples."""
    raw = subprocess.run(
        ["ffmpeg", "-v", "error", "-i", str(path), "-fps_mode", "passthrough"]
        + ["-pix_fmt", pix_fmt, "-f", "rawvideo", "-"],
        capture_output=True,
        check=True,
    ).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, height, width, planes)


def combing(luma: np.ndarray) -> float:
    """How much each row stands out from both rows around it in the same direction: the
    teeth of two fields of different moments woven together; small in a whole frame."""
    rows = luma.astype(np.float64)
    above, middle, below = rows[:-2], rows[1:-1], rows[2:]
    teeth = np.abs(middle - above) + np.abs(middle - below) - np.abs(above - below)
    return float(teeth.mean())


def stream_entries(path: Path, entries: str) -> dict:
    found = ffprobe_json(path, "-select_streams", "v:0", "-show_entries", f"stream={entries}")
    return found["streams"][0]


@pytest.fixture(scope="module")
def interlaced(tmp_path_factory) -> dict[str, Path]:
    """Two fields a frame, 1/50 s apart, of a picture moving sideways: 20 frames at 25 fps."""
    folder = tmp_path_factory.mktemp("interlaced")
    made = {}
    for order, scan, options in (("tt", "tff", ()), ("bb", "bff", ("-x264-params", "bff=1"))):
        made[order] = h264_clip(
            folder / f"{order}.mp4",
            size="320x240",
            rate=50,
            frames=20,
            filters=f"scroll=horizontal=0.01,interlace=scan={scan}",
            options=("-flags", "+ildct+ilme", *options),
        )
    return made


@pytest.mark.parametrize("order", ["tt", "bb"])
def test_interlaced_fields_are_woven_into_whole_frames(interlaced, tmp_path, order):
    # given: an interlaced source, its fields combing every moving edge
    source = probe(interlaced[order])
    assert (source.field_order, source.frames, source.fps) == (order, 20, 25.0)
    stored = frames_of(interlaced[order], "gray", 320, 240, 1)[..., 0]
    # when
    result = transcode(src=interlaced[order], out_dir=tmp_path, stem="r")
    # then: progressive frames, as many and at the same times, the teeth gone
    rendition = Path(result.output)
    assert stream_entries(rendition, "field_order")["field_order"] == "progressive"
    assert int(decoded_stream(rendition)["nb_read_frames"]) == result.frames == 20
    shown = frames_of(rendition, "gray", 320, 240, 1)[..., 0]
    before = np.mean([combing(frame) for frame in stored[1:]])
    after = np.mean([combing(frame) for frame in shown[1:]])
    assert after < before / 3, (before, after)
    # and the poster too is a whole frame
    poster = frames_of(Path(result.poster), "gray", 320, 240, 1)[0, ..., 0]
    assert combing(poster) < combing(stored[0]) / 3


@pytest.fixture(scope="module")
def hdr(tmp_path_factory) -> dict[str, Path]:
    """10-bit BT.2020 frames of one colour: grey signalled in PQ, a red in HLG."""
    folder = tmp_path_factory.mktemp("hdr")
    made = {}
    for name, colour, transfer in (
        ("pq", "gray", "smpte2084"),
        ("hlg", "0xA03030", "arib-std-b67"),
    ):
        made[name] = h264_clip(
            folder / f"{name}.mp4",
            size="64x48",
            frames=3,
            filters="null",
            pattern=f"color=c={colour}",
            pix_fmt="yuv420p10le",
            options=("-color_trc", transfer, *HDR_TAGS),
        )
    return made


def mean_rgb(path: Path, width: int = 64, height: int = 48) -> np.ndarray:
    """The first frame's mean red, green and blue."""
    return frames_of(path, "rgb24", width, height, 3)[0].reshape(-1, 3).mean(axis=0)


def test_a_pq_source_is_tone_mapped_to_sdr_bt709(hdr, tmp_path):
    # given: mid grey in PQ, about 92 cd/m2, which shown as SDR is a dull 50 % grey
    source = probe(hdr["pq"])
    assert (source.color_transfer, source.color_primaries) == ("smpte2084", "bt2020")
    assert mean_rgb(hdr["pq"]) == pytest.approx([128, 128, 128], abs=2)
    # when
    result = transcode(src=hdr["pq"], out_dir=tmp_path, stem="r")
    # then: SDR BT.709, the grey as bright as 92 cd/m2 is under SDR's 100 cd/m2 white
    rendition = Path(result.output)
    tags = stream_entries(rendition, "color_transfer,color_primaries,color_space,pix_fmt")
    assert (tags["color_transfer"], tags["color_primaries"], tags["color_space"]) == (
        "bt709",
        "bt709",
        "bt709",
    )
    assert tags["pix_fmt"] == "yuv420p"
    assert mean_rgb(rendition) == pytest.approx([154, 154, 154], abs=4)
    assert mean_rgb(Path(result.poster)) == pytest.approx([154, 154, 154], abs=4)
    assert result.frames == 3


def test_an_hlg_source_gets_bt709_primaries(hdr, tmp_path):
    # given: a red in BT.2020, which read as BT.709 looks washed out (green 52 of 255)
    source = probe(hdr["hlg"])
    assert source.color_transfer == "arib-std-b67"
    assert mean_rgb(hdr["hlg"])[1] > 40
    # when
    result = transcode(src=hdr["hlg"], out_dir=tmp_path, stem="r")
    # then: the same red in BT.709's terms, far more saturated
    red, green, blue = mean_rgb(Path(result.output))
    assert red > 170 and green < 15 and blue < 45, (red, green, blue)
    assert stream_entries(Path(result.output), "color_transfer")["color_transfer"] == "bt709"


def test_an_sdr_source_keeps_its_colours(clips, tmp_path):
    source = probe(clips["square.mp4"])
    assert source.color_transfer not in ("smpte2084", "arib-std-b67")
    result = transcode(src=clips["square.mp4"], out_dir=tmp_path, stem="r")
    stored = mean_rgb(clips["square.mp4"], 256, 256)
    assert mean_rgb(Path(result.output), 256, 256) == pytest.approx(stored, abs=2)


@pytest.fixture
def ffmpeg_without_zscale(tmp_path, monkeypatch) -> str:
    """An ffmpeg built without libzimg: no zscale in its list, "No such filter" for a
    graph that uses it; the real ffmpeg otherwise."""
    script = tmp_path / "ffmpeg-without-zscale"
    script.write_text(
        "#!/bin/sh\n"
        'case "$*" in *zscale*) echo "[AVFilterGraph @ 0x1] No such filter: \'zscale\'" >&2;'
        " exit 1;; esac\n"
        'case "$*" in *-filters*) ffmpeg "$@" | grep -v \' zscale \'; exit 0;; esac\n'
        'exec ffmpeg "$@"\n'
    )
    script.chmod(0o755)
    monkeypatch.setattr(sys.modules["media_pipeline.ffmpeg.transcode"], "FFMPEG", str(script))
    return str(script)


def test_an_hdr_source_on_an_ffmpeg_without_zscale_fails_saying_what_is_missing(
    hdr, clips, tmp_path, ffmpeg_without_zscale
):
    # given: an ffmpeg without zscale (libzimg), which HDR's tone mapping needs
    # when / then: the HDR source fails, naming the filter and its library
    with pytest.raises(TranscodeFailed) as caught:
        transcode(src=hdr["pq"], out_dir=tmp_path / "out", stem="r")
    assert str(caught.value) == (
        "transcode failed: pq.mp4 is HDR (PQ) and its tone mapping to SDR needs ffmpeg's "
        f"filter zscale (libzimg, --enable-libzimg), which this ffmpeg ({ffmpeg_without_zscale}) "
        "lacks: install an ffmpeg that has it (Debian's and Ubuntu's do), then process the "
        "video again"
    )
    assert list(tmp_path.glob("out/*")) == []
    # and an SDR source, which needs no zscale, is transcoded as ever
    result = transcode(src=clips["square.mp4"], out_dir=tmp_path / "out", stem="s")
    assert result.frames == probe(clips["square.mp4"]).frames


def test_the_filters_of_an_ffmpeg_are_read_from_its_list(tmp_path):
    assert {"scale", "zscale", "tonemap", "atrim", "apad"} <= available_filters("ffmpeg")
    assert available_filters(str(tmp_path / "no-ffmpeg")) is None  # ffmpeg's own error then


@pytest.mark.parametrize(
    ("codec", "pix_fmt"),
    [("libvpx-vp9", "yuv420p10le"), ("libx264", "yuv444p10le")],  # VP9 allows odd 4:2:0
)
def test_an_hdr_source_of_odd_size_is_tone_mapped_and_padded(tmp_path, codec, pix_fmt):
    # given: the mid grey in PQ at 65x49, which zimg refuses in 4:2:0
    src = tmp_path / "pq.mkv"
    subprocess.run(
        ["ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "color=c=gray:size=64x48",
         "-vf", "scale=65:49", "-frames:v", "3", "-c:v", codec, "-pix_fmt", pix_fmt,
         "-color_trc", "smpte2084", *HDR_TAGS, str(src)],
        check=True,
    )  # fmt: skip
    assert (probe(src).width, probe(src).height) == (65, 49)
    # when
    result = transcode(src=src, out_dir=tmp_path / "out", stem="r")
    # then: as the even-sized grey above, one pixel of padding right and below
    assert (result.width, result.height, result.pad_right, result.pad_bottom) == (66, 50, 1, 1)
    assert mean_rgb(Path(result.output), 66, 50) == pytest.approx([154, 154, 154], abs=4)
    assert mean_rgb(Path(result.poster), 65, 49) == pytest.approx([154, 154, 154], abs=4)
