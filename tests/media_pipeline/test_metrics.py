"""Weight-free metrics against independent references: siti-tools (the ITU's SI/TI code, in
legacy mode), numpy/scipy formulas, hand-computed values, and frames decoded by the ffmpeg
command line rather than by PyAV."""

import json
import platform
import subprocess
import sys
import threading

import av
import numpy as np
import pytest
import torch
from scipy import ndimage
from siti_tools.siti import SiTiCalculator

from media_pipeline.metrics import content
from media_pipeline.metrics.content import FULL_RANGE, LIMITED_RANGE
from media_pipeline.metrics.decode import (
    FramePlan,
    FrameStream,
    VideoDecodeError,
    VideoEnd,
    cores,
    decode_videos,
    luma_plane,
    uniform_indices,
)
from media_pipeline.metrics.registry import available_metrics, get_metric, take_rows
from media_pipeline.metrics.scoring import (
    VideoRequest,
    keep_freed_memory,
    pick_device,
    score_video,
    score_videos,
)
from tests.media_pipeline.metrics_fixtures import (
    bt601,
    ffmpeg_frames,
    ffmpeg_luma,
    make_clip,
    planar,
)

RNG = np.random.default_rng(0)
WEIGHT_FREE = [m.name for m in available_metrics() if not m.weights]


def frames(n=3, h=37, w=53) -> np.ndarray:
    return RNG.uniform(0, 255, size=(n, h, w, 3)).astype(np.float32)


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    folder = tmp_path_factory.mktemp("metric_clips")
    return {
        # 50 frames: sampled 0, 8, ..., 48; the pairs (7, 8), (15, 16) ... straddle chunks
        "moving": make_clip(folder / "moving.mp4", size="128x72", rate=25, frames=50),
        "one_frame": make_clip(folder / "one.mp4", size="64x48", rate=8, frames=1),
    }


def test_si_and_ti_per_frame_equal_the_itu_reference():
    y = bt601(frames())
    ours_si = content.spatial_information(torch.from_numpy(y)).numpy()
    ours_ti = content.temporal_information(torch.from_numpy(y[1:]), torch.from_numpy(y[:-1]))
    reference_si = [SiTiCalculator.si(frame.astype(np.float64)) for frame in y]
    reference_ti = [SiTiCalculator.ti(y[i].astype(np.float64), y[i - 1]) for i in (1, 2)]
    np.testing.assert_allclose(ours_si, reference_si, rtol=1e-4)
    np.testing.assert_allclose(ours_ti.numpy(), reference_ti, rtol=1e-4)


def test_brightness_contrast_sharpness_match_numpy_and_scipy():
    y = bt601(frames())
    t = torch.from_numpy(y)
    np.testing.assert_allclose(content.brightness(t), y.mean(axis=(1, 2)), rtol=1e-5)
    np.testing.assert_allclose(content.contrast(t), y.std(axis=(1, 2)), rtol=1e-4)
    laplace = [ndimage.laplace(f.astype(np.float64))[1:-1, 1:-1].var() for f in y]
    np.testing.assert_allclose(content.sharpness(t), laplace, rtol=1e-4)


def test_statistics_stay_exact_on_large_flat_frames():
    # given: 2048x1536 frames of a bright, nearly flat picture (a small spread on a large
    # mean is where a careless float32 variance loses its digits)
    y = (200 + RNG.normal(0, 0.5, size=(2, 1536, 2048))).astype(np.float32)
    rgb = np.stack([y, y - 3, y + 2], axis=-1)
    reference = y.astype(np.float64)
    # when
    t = torch.from_numpy(y)
    # then
    np.testing.assert_allclose(content.contrast(t), reference.std(axis=(1, 2)), rtol=1e-4)
    laplace = [ndimage.laplace(f)[1:-1, 1:-1].var() for f in reference]
    np.testing.assert_allclose(content.sharpness(t), laplace, rtol=1e-4)
    si = [SiTiCalculator.si(f) for f in reference]
    np.testing.assert_allclose(content.spatial_information(t), si, rtol=1e-4)
    r, g, b = (rgb[..., c].astype(np.float64) for c in range(3))
    rg, yb = r - g, 0.5 * (r + g) - b
    expected = np.hypot(rg.std(axis=(1, 2)), yb.std(axis=(1, 2))) + 0.3 * np.hypot(
        rg.mean(axis=(1, 2)), yb.mean(axis=(1, 2))
    )
    np.testing.assert_allclose(content.colorfulness(planar(rgb)), expected, rtol=1e-4)


def test_colorfulness_hand_computed():
    # a pure red frame: rg = 255, yb = 127.5, no spread -> 0.3 * hypot(255, 127.5)
    red = np.zeros((1, 4, 4, 3), dtype=np.float32)
    red[..., 0] = 255
    assert content.colorfulness(planar(red)).item() == pytest.approx(
        0.3 * np.hypot(255, 127.5), rel=1e-6
    )
    grey = np.full((1, 4, 4, 3), 128, dtype=np.float32)
    assert content.colorfulness(planar(grey)).item() == 0.0
    rgb = frames(1)
    r, g, b = rgb[0, ..., 0], rgb[0, ..., 1], rgb[0, ..., 2]
    rg, yb = r - g, 0.5 * (r + g) - b
    expected = np.hypot(rg.std(), yb.std()) + 0.3 * np.hypot(rg.mean(), yb.mean())
    assert content.colorfulness(planar(rgb)).item() == pytest.approx(expected, 1e-4)
    # 8-bit frames, as decoded, give the same
    codes = RNG.integers(0, 256, size=(2, 37, 53, 3), dtype=np.uint8)
    np.testing.assert_allclose(
        content.colorfulness(planar(codes)),
        content.colorfulness(planar(codes.astype(np.float64))),
        rtol=1e-6,
    )


def test_motion_and_flicker_hand_computed():
    a = np.zeros((1, 2, 2), dtype=np.float32)
    b = np.full((1, 2, 2), 10, dtype=np.float32)
    assert content.motion(torch.from_numpy(b), torch.from_numpy(a)).item() == 10.0
    means = torch.tensor([10.0, 20.0, 10.0, 20.0])  # second differences: -20, 20
    assert content.flicker(means).item() == 20.0
    assert content.flicker(torch.tensor([1.0, 2.0, 3.0, 4.0])).item() == 0.0  # a steady fade


def test_uniform_indices_and_the_frames_one_pass_decodes(videos):
    assert uniform_indices(50, 8) == [0, 7, 14, 21, 28, 35, 42, 49]
    assert uniform_indices(3, 8) == [0, 1, 2]
    # given: GAIA's every 8th frame with the frame before each, and 8 uniform frames
    plan = FramePlan(every_kth=8, with_previous=True, uniform=8)
    # when
    stream = FrameStream(path=videos["moving"], plan=plan, chunk_size=4)
    chunks = list(stream)
    # then: only those frames were kept, in order, in chunks of at most 4, as luma codes
    decoded = [int(i) for c in chunks for i in c.index]
    expected = sorted({i for i in range(50) if i % 8 in (0, 7)} | {0, 7, 14, 21, 28, 35, 42, 49})
    assert decoded == expected and stream.frames_decoded == 50
    assert max(len(c.index) for c in chunks) == 4
    assert chunks[0].luma.shape == (4, 72, 128) and chunks[0].luma.dtype == torch.uint8
    assert all(c.luma_range == LIMITED_RANGE for c in chunks)
    # and no frame was converted to RGB: no metric of this plan reads colour
    assert all(c.rgb.shape == (0, 3, 72, 128) for c in chunks)


def test_rgb_is_decoded_only_for_the_frames_a_colour_metric_reads(videos):
    # given: luma of GAIA's frame pairs, RGB of the uniform frames only
    plan = FramePlan(every_kth=8, with_previous=True, uniform=8, rgb_uniform=True)
    # when
    chunks = list(FrameStream(path=videos["moving"], plan=plan, chunk_size=4))
    # then: RGB rows are the uniform frames, equal to what the ffmpeg command line decodes
    rgb_index = [int(i) for c in chunks for i in c.rgb_index]
    assert rgb_index == [0, 7, 14, 21, 28, 35, 42, 49]
    reference = ffmpeg_frames(videos["moving"], 128, 72)[rgb_index]
    # planar, and the values ffmpeg writes as packed rgb24
    np.testing.assert_array_equal(np.concatenate([c.rgb for c in chunks]), planar(reference))
    # and the luma is the coded Y plane, byte for byte
    luma = np.concatenate([c.luma for c in chunks])
    np.testing.assert_array_equal(luma, ffmpeg_luma(videos["moving"], 128, 72)[decoded(chunks)])


def decoded(chunks) -> list[int]:
    return [int(i) for c in chunks for i in c.index]


def test_a_damaged_tail_is_scored_on_the_frames_that_decoded(tmp_path):
    # given: an MPEG-TS clip of 50 frames cut at 60%, then garbage
    whole = tmp_path / "whole.ts"
    subprocess.run(
        ["ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=128x72:rate=25",
         "-frames:v", "50", "-c:v", "libx264", "-preset", "ultrafast", str(whole)],
        check=True,
    )  # fmt: skip
    data = whole.read_bytes()
    cut = tmp_path / "cut.ts"
    cut.write_bytes(data[: len(data) * 6 // 10] + b"\x47" + bytes(range(256)) * 3)
    # when
    stream = FrameStream(path=cut, plan=FramePlan(every_kth=8, frame_means=True), ahead=0)
    list(stream)
    report = score_video(path=cut, metric_names=["brightness", "flicker"])
    # then: one mean per decoded frame, and the metrics scored on those frames
    assert 3 <= stream.frames_decoded < 50
    assert len(stream.frame_means) == stream.frames_decoded == report.frames_decoded
    assert set(report.values) == {"brightness", "flicker"} and not report.unavailable


def test_the_decoder_takes_every_frames_mean_luma_without_keeping_the_frames(videos):
    # given: the reference, each frame's coded luma as 0-255 luma
    y = (ffmpeg_luma(videos["moving"], 128, 72) - 16.0) * 255 / 219
    for names, kept in ((["brightness", "flicker"], list(range(0, 50, 8))), (["flicker"], [])):
        plan = FramePlan.for_samplings(get_metric(n).sampling for n in names)
        stream = FrameStream(path=videos["moving"], plan=plan, chunk_size=4, ahead=0)
        # when
        chunks = list(stream)
        # then: only the sampled frames are copied out; every frame's mean is taken
        assert decoded(chunks) == kept
        np.testing.assert_allclose(stream.frame_means, y.mean(axis=(1, 2)), rtol=1e-12)


def test_the_plan_follows_what_each_metric_reads():
    plan = FramePlan.for_samplings(get_metric(n).sampling for n in ["si", "ti", "colorfulness"])
    assert (plan.every_kth, plan.with_previous, plan.all_frames) == (8, True, False)
    assert (plan.rgb_sampled, plan.rgb_uniform, plan.rgb_all) == (True, False, False)
    luma_only = FramePlan.for_samplings(get_metric(n).sampling for n in ["si_p910", "ti"])
    assert luma_only.all_frames and not (luma_only.rgb_sampled or luma_only.rgb_all)


def decoder_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "frame-decoder"]


def test_decoding_ahead_yields_what_decoding_in_step_yields(videos):
    plan = FramePlan(every_kth=8, with_previous=True, rgb_sampled=True)
    in_step = list(FrameStream(path=videos["moving"], plan=plan, chunk_size=3, ahead=0))
    ahead = FrameStream(path=videos["moving"], plan=plan, chunk_size=3, ahead=2)
    chunks = list(ahead)
    assert [c.index.tolist() for c in chunks] == [c.index.tolist() for c in in_step]
    for a, b in zip(chunks, in_step, strict=True):
        assert np.array_equal(a.luma, b.luma) and np.array_equal(a.rgb, b.rgb)
    assert ahead.frames_decoded == 50 and not decoder_threads()


def test_a_decoding_error_reaches_the_caller_and_an_early_stop_ends_the_decoder(videos, tmp_path):
    not_a_video = tmp_path / "notes.mp4"
    not_a_video.write_text("hello")
    with pytest.raises(VideoDecodeError, match="not a video: notes.mp4"):
        list(FrameStream(path=not_a_video, plan=FramePlan(all_frames=True)))
    # a consumer that stops after the first chunk (a metric failing, say)
    stream = FrameStream(path=videos["moving"], plan=FramePlan(all_frames=True), chunk_size=2)
    chunks = iter(stream)
    next(chunks)
    chunks.close()
    assert not decoder_threads()


@pytest.mark.parametrize("decoders", [1, 3])
def test_a_batch_scores_each_video_as_alone_and_a_broken_one_fails_alone(
    videos, tmp_path, decoders
):
    # given: two videos with different metric selections and a file that is not a video
    not_a_video = tmp_path / "notes.mp4"
    not_a_video.write_text("hello")
    requests = [
        VideoRequest(path=videos["moving"], metric_names=["si", "ti", "flicker"]),
        VideoRequest(path=not_a_video, metric_names=["brightness"]),
        VideoRequest(path=videos["one_frame"], metric_names=["brightness", "ti"]),
        VideoRequest(path=videos["moving"], metric_names=["clip_score"]),  # no prompt
        VideoRequest(path=videos["moving"], metric_names=WEIGHT_FREE),
    ]
    # when: one decoding pass over the batch, videos decoded side by side
    results = list(score_videos(requests, device="cpu", batch_size=4, decoders=decoders))
    # then: one outcome per request, in order, each equal to scoring the video alone
    assert [r.request for r in results] == requests
    for request, result in zip(requests, results, strict=True):
        if request.path == not_a_video:
            assert result.report is None
            assert isinstance(result.error, VideoDecodeError)
            assert "not a video: notes.mp4" in str(result.error)
            continue
        alone = score_video(
            path=request.path, metric_names=request.metric_names, device="cpu", batch_size=4
        )
        assert result.error is None
        assert result.report.values == alone.values
        assert result.report.unavailable == alone.unavailable
        assert result.report.frames_decoded == alone.frames_decoded
    assert results[2].report.unavailable == {"ti": "needs at least 9 frames, the video has 1"}
    assert results[3].report.values == {} and results[3].report.frames_decoded == 0
    assert not decoder_threads()


@pytest.mark.parametrize("decoders", [1, 2])
def test_a_batch_left_early_stops_its_decoders(videos, decoders):
    requests = [VideoRequest(path=videos["moving"], metric_names=["si_p910"])] * 4
    results = score_videos(requests, device="cpu", batch_size=2, decoders=decoders)
    first = next(results)
    assert first.report.frames_decoded == 50 and len(decoder_threads()) == decoders
    results.close()
    assert not decoder_threads()


def test_videos_decoded_side_by_side_each_come_whole_and_in_order(videos, tmp_path):
    # given: four videos of different lengths, one of them broken, for three decoders
    not_a_video = tmp_path / "notes.mp4"
    not_a_video.write_text("hello")
    paths = [videos["moving"], not_a_video, videos["one_frame"], videos["moving"]]
    plan = FramePlan(every_kth=8, with_previous=True, rgb_sampled=True)
    streams = [FrameStream(path=path, plan=plan, chunk_size=3) for path in paths]
    # when
    events = list(decode_videos(streams, decoders=3, ahead=1))
    # then: the cores are shared out among the decoders' FFmpeg threads
    assert {stream.threads for stream in streams} == {max(1, cores() // 3)}
    # then: each video's chunks in order, as it decodes alone, then its end
    for path, stream in zip(paths, streams, strict=True):
        own = [item for source, item in events if source is stream]
        *chunks, end = own
        assert isinstance(end, VideoEnd)
        if path == not_a_video:
            assert chunks == [] and isinstance(end.error, VideoDecodeError)
            continue
        alone = list(FrameStream(path=path, plan=plan, chunk_size=3, ahead=0))
        assert [c.index.tolist() for c in chunks] == [c.index.tolist() for c in alone]
        assert all(np.array_equal(a.luma, b.luma) for a, b in zip(chunks, alone, strict=True))
        assert end.error is None and end.frames_decoded == alone_frames(path)
    assert not decoder_threads()


def alone_frames(path) -> int:
    stream = FrameStream(path=path, plan=FramePlan(), ahead=0)
    (end,) = [item for _, item in decode_videos([stream], decoders=4) if isinstance(item, VideoEnd)]
    assert stream.threads == 0  # one decoder: FFmpeg's own choice
    return end.frames_decoded


def test_a_video_whose_metrics_fail_fails_alone_and_is_logged(videos, monkeypatch, caplog):
    # given: flicker breaks (the only metric asking for it is the second video's)
    def broken(mean_luma):
        raise RuntimeError("out of memory")

    monkeypatch.setattr(content, "flicker", broken)
    requests = [
        VideoRequest(path=videos["moving"], metric_names=["si"]),
        VideoRequest(path=videos["moving"], metric_names=["si", "flicker"]),
        VideoRequest(path=videos["moving"], metric_names=["ti"]),
    ]
    # when
    results = list(score_videos(requests, device="cpu", batch_size=4, decoders=2))
    # then: the second has its error; the others are scored
    assert str(results[1].error) == "out of memory" and results[1].report is None
    assert set(results[0].report.values) == {"si"} and set(results[2].report.values) == {"ti"}
    assert "scoring" in caplog.text and "moving.mp4 failed" in caplog.text
    assert not decoder_threads()


def test_an_unknown_metric_in_a_batch_is_refused_before_decoding(videos):
    requests = [VideoRequest(path=videos["moving"]), VideoRequest(videos["moving"], None, ["x"])]
    with pytest.raises(KeyError, match="unknown metric 'x'"):
        next(score_videos(requests, device="cpu"))
    assert not decoder_threads()


@pytest.mark.parametrize("batch_size", [3, 64])
def test_score_video_equals_the_formulas_on_ffmpeg_decoded_frames(videos, batch_size):
    # given: the reference frames, decoded by the ffmpeg command line: RGB, and the coded
    # luma (limited range) as 0-255 luma, which is how siti-tools reads it
    rgb = ffmpeg_frames(videos["moving"], 128, 72)
    y = (ffmpeg_luma(videos["moving"], 128, 72) - 16.0) * 255 / 219
    sampled = list(range(0, 50, 8))
    # when
    report = score_video(path=videos["moving"], device="cpu", batch_size=batch_size)
    # then
    v = report.values
    assert report.frames_decoded == 50 and report.device == "cpu"
    assert sorted(v) == sorted(WEIGHT_FREE)
    assert set(report.unavailable) == {"clip_cosine", "clip_score", "subject_consistency"}
    assert v["brightness"] == pytest.approx(y[sampled].mean(), rel=1e-4)
    assert v["contrast"] == pytest.approx(np.mean([y[i].std() for i in sampled]), rel=1e-4)
    r, g, b = (rgb[sampled, ..., c].astype(np.float64) for c in range(3))
    rg, yb = r - g, 0.5 * (r + g) - b
    colorfulness = np.hypot(rg.std(axis=(1, 2)), yb.std(axis=(1, 2))) + 0.3 * np.hypot(
        rg.mean(axis=(1, 2)), yb.mean(axis=(1, 2))
    )
    assert v["colorfulness"] == pytest.approx(colorfulness.mean(), rel=1e-4)
    laplace = [ndimage.laplace(y[i])[1:-1, 1:-1].var() for i in sampled]
    assert v["sharpness"] == pytest.approx(np.mean(laplace), rel=1e-4)
    si = [SiTiCalculator.si(y[i]) for i in range(50)]
    ti = [SiTiCalculator.ti(y[i], y[i - 1]) for i in range(1, 50)]
    assert v["si"] == pytest.approx(np.mean([si[i] for i in sampled]), rel=1e-4)
    assert v["ti"] == pytest.approx(np.mean([ti[i - 1] for i in sampled[1:]]), rel=1e-4)
    assert v["si_p910"] == pytest.approx(max(si), rel=1e-4)
    assert v["ti_p910"] == pytest.approx(max(ti), rel=1e-4)
    motion = [np.abs(y[i] - y[i - 1]).mean() for i in sampled[1:]]
    assert v["motion"] == pytest.approx(np.mean(motion), rel=1e-4)
    means = y.mean(axis=(1, 2))
    assert v["flicker"] == pytest.approx(np.abs(np.diff(means, 2)).mean(), rel=1e-3, abs=1e-4)


def test_legacy_si_ti_match_siti_tools_on_the_file(videos):
    # siti-tools decodes the file itself and reads the coded Y plane (limited range,
    # rescaled to 0-255), as we do: the values agree to float32 rounding
    calculator = SiTiCalculator(legacy=True)
    si, ti, count = calculator.calculate(str(videos["moving"]))
    report = score_video(path=videos["moving"], metric_names=["si_p910", "ti_p910", "si"])
    assert count == 50
    assert report.values["si_p910"] == pytest.approx(max(si), rel=1e-5)
    assert report.values["ti_p910"] == pytest.approx(max(ti), rel=1e-5)
    assert report.values["si"] == pytest.approx(np.mean(si[::8]), rel=1e-5)


def test_integer_luma_codes_give_the_float_formulas_exactly():
    # given: 8-bit codes, as the decoder hands them over, and the same values as float64
    codes = RNG.integers(0, 256, size=(3, 37, 53), dtype=np.uint8)
    as_float = codes.astype(np.float64)
    t = torch.from_numpy(codes)
    # then: the 16-bit integer paths equal the references on float values
    np.testing.assert_allclose(content.brightness(t), as_float.mean(axis=(1, 2)), rtol=1e-12)
    np.testing.assert_allclose(content.contrast(t), as_float.std(axis=(1, 2)), rtol=1e-5)
    laplace = [ndimage.laplace(f)[1:-1, 1:-1].var() for f in as_float]
    np.testing.assert_allclose(content.sharpness(t), laplace, rtol=1e-5)
    np.testing.assert_allclose(
        content.spatial_information(t), [SiTiCalculator.si(f) for f in as_float], rtol=1e-5
    )
    ti = [SiTiCalculator.ti(as_float[i], as_float[i - 1]) for i in (1, 2)]
    np.testing.assert_allclose(content.temporal_information(t[1:], t[:-1]), ti, rtol=1e-5)
    motion = np.abs(np.diff(as_float, axis=0)).mean(axis=(1, 2))
    np.testing.assert_allclose(content.motion(t[1:], t[:-1]), motion, rtol=1e-12)


def test_luma_ranges_map_codes_to_0_255():
    assert LIMITED_RANGE.level(torch.tensor([16.0, 235.0])).tolist() == [0.0, 255.0]
    assert FULL_RANGE.level(torch.tensor([0.0, 255.0])).tolist() == [0.0, 255.0]
    assert LIMITED_RANGE.gain == pytest.approx(255 / 219)


@pytest.mark.parametrize(
    ("pix_fmt", "extension", "luma_range"),
    [("yuvj420p", "mp4", FULL_RANGE), ("yuv420p10le", "mkv", LIMITED_RANGE)],
)
def test_full_range_and_10_bit_video_are_read_in_their_range(
    tmp_path, pix_fmt, extension, luma_range
):
    # given: a flat grey picture coded full range (JPEG-style) or in 10 bits
    path = tmp_path / f"grey.{extension}"
    subprocess.run(
        [
            "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i",
            "color=c=0x808080:size=64x48:rate=8", "-frames:v", "3", "-c:v", "libx264",
            "-qp", "0", "-pix_fmt", pix_fmt, str(path),
        ],
        check=True,
    )  # fmt: skip
    # when
    chunks = list(FrameStream(path=path, plan=FramePlan(all_frames=True)))
    report = score_video(path=path, metric_names=["brightness", "contrast"], device="cpu")
    # then: mid grey is mid luma whatever the coding
    assert chunks[0].luma_range == luma_range
    assert report.values["brightness"] == pytest.approx(128, abs=1.0)
    assert report.values["contrast"] == 0.0


def test_the_range_flag_of_a_plain_yuv_frame_decides_its_luma_range():
    # given: one yuv420p frame (Y = 100 everywhere), first unflagged, then flagged full range
    frame = av.VideoFrame.from_ndarray(np.full((72, 64), 100, np.uint8), format="yuv420p")
    luma, luma_range = luma_plane(frame)
    assert luma.shape == (48, 64) and (luma == 100).all() and luma_range == LIMITED_RANGE
    # when
    frame.color_range = 2  # AVCOL_RANGE_JPEG, as decoders mark full-range yuv420p
    # then
    assert luma_plane(frame)[1] == FULL_RANGE


def test_a_gif_is_scored_from_its_palette_frames(tmp_path):
    # given: a GIF (palette frames, no YUV plane), converted to luma by swscale
    path = tmp_path / "clip.gif"
    subprocess.run(
        [
            "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i",
            "color=c=white:size=32x32:rate=8", "-frames:v", "3", str(path),
        ],
        check=True,
    )  # fmt: skip
    reference = bt601(ffmpeg_frames(path, 32, 32)[0])  # the palette's near-whites
    # when
    report = score_video(path=path, metric_names=["brightness", "sharpness"], device="cpu")
    # then: BT.601 luma of the decoded RGB, up to swscale's 8-bit rounding
    assert report.values["brightness"] == pytest.approx(reference.mean(), abs=0.6)
    assert report.frames_decoded == 3 and report.values["sharpness"] > 0


def test_a_single_frame_has_no_temporal_metrics(videos):
    report = score_video(
        path=videos["one_frame"],
        metric_names=["brightness", "ti", "ti_p910", "motion", "flicker"],
    )
    assert list(report.values) == ["brightness"]
    assert report.unavailable == {
        "ti": "needs at least 9 frames, the video has 1",
        # one pair of consecutive frames (before: "needs at least 1 frames, the video has 1")
        "ti_p910": "needs at least 2 frames, the video has 1",
        "motion": "needs at least 9 frames, the video has 1",
        "flicker": "needs at least 3 frames, the video has 1",
    }


@pytest.mark.parametrize(("frames", "has_ti"), [(8, False), (9, True)])
def test_ti_needs_the_frame_after_its_first_sampled_pair(tmp_path, frames, has_ti):
    # GAIA's TI reads frames 0, 8, 16, ... each with the frame before: frame 8 is its first
    path = make_clip(tmp_path / "short.mp4", size="32x32", rate=10, frames=frames)
    report = score_video(path=path, metric_names=["ti", "motion"], device="cpu")
    assert ("ti" in report.values) is has_ti
    if not has_ti:
        assert report.unavailable["ti"] == "needs at least 9 frames, the video has 8"


def test_registry_declares_every_metric():
    for metric in available_metrics():
        assert metric.name and metric.version and metric.definition
        assert metric.sampling.describe()
    assert get_metric("si").sampling.every_kth == 8
    assert get_metric("si_p910").reduce == "max" and get_metric("si_p910").sampling.all_frames
    assert get_metric("clip_score").sampling.uniform == 8
    assert "520" in get_metric("clip_score").sampling.resolution
    with pytest.raises(KeyError, match="unknown metric 'nope'"):
        get_metric("nope")


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_device_is_cpu_without_cuda_and_asking_for_cuda_is_an_error():
    assert pick_device(None) == "cpu"
    with pytest.raises(ValueError, match="CUDA is not available"):
        pick_device("cuda")


def run_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "media_pipeline", "score", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_score_cli_prints_one_json_object(videos):
    ok = run_cli(videos["moving"], "--metrics", "brightness,si", "--device", "cpu")
    assert ok.returncode == 0, ok.stderr
    body = json.loads(ok.stdout)
    assert body["video"] == str(videos["moving"]) and body["device"] == "cpu"
    assert sorted(body["metrics"]) == ["brightness", "si"] and body["unavailable"] == {}
    direct = score_video(path=videos["moving"], metric_names=["brightness", "si"])
    assert body["metrics"] == direct.values


def test_score_cli_refuses_what_it_cannot_score(tmp_path):
    notes = tmp_path / "notes.mp4"
    notes.write_text("these are my notes, not a video\n")
    bad = run_cli(notes)
    assert bad.returncode == 2 and bad.stderr.startswith("error: not a video: notes.mp4")
    assert bad.stdout == ""
    missing = run_cli(tmp_path / "absent.mp4")
    assert missing.returncode == 2 and "no such file" in missing.stderr
    unknown = run_cli(notes, "--metrics", "brightness,nope")
    assert unknown.returncode == 2 and "unknown metric 'nope'" in unknown.stderr


@pytest.mark.parametrize(
    ("codec", "demuxer"), [("png", "png_pipe"), ("mjpeg", "jpeg_pipe")], ids=["png", "jpeg"]
)
def test_score_cli_refuses_a_still_image_named_as_a_video(tmp_path, codec, demuxer):
    # given: one picture written under a video's name (libav would decode it as one frame)
    still = tmp_path / "still.mp4"
    subprocess.run(
        [
            "ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi",
            "-i", "testsrc2=size=64x48", "-frames:v", "1", "-f", "image2", "-c:v", codec,
            str(still),
        ],
        check=True,
    )  # fmt: skip
    # when
    result = run_cli(still, "--metrics", "brightness", "--device", "cpu")
    # then: refused as the transcode's probe refuses it, nothing on stdout
    assert result.returncode == 2
    assert result.stderr == (
        f"error: not a video: still.mp4 is a still image ({demuxer}), not a video\n"
    )
    assert result.stdout == ""


def test_score_cli_refuses_text_art(tmp_path):
    # given: notes that libav would play as ANSI art
    notes = tmp_path / "notes.ans"
    notes.write_text("these are my notes, not a video\n" * 40)
    # when
    result = run_cli(notes, "--metrics", "brightness", "--device", "cpu")
    # then
    assert result.returncode == 2
    assert result.stderr == "error: not a video: notes.ans is text (tty), not a video\n"
    assert result.stdout == ""


def test_cpu_scoring_gives_back_the_processes_torch_threads(videos):
    # the pass computes on one thread beside the decoder, then restores the setting
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        score_video(path=videos["moving"], metric_names=["si"], device="cpu")
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_take_rows_gives_the_rows_asked_for_as_views_where_evenly_spaced():
    frames = torch.arange(10 * 2).reshape(10, 2)
    for rows in ([], [3], [1, 3, 5, 7], [0, 9], [2, 3, 7], [4, 6, 7]):
        taken = take_rows(frames, np.asarray(rows, dtype=np.int64))
        assert taken.tolist() == frames[rows].tolist()
    assert take_rows(frames, np.asarray([1, 3, 5])).data_ptr() == frames[1].data_ptr()


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's allocator only")
def test_cpu_scoring_asks_glibc_to_keep_freed_memory():
    # mallopt answers 0 for a setting it refuses (an unknown parameter, a value too large)
    assert keep_freed_memory() is True


@pytest.mark.parametrize(
    ("option", "said"),
    [
        (["--batch-size", "-3"], "batch size must be at least 1 frame"),
        (["--batch-size", "0"], "batch size must be at least 1 frame"),
        (["--device", "bogus"], "unknown device 'bogus'"),
        (["--metrics", ","], "names no metric"),
    ],
)
def test_score_cli_refuses_options_it_cannot_use(videos, option, said):
    # before: a negative batch size never ended, an unknown device was a traceback, and
    # "--metrics ," scored nothing with exit 0
    result = run_cli(videos["moving"], *option)
    assert result.returncode == 2 and said in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
