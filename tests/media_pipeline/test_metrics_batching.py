"""Frames per batch: the CUDA size from free memory, and halving on out-of-memory, on CPU
by functions that raise torch's out-of-memory error above 3 frames."""

import logging

import pytest
import torch

from media_pipeline.metrics import batching, content
from media_pipeline.metrics.batching import (
    MAX_CUDA_BATCH,
    FrameBatches,
    batch_for_memory,
    default_batch_size,
)
from media_pipeline.metrics.checkpoints import ClipScorer, DinoScorer
from media_pipeline.metrics.scoring import VideoRequest, score_video, score_videos
from tests.media_pipeline.metrics_fixtures import make_clip, tiny_weights

GIB = 2**30
FULL_HD = 1920 * 1080


def fits_three(fn, calls: list[int]):
    """fn, raising CUDA's out-of-memory error when given more than 3 frames."""

    def wrapper(*args, **kwargs):
        frames = next(a for a in args if isinstance(a, torch.Tensor)).shape[0]
        calls.append(frames)
        if frames > 3:
            raise torch.OutOfMemoryError("CUDA out of memory")
        return fn(*args, **kwargs)

    return wrapper


def warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == batching.__name__]


def difference(current, previous, luma_range, *, scale):
    return (current - previous).sum(dim=(1, 2)) * scale + luma_range


def test_a_batch_out_of_memory_is_computed_again_in_halves(caplog):
    # given: 10 frame pairs, a non-tensor argument and a keyword argument
    current, previous = torch.rand(10, 4, 5), torch.rand(10, 4, 5)
    whole = difference(current, previous, 16, scale=2.0)
    calls: list[int] = []
    batches = FrameBatches(16, "cuda:0")
    # when
    with caplog.at_level(logging.WARNING, logger=batching.__name__):
        values = batches.compute(fits_three(difference, calls), current, previous, 16, scale=2.0)
    # then: 10 and 5 frames failed; 3 fitted, and stays the size
    assert torch.equal(values, whole)
    assert calls == [10, 5, 3, 3, 3, 1]
    assert batches.size == 3
    assert warnings(caplog) == [
        "out of memory on cuda:0 at 10 frames per batch: batch size 5 from now on",
        "out of memory on cuda:0 at 5 frames per batch: batch size 3 from now on",
    ]
    # when: the next call starts from the size that fitted
    calls.clear()
    batches.compute(fits_three(difference, calls), current, previous, 16, scale=2.0)
    # then
    assert calls == [3, 3, 3, 1]


def test_out_of_memory_at_one_frame_is_raised():
    # given
    calls: list[int] = []

    def never_fits(frames):
        calls.append(frames.shape[0])
        raise torch.OutOfMemoryError("CUDA out of memory")

    batches = FrameBatches(16, "cuda")
    # when / then
    with pytest.raises(torch.OutOfMemoryError):
        batches.compute(never_fits, torch.rand(4, 2))
    assert calls == [4, 2, 1]
    assert batches.size == 1


@pytest.fixture(scope="module")
def moving(tmp_path_factory):
    return make_clip(
        tmp_path_factory.mktemp("oom") / "moving.mp4", size="64x48", rate=25, frames=50
    )


def test_a_feature_out_of_memory_halves_the_batch_for_the_rest_of_the_video(
    moving, monkeypatch, caplog
):
    # given: si_p910 reads every frame, so SI runs on each 16-frame chunk
    names = ["si", "si_p910", "brightness", "ti"]
    expected = score_video(path=moving, metric_names=names, device="cpu", batch_size=16)
    calls: list[int] = []
    monkeypatch.setattr(
        content, "spatial_information", fits_three(content.spatial_information, calls)
    )
    # when
    with caplog.at_level(logging.WARNING, logger=batching.__name__):
        report = score_video(path=moving, metric_names=names, device="cpu", batch_size=16)
    # then: the first chunk failed at 16, 8 and 4 frames; the later ones went 2 at a time
    assert report.values == pytest.approx(expected.values, rel=1e-6)
    assert report.batch_size == 2
    assert [c for c in calls if c > 3] == [16, 8, 4]
    assert sum(c for c in calls if c <= 3) == 50
    assert len(warnings(caplog)) == 3


def test_out_of_memory_at_one_frame_fails_that_video_alone(moving, monkeypatch):
    # given
    def never_fits(y):
        raise torch.OutOfMemoryError("CUDA out of memory")

    monkeypatch.setattr(content, "spatial_information", never_fits)
    requests = [
        VideoRequest(path=moving, metric_names=["si"]),
        VideoRequest(path=moving, metric_names=["brightness"]),
    ]
    # when
    first, second = score_videos(requests, device="cpu", batch_size=4)
    # then
    assert isinstance(first.error, torch.OutOfMemoryError) and first.report is None
    assert second.error is None and set(second.report.values) == {"brightness"}


@pytest.fixture(scope="module")
def weights(tmp_path_factory):
    return tiny_weights(tmp_path_factory.mktemp("weights"))


@pytest.mark.parametrize(
    ("scorer", "method", "metric", "size", "frames", "failed", "fitted"),
    [
        # CLIP's 8 uniform frames: 8 and 4 fail
        (ClipScorer, "_cosines", "clip_cosine", "80x60", 20, [8, 4], 2),
        # DINO's every frame, in one 6-frame chunk: 6 fails
        (DinoScorer, "features", "subject_consistency", "256x224", 6, [6], 3),
    ],
)
def test_a_model_batch_out_of_memory_is_computed_again_in_halves(
    weights, tmp_path, monkeypatch, scorer, method, metric, size, frames, failed, fitted
):
    # given
    folder, pins = weights
    video = make_clip(tmp_path / "clip.mp4", size=size, rate=10, frames=frames)
    kwargs = dict(
        path=video,
        prompt="a person waves hand",
        metric_names=[metric],
        weights_dir=folder,
        weight_sha256=pins,
        device="cpu",
        batch_size=16,
    )
    expected = score_video(**kwargs).values[metric]
    calls: list[int] = []
    monkeypatch.setattr(scorer, method, fits_three(getattr(scorer, method), calls))
    # when
    report = score_video(**kwargs)
    # then
    assert report.values[metric] == pytest.approx(expected, abs=1e-6)
    assert report.batch_size == fitted
    assert [c for c in calls if c > 3] == failed


def test_the_cuda_batch_is_16_mebipixels_as_far_as_a_quarter_of_the_free_memory_holds():
    # a 1080p frame: 32 * 2,073,600 = 66,355,200 bytes; a quarter of 1 GiB (268,435,456
    # bytes) holds 4 of them, a quarter of 8 GiB 32, but 16 Mi pixels are 8 such frames
    assert batch_for_memory(GIB, FULL_HD) == 4
    assert batch_for_memory(8 * GIB, FULL_HD) == 8
    # 720p: 8 GiB would hold 72 frames; 16,777,216 pixels are 18 frames of 921,600
    assert batch_for_memory(8 * GIB, 1280 * 720) == 18
    # 512x288: 113 frames' worth of pixels, capped
    assert batch_for_memory(80 * GIB, 512 * 288) == MAX_CUDA_BATCH == 64
    sizes = [batch_for_memory(free * 2**20, FULL_HD) for free in (0, 64, 256, 512, 1024, 2048)]
    assert sizes == [1, 1, 1, 2, 4, 8]


def test_the_default_batch_reads_the_devices_free_memory(monkeypatch):
    # given
    asked: list[str] = []

    def mem_get_info(device):
        asked.append(device)
        return GIB, 80 * GIB

    monkeypatch.setattr(torch.cuda, "mem_get_info", mem_get_info)
    # when / then
    assert default_batch_size("cuda:1") == 4
    assert default_batch_size("cuda", frame_pixels=1280 * 720) == 9
    assert asked == ["cuda:1", "cuda"]
    assert default_batch_size("cpu") == 4
