"""Sources stored otherwise than a player shows them: their renditions and posters are
made as they are shown. Each source is a real file made by ffmpeg."""

import subprocess
import sys
from pathlib import Path

import pytest

from annotation.media_urls import media_entry
from media_pipeline.ffmpeg import TooLarge, TranscodeFailed, probe, transcode
from media_pipeline.ffmpeg.transcode import rendition_command
from tests.media_pipeline.test_ffmpeg import decoded_stream, ffprobe_json
from tests.media_pipeline.test_media_hostile_input import run_job, stimulus_of
from tests.videos import h264_clip

transcode_module = sys.modules["media_pipeline.ffmpeg.transcode"]


def ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", *args], check=True)


def sar_of(path: Path) -> str:
    entries = ffprobe_json(
        path, "-select_streams", "v:0", "-show_entries", "stream=sample_aspect_ratio"
    )
    return entries["streams"][0]["sample_aspect_ratio"]


@pytest.fixture(scope="module")
def anamorphic(tmp_path_factory) -> dict[str, Path]:
    """720x576 PAL frames with non-square pixels, 5 frames at 25 fps."""
    folder = tmp_path_factory.mktemp("anamorphic")
    files = {}
    for name, sar in (("wide", "64/45"), ("narrow", "16/15")):
        files[name] = h264_clip(
            folder / f"{name}.mp4", size="720x576", rate=25, frames=5, filters=f"setsar={sar}"
        )
    files["turned"] = folder / "turned.mp4"  # a phone's quarter turn on top
    turn = ("-c", "copy", "-metadata:s:v:0", "rotate=90")
    ffmpeg("-i", str(files["wide"]), *turn, str(files["turned"]))
    return files


@pytest.mark.parametrize(
    ("name", "sar", "shown"),
    [
        ("wide", "64/45", (1024, 576)),  # 720 x 64/45 = 1024: PAL 16:9
        ("narrow", "16/15", (768, 576)),  # 720 x 16/15 = 768: PAL 4:3
        ("turned", "64/45", (576, 1024)),
    ],
)
def test_non_square_pixels_become_square_at_the_size_shown(anamorphic, tmp_path, name, sar, shown):
    # given: stored 720x576 in pixels wider than high
    assert sar_of(anamorphic[name]).replace(":", "/") == sar
    source = probe(anamorphic[name])
    assert (source.sar, source.coded_width, source.coded_height) == (sar, 720, 576)
    assert (source.width, source.height) == shown
    # when
    result = transcode(src=anamorphic[name], out_dir=tmp_path, stem="r")
    # then: the rendition and the poster are in square pixels at the size shown
    out = decoded_stream(Path(result.output))
    assert (out["width"], out["height"], sar_of(Path(result.output))) == (*shown, "1:1")
    assert (result.width, result.height, result.pad_right, result.pad_bottom) == (*shown, 0, 0)
    assert int(out["nb_read_frames"]) == result.frames == 5
    poster = decoded_stream(Path(result.poster))
    assert (poster["width"], poster["height"]) == shown


def test_the_shown_width_is_rounded_to_an_even_number(tmp_path):
    # given: 100 pixels of 4:3 are 133.3 shown, whose nearest even number is 134
    clip = h264_clip(tmp_path / "odd.mp4", size="100x64", frames=3, filters="setsar=4/3")
    # when
    result = transcode(src=clip, out_dir=tmp_path / "out", stem="r")
    # then
    assert (result.source.width, result.source.height) == (134, 64)
    assert (result.width, result.height, result.pad_right) == (134, 64, 0)
    assert sar_of(Path(result.output)) == "1:1"


def test_a_rendition_left_in_non_square_pixels_is_refused(anamorphic, tmp_path, monkeypatch):
    # given: a transcode that forgets to make the pixels square
    monkeypatch.setattr(transcode_module, "shown", lambda video, source: video)
    # when
    with pytest.raises(TranscodeFailed) as caught:
        transcode(src=anamorphic["wide"], out_dir=tmp_path, stem="r")
    # then: the re-probe of the rendition catches it, and nothing is kept
    assert str(caught.value) == (
        "transcode failed: the rendition differs: size 720x576, expected 1024x576; "
        "pixels 64:45 wide, expected square"
    )
    assert list(tmp_path.iterdir()) == []


def test_a_plain_source_is_neither_scaled_nor_retagged(clips, tmp_path):
    # given: the usual source: square pixels, progressive, SDR
    source = probe(clips["square.mp4"])
    assert (source.sar, source.field_order, source.color_transfer) == ("1/1", "progressive", "")
    assert (source.width, source.height) == (source.coded_width, source.coded_height)
    # when
    args = rendition_command(
        src=clips["square.mp4"],
        source=source,
        output=tmp_path / "r.mp4",
        poster=tmp_path / "r.jpg",
        keep_audio=False,
    )
    # then: no filter touches the size, the pixels' shape, the fields or the colours
    graph = args[args.index("-filter_complex") + 1]
    for name in ("scale", "setsar", "bwdif", "zscale", "tonemap", "split"):
        assert name not in graph


def test_pixels_so_wide_that_the_video_shown_is_too_large_are_refused(tmp_path):
    # given: 8000 stored pixels of 3:1 are 24000 shown, past H.264's 16880 a side
    clip = h264_clip(
        tmp_path / "stretched.mp4", size="8000x32", frames=1, filters="setsar=3/1", pattern="color"
    )
    # when / then
    with pytest.raises(TooLarge) as caught:
        probe(clip)
    assert str(caught.value) == (
        "video too large: stretched.mp4 is 24000x32 pixels as shown (stored 8000x32, its "
        "pixels 3:1 wide), more than any browser plays (H.264: at most 8192x4320 or as "
        "many pixels, 16880 a side)"
    )


@pytest.mark.django_db
def test_a_stimulus_of_non_square_pixels_is_sized_as_shown(anamorphic, settings):
    # given
    stimulus = stimulus_of(anamorphic["wide"])
    # when
    job = run_job(stimulus)
    # then: the page sizes the video by the stimulus's width and height
    assert job.status == "done", job.error
    assert (stimulus.width, stimulus.height) == (1024, 576)
    entry = media_entry(stimulus)
    assert (entry["width"], entry["height"]) == (1024, 576)
    rendition = Path(settings.MEDIA_ROOT) / stimulus.rendition.name
    assert (probe(rendition).width, sar_of(rendition)) == (1024, "1:1")


def test_a_ratio_within_a_pixel_of_square_is_retagged_not_resampled(tmp_path):
    # given: ffmpeg's scale to an odd size keeps the picture's shape by a ratio of nearly
    # 1:1 on the frames (258 / 257 against 256 / 255)
    clip = h264_clip(
        tmp_path / "odd.mp4", size="258x256", frames=3, filters="scale=257:255", pix_fmt="yuv444p"
    )
    source = probe(clip)
    assert source.sar == "32895/32896"
    assert (source.width, source.height) == (257, 255) == (source.coded_width, source.coded_height)
    # when
    result = transcode(src=clip, out_dir=tmp_path / "out", stem="r")
    # then: the stored pixels, padded to even sides as ever, tagged square
    out = decoded_stream(Path(result.output))
    assert (out["width"], out["height"], result.pad_right, result.pad_bottom) == (258, 256, 1, 1)
    assert sar_of(Path(result.output)) == "1:1"
    args = rendition_command(
        src=clip,
        source=source,
        output=tmp_path / "x.mp4",
        poster=tmp_path / "x.jpg",
        keep_audio=False,
    )
    assert "scale" not in args[args.index("-filter_complex") + 1]
