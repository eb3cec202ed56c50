"""Per-frame features shared by the content metrics: each computed once per frame, the
every-k-th ones in batches of sampled frames, whatever the chunking of the decoded video."""

import numpy as np
import pytest
import torch

from media_pipeline.metrics import content
from media_pipeline.metrics.batching import FrameBatches
from media_pipeline.metrics.content import FULL_RANGE, LIMITED_RANGE
from media_pipeline.metrics.decode import DecodedChunk
from media_pipeline.metrics.frame_features import FrameFeatures
from media_pipeline.metrics.registry import get_metric
from media_pipeline.metrics.scoring import score_video
from media_pipeline.metrics.video_pass import Clock
from tests.media_pipeline.metrics_fixtures import make_clip

RNG = np.random.default_rng(5)


@pytest.fixture(scope="module")
def moving(tmp_path_factory):
    return make_clip(
        tmp_path_factory.mktemp("features") / "m.mp4", size="96x64", rate=25, frames=50
    )


def counting(monkeypatch, name: str) -> list[int]:
    """Replaces content.<name> by a wrapper that records how many frames each call gets."""
    calls: list[int] = []
    original = getattr(content, name)

    def wrapper(frames, *rest):
        calls.append(frames.shape[0])
        return original(frames, *rest)

    monkeypatch.setattr(content, name, wrapper)
    return calls


def test_a_feature_two_metrics_read_is_computed_once_per_frame(moving, monkeypatch):
    # given
    alone = score_video(path=moving, metric_names=["si", "ti"], batch_size=4).values
    si_calls = counting(monkeypatch, "spatial_information")
    # when: si (every 8th frame) and si_p910 (every frame) read one SI per frame
    report = score_video(path=moving, metric_names=["si", "si_p910", "ti", "ti_p910"], batch_size=4)
    # then: 50 frames' SI, not 50 + 7; the every-8th values are those of si alone
    assert sum(si_calls) == 50
    assert report.values["si"] == pytest.approx(alone["si"], rel=1e-6)
    assert report.values["ti"] == pytest.approx(alone["ti"], rel=1e-6)
    # the shared time is shared out: half to each reader
    assert report.runtimes["si"] == report.runtimes["si_p910"] > 0


def test_every_kth_features_are_computed_in_batches_of_sampled_frames(moving, monkeypatch):
    # given: P.910's SI wants every frame, so each 4-frame chunk has 0 or 1 sampled frame
    contrast_calls = counting(monkeypatch, "contrast")
    motion_calls = counting(monkeypatch, "motion")
    # when
    score_video(path=moving, metric_names=["contrast", "motion", "si_p910"], batch_size=4)
    # then: frames 0, 8, ..., 48 in batches of 4; the pairs ending at 8, ..., 48 with them
    # (frame 0 has no pair)
    assert contrast_calls == [4, 3]
    assert motion_calls == [3, 3]


def chunk(first: int, luma: np.ndarray, luma_range=LIMITED_RANGE) -> DecodedChunk:
    index = np.arange(first, first + len(luma))
    sampled = index[index % 8 == 0]
    rgb = RNG.integers(0, 256, size=(len(sampled), 3, *luma.shape[1:]), dtype=np.uint8)
    return DecodedChunk(index, torch.from_numpy(luma), luma_range, sampled, torch.from_numpy(rgb))


def features_of(chunks, names, *, batch_size=3):
    metrics = [get_metric(name) for name in names]
    batches = FrameBatches(batch_size, "cpu")
    features = FrameFeatures(metrics, batches=batches, every_kth=8, clock=Clock("cpu"))
    for decoded in chunks:
        features.feed(decoded, luma=decoded.luma, rgb=decoded.rgb)
    features.flush()
    return {metric.name: features.values(metric) for metric in metrics}


@pytest.mark.parametrize("sizes", [[20], [1, 7, 1, 11], [5, 5, 5, 5]])
def test_values_do_not_depend_on_how_the_video_is_chunked(sizes):
    # given: 20 frames, split into chunks in different ways
    luma = RNG.integers(16, 236, size=(20, 12, 10), dtype=np.uint8)
    starts = np.cumsum([0, *sizes[:-1]])
    chunks = [chunk(s, luma[s : s + n]) for s, n in zip(starts, sizes, strict=True)]
    names = ["si", "si_p910", "ti", "ti_p910", "motion", "brightness"]
    # when
    values = features_of(chunks, names)
    # then: what the formulas give on the whole video at once
    y = torch.from_numpy(luma)
    gain = LIMITED_RANGE.gain
    si = gain * content.spatial_information(y)
    ti = gain * content.temporal_information(y[1:], y[:-1])
    torch.testing.assert_close(values["si_p910"], si)
    torch.testing.assert_close(values["si"], si[::8])
    torch.testing.assert_close(values["ti_p910"], ti)
    torch.testing.assert_close(values["ti"], ti[7::8])  # the pairs ending at frames 8, 16
    motion = gain * content.motion(y[[8, 16]], y[[7, 15]])
    torch.testing.assert_close(values["motion"], motion)
    means = LIMITED_RANGE.level(content.brightness(y))
    torch.testing.assert_close(values["brightness"], means[::8])


def test_a_change_of_size_or_range_mid_stream_starts_a_new_batch():
    # given: frames 0-7 at 12x10 in limited range, then 8-16 at 6x8 in full range
    first = RNG.integers(16, 236, size=(8, 12, 10), dtype=np.uint8)
    second = RNG.integers(0, 256, size=(9, 6, 8), dtype=np.uint8)
    chunks = [chunk(0, first), chunk(8, second, FULL_RANGE)]
    # when
    values = features_of(chunks, ["contrast", "ti", "colorfulness"], batch_size=8)
    # then: each frame read in its own size and range
    expected = [
        LIMITED_RANGE.gain * content.contrast(torch.from_numpy(first[[0]])),
        FULL_RANGE.gain * content.contrast(torch.from_numpy(second[[0, 8]])),
    ]
    torch.testing.assert_close(values["contrast"], torch.cat(expected))
    # no pair across the change (8 after 7): only the pair ending at 16
    ti = FULL_RANGE.gain * content.temporal_information(
        torch.from_numpy(second[8:9]), torch.from_numpy(second[7:8])
    )
    torch.testing.assert_close(values["ti"], ti)
    colorfulness = [content.colorfulness(c.rgb) for c in chunks]
    torch.testing.assert_close(values["colorfulness"], torch.cat(colorfulness))
