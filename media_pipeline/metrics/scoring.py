"""Scoring videos: one decode pass, every selected metric, on the chosen device.

Content metrics run chunk by chunk while the video decodes; the frame views of the
checkpoint metrics (8 uniform frames for CLIP, every frame at 224 for DINO) are gathered
from the same chunks and scored after the pass. A checkpoint metric whose weights are
missing or wrong is reported unavailable with the reason; the others still run.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import platform
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from media_pipeline.metrics import content, preprocess
from media_pipeline.metrics.checkpoints import load_group
from media_pipeline.metrics.decode import FramePlan, FrameStream
from media_pipeline.metrics.registry import (
    ContentChunk,
    Metric,
    available_metrics,
    get_metric,
    take_rows,
)
from media_pipeline.metrics.weights import WeightsUnavailable, verified_files

# Frames per batch: CUDA wants large batches; on CPU a few frames keep every operation's
# data in the core's cache (bench/metrics.py: 4 frames run the full set 1.9x faster than 32).
DEFAULT_BATCH_SIZE = {"cpu": 4, "cuda": 32}


def default_batch_size(device: str) -> int:
    return DEFAULT_BATCH_SIZE["cuda" if device.startswith("cuda") else "cpu"]


# fewest per-frame values a metric needs (TI: one frame pair; flicker: a second difference)
MIN_FRAMES = {"ti": 2, "ti_p910": 2, "motion": 2, "flicker": 3, "subject_consistency": 2}


@dataclass(frozen=True)
class ScoreReport:
    """values {metric: value}; unavailable {metric: reason}; runtimes {metric: seconds of
    compute, decode excluded}; decode_s: time spent waiting for decoded frames (decoding
    runs ahead in its own thread, so this is what decoding added to the compute)."""

    values: dict[str, float]
    unavailable: dict[str, str]
    device: str
    runtimes: dict[str, float]
    frames_decoded: int
    decode_s: float = 0.0
    batch_size: int = 0  # frames per batch that were used


@functools.cache
def keep_freed_memory() -> bool:
    """Ask glibc's allocator to keep freed blocks of up to 32 MiB for reuse.

    By default glibc maps a large block fresh from the OS and gives it back when freed, so
    every chunk's temporaries start on new pages, and each page costs a fault: about 2,000
    faults per 4-frame SI at 512x288, which made CPU scoring about 5x slower than its
    arithmetic. Process-wide and harmless for the rest of a worker (it holds on to what it
    freed); a no-op off glibc. Returns whether the settings took."""
    if platform.libc_ver()[0] != "glibc":
        return False
    libc = ctypes.CDLL(None)
    m_trim_threshold, m_mmap_threshold = -1, -3  # malloc.h
    return bool(
        libc.mallopt(m_mmap_threshold, 32 * 2**20) and libc.mallopt(m_trim_threshold, 256 * 2**20)
    )


@contextlib.contextmanager
def _intra_op_threads(count: int | None):
    """torch's CPU threads set to `count` inside (None: unchanged). While a video decodes,
    FFmpeg's frame threads want cores too: half of torch's threads for the metrics, half
    left to the decoder. On 2 cores, one compute thread beside the decoder ran GAIA's six
    features 1.4x faster than two (bench/metrics.py). The checkpoint models run after the
    pass with the process's setting."""
    if count is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def pick_device(device: str | None) -> str:
    """`device` as given, else CUDA when present; asking for CUDA without one is an error."""
    if device is None:
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError("device cuda requested but CUDA is not available")
    return device


def _select(metric_names: Sequence[str] | None) -> list[Metric]:
    if metric_names is None:
        return available_metrics()
    return [get_metric(name) for name in dict.fromkeys(metric_names)]


class _Clock:
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


def score_video(
    *,
    path: Path,
    prompt: str | None = None,
    metric_names: Sequence[str] | None = None,
    weights_dir: Path | None = None,
    device: str | None = None,
    batch_size: int | None = None,
    weight_sha256: Mapping[str, str] | None = None,
) -> ScoreReport:
    """Values of the selected metrics (default: every registered one) for one video.

    Raises KeyError for an unknown metric name, ValueError (VideoDecodeError) for a file
    with no decodable video. `weight_sha256` pins weight files ({relative name: sha256})
    over the registry's placeholders.
    """
    device = pick_device(device)
    if device == "cpu":
        keep_freed_memory()
    batch_size = batch_size or default_batch_size(device)
    metrics = _select(metric_names)
    unavailable: dict[str, str] = {}
    scorers: dict[str, object] = {}
    group_errors: dict[str, str] = {}
    runnable: list[Metric] = []
    for metric in metrics:
        if metric.needs_prompt and not (prompt and prompt.strip()):
            unavailable[metric.name] = "needs a prompt"
            continue
        if metric.needs_weights:
            if metric.group not in scorers and metric.group not in group_errors:
                try:
                    files = verified_files(metric, weights_dir=weights_dir, pins=weight_sha256)
                    scorers[metric.group] = load_group(metric.group, files, device=device)
                except WeightsUnavailable as exc:
                    group_errors[metric.group] = str(exc)
            if metric.group in group_errors:
                unavailable[metric.name] = group_errors[metric.group]
                continue
        runnable.append(metric)

    clock = _Clock(device)
    values: dict[str, float] = {}
    frames_decoded = 0
    decode_s = 0.0
    if runnable:
        values, frames_decoded, decode_s = _run(
            path=Path(path),
            metrics=runnable,
            scorers=scorers,
            prompt=prompt,
            device=device,
            batch_size=batch_size,
            clock=clock,
            unavailable=unavailable,
        )
    return ScoreReport(
        values=values,
        unavailable=unavailable,
        device=device,
        runtimes={m.name: clock.times.get(m.name, 0.0) for m in runnable if m.name in values},
        frames_decoded=frames_decoded,
        decode_s=decode_s,
        batch_size=batch_size,
    )


def _run(*, path, metrics, scorers, prompt, device, batch_size, clock, unavailable):
    content_metrics = [m for m in metrics if m.per_chunk is not None]
    groups = {m.group for m in metrics if m.group}
    plan = FramePlan.for_samplings(m.sampling for m in metrics)
    stream = FrameStream(path=path, plan=plan, chunk_size=batch_size)
    per_frame: dict[str, list[torch.Tensor]] = {m.name: [] for m in content_metrics}
    clip_frames: list[torch.Tensor] = []
    dino_frames: list[torch.Tensor] = []
    carry: tuple[torch.Tensor, int, content.LumaRange] | None = None
    decode_s = 0.0
    on_cpu = device == "cpu"
    beside_decoder = max(1, torch.get_num_threads() // 2) if on_cpu else None
    with torch.inference_mode(), _intra_op_threads(beside_decoder):
        iterator = iter(stream)
        while True:
            started = time.perf_counter()
            decoded = next(iterator, None)
            decode_s += time.perf_counter() - started
            if decoded is None:
                break
            rgb = torch.from_numpy(decoded.rgb).to(device)
            if content_metrics:
                follows = carry is not None and carry[2] == decoded.luma_range
                chunk = ContentChunk(
                    luma=torch.from_numpy(decoded.luma).to(device),
                    # frame numbers stay on the host: masks need no device sync
                    index=torch.from_numpy(decoded.index),
                    luma_range=decoded.luma_range,
                    every_kth=plan.every_kth,
                    rgb=rgb,
                    rgb_index=torch.from_numpy(decoded.rgb_index),
                    carry_luma=carry[0] if follows else None,
                    carry_index=carry[1] if follows else -2,
                )
                for metric in content_metrics:
                    per_frame[metric.name].append(clock.timed(metric.name, metric.per_chunk, chunk))
                carry = (chunk.luma[-1], int(decoded.index[-1]), decoded.luma_range)
            if "clip" in groups:
                rows = np.isin(decoded.rgb_index, stream.uniform).nonzero()[0]
                clip_frames.append(take_rows(rgb, rows))
            if "dino" in groups:
                dino_frames.append(clock.timed("subject_consistency", preprocess.dino_resize, rgb))

    with torch.inference_mode():
        values: dict[str, float] = {}
        for metric in content_metrics:
            joined = torch.cat(per_frame[metric.name])
            if joined.numel() < (1 if metric.reduce != "clip" else MIN_FRAMES.get(metric.name, 1)):
                unavailable[metric.name] = (
                    f"needs at least {MIN_FRAMES.get(metric.name, 1)} frames, "
                    f"the video has {stream.frames_decoded}"
                )
                continue
            if metric.reduce == "clip":  # flicker: a whole-clip statistic of the frame means
                value = clock.timed(metric.name, content.flicker, joined)
            elif metric.reduce == "max":
                value = joined.max()
            else:
                value = joined.mean()
            values[metric.name] = float(value)
        selected = {m.name for m in metrics}
        if "clip" in groups:
            frames = torch.cat(clip_frames)
            result = clock.timed(
                "clip_cosine", scorers["clip"].scores, frames, prompt, batch_size=batch_size
            )
            clock.add("clip_score", clock.times["clip_cosine"])  # one shared model run
            values.update({k: v for k, v in result.items() if k in selected})
        if "dino" in groups:
            resized = [f for f in dino_frames if f.numel()]
            if stream.frames_decoded < 2:
                unavailable["subject_consistency"] = "needs at least 2 frames"
            else:
                dino = scorers["dino"]
                features = torch.cat(
                    [
                        clock.timed("subject_consistency", dino.features, batch)
                        for frames in resized
                        for batch in frames.split(batch_size)
                    ]
                )
                values["subject_consistency"] = dino.consistency(features)
    return values, stream.frames_decoded, decode_s
