"""The metrics on every device this machine has (CPU always, CUDA where present), on clips
written and read back with PyAV alone: no ffmpeg command line and no database, so the
module runs as it is on a GPU machine that has neither
(`python -m pytest --noconftest -p no:django tests/media_pipeline/test_metrics_devices.py`).

Oracles: numpy and scipy formulas on the coded Y plane and RGB that PyAV's own
`to_ndarray` gives (not the pass's plane reading), the ITU's siti-tools decoding the file
itself, transformers' own models on the same pixels, and on CUDA the CPU's results.
"""

from __future__ import annotations

import functools
from pathlib import Path

import av
import numpy as np
import pytest
import torch
from scipy import ndimage
from siti_tools.siti import SiTiCalculator

from media_pipeline.metrics.batching import BATCH_PIXELS, MAX_CUDA_BATCH, FrameBatches
from media_pipeline.metrics.decode import FramePlan, FrameStream
from media_pipeline.metrics.registry import available_metrics
from media_pipeline.metrics.scoring import (
    VideoRequest,
    score_video,
    score_videos,
    size_for_frame,
)
from tests.media_pipeline.metrics_fixtures import tiny_weights

CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")
DEVICES = ["cpu", pytest.param("cuda", marks=CUDA)]
WEIGHT_FREE = [m.name for m in available_metrics() if not m.weights]


def write_clip(path: Path, *, width: int, height: int, frames: int, rate: int = 25) -> Path:
    """Lossless H.264 (qp 0, yuv420p) through PyAV: a moving colour pattern with noise, so
    every feature (motion, flicker, colour) has something to measure."""
    rng = np.random.default_rng(width * height + frames)
    yy, xx = np.mgrid[0:height, 0:width]
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=rate)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = {"qp": "0", "preset": "ultrafast"}
        for i in range(frames):
            phase = 2 * np.pi * (xx + 3 * i) / max(8, width // 4)
            red = 128 + 100 * np.sin(phase)
            green = 128 + 100 * np.cos(2 * np.pi * (yy - 2 * i) / max(8, height // 3))
            blue = np.full_like(red, 60 + 40 * (i % 3))
            rgb = np.stack([red, green, blue], axis=-1) + rng.normal(0, 12, (height, width, 3))
            frame = av.VideoFrame.from_ndarray(rgb.clip(0, 255).astype(np.uint8), format="rgb24")
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


def read_back(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Every frame's coded luma as 0-255 luma (F, H, W) float64, from PyAV's yuv420p
    ndarray (its first H rows are the Y plane), and RGB (F, H, W, 3) from its rgb24."""
    luma, rgb = [], []
    with av.open(str(path)) as container:
        for frame in container.decode(video=0):
            assert frame.format.name == "yuv420p"
            luma.append(frame.to_ndarray()[: frame.height].astype(np.float64))
            rgb.append(frame.to_ndarray(format="rgb24").astype(np.float64))
    return (np.stack(luma) - 16) * 255 / 219, np.stack(rgb)


@pytest.fixture(scope="module")
def clips(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("device_clips")
    return {
        # 50 frames: sampled 0, 8, ..., 48; the pairs (7, 8), (15, 16)... straddle chunks
        "small": write_clip(folder / "small.mp4", width=128, height=72, frames=50),
        "full_hd": write_clip(folder / "full_hd.mp4", width=1920, height=1080, frames=10),
    }


def formulas(luma: np.ndarray, rgb: np.ndarray) -> dict[str, float]:
    """Every weight-free metric written out in numpy and scipy (GAIA: every 8th frame)."""
    sampled = list(range(0, len(luma), 8))
    r, g, b = (rgb[sampled, ..., c] for c in range(3))
    rg, yb = r - g, 0.5 * (r + g) - b
    colourful = np.hypot(rg.std(axis=(1, 2)), yb.std(axis=(1, 2))) + 0.3 * np.hypot(
        rg.mean(axis=(1, 2)), yb.mean(axis=(1, 2))
    )
    si = [SiTiCalculator.si(frame) for frame in luma]
    ti = [SiTiCalculator.ti(luma[i], luma[i - 1]) for i in range(1, len(luma))]
    means = luma.mean(axis=(1, 2))
    return {
        "brightness": luma[sampled].mean(),
        "contrast": np.mean([luma[i].std() for i in sampled]),
        "colorfulness": colourful.mean(),
        "sharpness": np.mean([ndimage.laplace(luma[i])[1:-1, 1:-1].var() for i in sampled]),
        "si": np.mean([si[i] for i in sampled]),
        "ti": np.mean([ti[i - 1] for i in sampled[1:]]),
        "si_p910": max(si),
        "ti_p910": max(ti),
        "motion": np.mean([np.abs(luma[i] - luma[i - 1]).mean() for i in sampled[1:]]),
        "flicker": np.abs(np.diff(means, 2)).mean(),
    }


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("clip", ["small", "full_hd"])
def test_every_weight_free_metric_equals_the_formulas(clips, clip, device):
    # given
    expected = formulas(*read_back(clips[clip]))
    # when: a batch smaller than a chunk of sampled frames, so values join across batches
    report = score_video(path=clips[clip], metric_names=WEIGHT_FREE, device=device, batch_size=3)
    # then
    assert report.device == device and sorted(report.values) == sorted(WEIGHT_FREE)
    for name, value in expected.items():
        assert report.values[name] == pytest.approx(value, rel=1e-4, abs=1e-4), name


@pytest.mark.parametrize("device", DEVICES)
def test_p910_si_and_ti_equal_siti_tools_decoding_the_file(clips, device):
    si, ti, count = SiTiCalculator(legacy=True).calculate(str(clips["small"]))
    report = score_video(path=clips["small"], metric_names=["si_p910", "ti_p910"], device=device)
    assert count == 50
    assert report.values["si_p910"] == pytest.approx(max(si), rel=1e-5)
    assert report.values["ti_p910"] == pytest.approx(max(ti), rel=1e-5)


def test_a_stream_sizes_its_chunks_from_the_frame_size_once_the_video_is_open(clips):
    asked: list[int] = []

    def chunk_for_pixels(pixels: int) -> int:
        asked.append(pixels)
        return 7

    plan = FramePlan(every_kth=0, all_frames=True, rgb_all=True)
    stream = FrameStream(path=clips["small"], plan=plan, chunk_for_pixels=chunk_for_pixels)
    chunks = list(stream)
    assert asked == [128 * 72] and stream.chunk_size == 7
    assert [len(c.index) for c in chunks] == [7] * 7 + [1]
    assert not chunks[0].luma.is_pinned()


def test_the_decoder_sizes_the_videos_batch_from_its_frames_and_the_free_memory(clips):
    # given: a quarter of 1 GiB holds 4 1920x1080 frames at 32 bytes a pixel
    batches = FrameBatches(32, "cuda")
    plan = FramePlan(every_kth=0, all_frames=True, rgb_all=True)
    sizing = functools.partial(size_for_frame, batches, 2**30)
    stream = FrameStream(path=clips["full_hd"], plan=plan, chunk_size=32, chunk_for_pixels=sizing)
    # when
    chunks = list(stream)
    # then: the metrics' batches and the decoder's chunks, 10 frames in all
    assert batches.size == stream.chunk_size == 4
    assert [len(c.index) for c in chunks] == [4, 4, 2]


@CUDA
def test_on_cuda_chunks_are_page_locked_and_each_video_batched_by_its_frame_size(clips):
    # given: memory enough that the pixels per batch, not the memory, set the size
    if torch.cuda.mem_get_info()[0] < 4 * 2**30:
        pytest.skip("under 4 GiB of free GPU memory: the memory would set the batch")
    plan = FramePlan(every_kth=0, all_frames=True, rgb_all=True)
    chunk = next(iter(FrameStream(path=clips["small"], plan=plan, pinned=True)))
    assert chunk.luma.is_pinned() and chunk.rgb.is_pinned()
    # when
    requests = [VideoRequest(path=path, metric_names=WEIGHT_FREE) for path in clips.values()]
    sizes = [scored.report.batch_size for scored in score_videos(requests, device="cuda")]
    # then: 128x72 frames up to the cap, 1080p ones 8 (16 Mi pixels)
    assert sizes == [MAX_CUDA_BATCH, BATCH_PIXELS // (1920 * 1080)] == [64, 8]


@CUDA
@pytest.mark.parametrize("batch_size", [4, 32])
def test_cuda_gives_the_cpu_values_in_a_batch_decoded_side_by_side(clips, batch_size):
    requests = [VideoRequest(path=path, metric_names=WEIGHT_FREE) for path in clips.values()]
    on_cpu = [s.report.values for s in score_videos(requests, device="cpu", decoders=1)]
    on_cuda = list(score_videos(requests, device="cuda", batch_size=batch_size, decoders=2))
    for cpu_values, scored in zip(on_cpu, on_cuda, strict=True):
        assert scored.error is None and scored.report.device == "cuda"
        assert scored.report.batch_size == batch_size
        for name, value in cpu_values.items():
            assert scored.report.values[name] == pytest.approx(value, rel=1e-5, abs=1e-6), name


@pytest.fixture(scope="module")
def weights(tmp_path_factory):
    return tiny_weights(tmp_path_factory.mktemp("weights"))


@CUDA
def test_checkpoint_metrics_on_cuda_give_the_cpu_values(clips, weights):
    folder, pins = weights
    names = ["clip_cosine", "clip_score", "subject_consistency"]
    kwargs = {"prompt": "a person waves hand", "weights_dir": folder, "weight_sha256": pins}
    on_cpu = score_video(path=clips["small"], metric_names=names, device="cpu", **kwargs)
    on_cuda = score_video(path=clips["small"], metric_names=names, device="cuda", **kwargs)
    assert on_cpu.unavailable == {} and on_cuda.unavailable == {}
    for name in names:
        assert on_cuda.values[name] == pytest.approx(on_cpu.values[name], abs=1e-4), name
