"""The metrics of one video, fed its decoded chunks in order (`VideoPass`).

The content metrics' per-frame features are computed as the video decodes
(`FrameFeatures`); the frame views of the checkpoint metrics (8 uniform frames for CLIP,
every frame at 224 for DINO) are gathered from the same chunks and scored in `finish`,
after the video's last chunk. Passes of several videos can be fed interleaved: each keeps
its own state, its frames per batch included (`FrameBatches`: halved on out-of-memory).
"""

from __future__ import annotations

import contextlib
import time

import numpy as np
import torch

from media_pipeline.metrics import content, preprocess
from media_pipeline.metrics.batching import FrameBatches
from media_pipeline.metrics.decode import DecodedChunk
from media_pipeline.metrics.frame_features import FrameFeatures
from media_pipeline.metrics.registry import FEATURES, Metric, take_rows

# fewest per-frame values a metric needs (TI: one frame pair; flicker: a second difference)
MIN_FRAMES = {"ti": 2, "ti_p910": 2, "motion": 2, "flicker": 3, "subject_consistency": 2}


@contextlib.contextmanager
def intra_op_threads(count: int | None):
    """torch's CPU threads set to `count` inside (None: unchanged)."""
    if count is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class Clock:
    """Per-metric compute time. On CUDA each call is bracketed by timing events instead of
    a synchronisation, so measuring does not stall the queue of kernels; the times are
    read once, at the end."""

    def __init__(self, device: str) -> None:
        self.cuda = device.startswith("cuda")
        self._seconds: dict[str, float] = {}
        self._events: list[tuple[str, torch.cuda.Event, torch.cuda.Event]] = []

    def timed(self, name: str, fn, *args, **kwargs):
        if self.cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            result = fn(*args, **kwargs)
            end.record()
            self._events.append((name, start, end))
            return result
        started = time.perf_counter()
        result = fn(*args, **kwargs)
        self.add(name, time.perf_counter() - started)
        return result

    def add(self, name: str, seconds: float) -> None:
        self._seconds[name] = self._seconds.get(name, 0.0) + seconds

    @property
    def times(self) -> dict[str, float]:
        if self._events:
            torch.cuda.synchronize()
            for name, start, end in self._events:
                self.add(name, start.elapsed_time(end) / 1000)
            self._events.clear()
        return self._seconds


class VideoPass:
    """The metrics of one video: `feed` its decoded chunks in order, then `finish`.

    On CPU the content metrics compute on half of torch's threads (at least one): the
    decoder threads want cores too. On 2 cores, one compute thread beside the decoder ran
    GAIA's six features 1.4x faster than two (bench/metrics.py). The checkpoint models
    run in `finish` with the process's setting."""

    def __init__(self, *, metrics: list[Metric], scorers, prompt, device, batch_size, every_kth):
        self.content_metrics = [m for m in metrics if m.feature is not None]
        self.frame_mean_metrics = [m for m in metrics if m.sampling.frame_means]
        self.groups = {m.group for m in metrics if m.group}
        self.selected = {m.name for m in metrics}
        self.scorers, self.prompt, self.device = scorers, prompt, device
        self.batches = FrameBatches(batch_size, device)
        self.clock = Clock(device)
        self.content_threads = max(1, torch.get_num_threads() // 2) if device == "cpu" else None
        self.features = FrameFeatures(
            self.content_metrics, batches=self.batches, every_kth=every_kth, clock=Clock(device)
        )
        self.clip_frames: list[torch.Tensor] = []
        self.dino_frames: list[torch.Tensor] = []

    def feed(self, decoded: DecodedChunk, *, uniform: list[int]) -> None:
        """Computes the content metrics of the chunk and keeps the checkpoint metrics'
        frame views of it; `uniform`: the video's uniformly sampled frame numbers."""
        with torch.inference_mode(), intra_op_threads(self.content_threads):
            self._feed(decoded, uniform=uniform)

    def _feed(self, decoded: DecodedChunk, *, uniform: list[int]) -> None:
        # from page-locked chunks on CUDA: queued behind the kernels, no wait here
        rgb = decoded.rgb.to(self.device, non_blocking=True)
        if self.content_metrics:
            luma = decoded.luma.to(self.device, non_blocking=True)
            self.features.feed(decoded, luma=luma, rgb=rgb)
        if "clip" in self.groups:
            rows = np.isin(decoded.rgb_index, uniform).nonzero()[0]
            self.clip_frames.append(take_rows(rgb, rows))
        if "dino" in self.groups:
            self.dino_frames.append(
                self.clock.timed("subject_consistency", preprocess.dino_resize, rgb)
            )

    @property
    def batch_size(self) -> int:
        """Frames per batch: the size asked for, or the one that fitted after halvings."""
        return self.batches.size

    @property
    def runtimes(self) -> dict[str, float]:
        """Compute seconds per metric: a feature's time is shared out evenly among the
        selected metrics that read it (si and si_p910 read one SI per frame)."""
        times = dict(self.clock.times)
        readers: dict[str, int] = {}
        for metric in self.content_metrics:
            readers[metric.feature] = readers.get(metric.feature, 0) + 1
        feature_times = self.features.clock.times
        for metric in self.content_metrics:
            share = feature_times.get(metric.feature, 0.0) / readers[metric.feature]
            times[metric.name] = times.get(metric.name, 0.0) + share
        return times

    def finish(
        self, *, frames_decoded: int, frame_means: list[float], unavailable: dict[str, str]
    ) -> dict[str, float]:
        """Reduces the content metrics' per-frame values (and the decoder's `frame_means`)
        and runs the checkpoint models; a metric the video is too short for is added to
        `unavailable`."""
        clock, batches = self.clock, self.batches
        values: dict[str, float] = {}
        with torch.inference_mode(), intra_op_threads(self.content_threads):
            self.features.flush()
        with torch.inference_mode():
            for metric in self.content_metrics + self.frame_mean_metrics:
                if metric.sampling.frame_means:
                    joined = torch.tensor(frame_means, dtype=torch.float64)
                else:
                    joined = self.features.values(metric)
                fewest = 1 if metric.reduce != "clip" else MIN_FRAMES.get(metric.name, 1)
                if joined.numel() < fewest:
                    unavailable[metric.name] = (
                        f"needs at least {frames_needed(metric, fewest)} frames, "
                        f"the video has {frames_decoded}"
                    )
                    continue
                if metric.reduce == "clip":  # flicker: a whole-clip statistic of frame means
                    value = clock.timed(metric.name, content.flicker, joined)
                elif metric.reduce == "max":
                    value = joined.max()
                else:
                    value = joined.mean()
                values[metric.name] = float(value)
            if "clip" in self.groups:
                frames = torch.cat(self.clip_frames)
                result = clock.timed(
                    "clip_cosine",
                    self.scorers["clip"].scores,
                    frames,
                    self.prompt,
                    batches=batches,
                )
                clock.add("clip_score", clock.times["clip_cosine"])  # one shared model run
                values.update({k: v for k, v in result.items() if k in self.selected})
            if "dino" in self.groups:
                if frames_decoded < 2:
                    unavailable["subject_consistency"] = "needs at least 2 frames"
                else:
                    dino = self.scorers["dino"]
                    features = torch.cat(
                        [
                            clock.timed("subject_consistency", batches.compute, dino.features, f)
                            for f in self.dino_frames
                            if f.numel()
                        ]
                    )
                    values["subject_consistency"] = dino.consistency(features)
        for name, value in list(values.items()):
            if not np.isfinite(value):  # e.g. SI of frames under 3 x 3 pixels: no gradient
                del values[name]
                unavailable[name] = "not defined for this video (no finite value came out)"
        return values


def frames_needed(metric: Metric, samples: int) -> int:
    """The fewest frames that give a metric ``samples`` values: its sampling's count, and
    one more where every frame's value is a difference to the frame before (TI of every
    pair of consecutive frames: one frame gives none)."""
    feature = FEATURES.get(metric.feature) if metric.feature else None
    pairs = feature is not None and feature.reads == "pairs" and metric.sampling.all_frames
    return metric.sampling.frames_for(samples) + (1 if pairs else 0)
