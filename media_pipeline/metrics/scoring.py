"""Scoring videos: one decode pass, every selected metric, on the chosen device.

A batch of videos (`score_videos`) is decoded in turn by one thread that runs ahead of
the metrics across video boundaries; `score_video` is a batch of one. Content metrics run
chunk by chunk while the video decodes; the frame views of the checkpoint metrics (8
uniform frames for CLIP, every frame at 224 for DINO) are gathered from the same chunks
and scored after the pass. A checkpoint metric whose weights are missing or wrong is
reported unavailable with the reason; the others still run.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import platform
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from media_pipeline.metrics import content, preprocess
from media_pipeline.metrics.checkpoints import load_group
from media_pipeline.metrics.decode import (
    DecodedChunk,
    FramePlan,
    FrameStream,
    VideoDecodeError,
    VideoEnd,
    decode_in_turn,
)
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


@dataclass(frozen=True)
class VideoRequest:
    """One video to score: its file, its prompt (for CLIPScore) and the metrics wanted
    (None: every registered one)."""

    path: Path
    prompt: str | None = None
    metric_names: Sequence[str] | None = None


@dataclass(frozen=True)
class ScoredVideo:
    """The outcome for one request: its report, or the error that kept it from being
    decoded (`VideoDecodeError`)."""

    request: VideoRequest
    report: ScoreReport | None = None
    error: VideoDecodeError | None = None


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
    (scored,) = score_videos(
        [VideoRequest(path=Path(path), prompt=prompt, metric_names=metric_names)],
        weights_dir=weights_dir,
        device=device,
        batch_size=batch_size,
        weight_sha256=weight_sha256,
    )
    if scored.error is not None:
        raise scored.error
    return scored.report


def score_videos(
    requests: Sequence[VideoRequest],
    *,
    weights_dir: Path | None = None,
    device: str | None = None,
    batch_size: int | None = None,
    weight_sha256: Mapping[str, str] | None = None,
) -> Iterator[ScoredVideo]:
    """Scores a batch of videos, yielding one ScoredVideo per request, in order, as each
    is done. One decoder thread walks the videos in turn and runs ahead of the metrics
    across video boundaries, so it never pauses while the last chunks of a video (and its
    checkpoint models) are computed. A video that cannot be decoded is yielded with its
    error and the others go on.

    Raises KeyError for an unknown metric name (before anything is decoded).
    """
    device = pick_device(device)
    if device == "cpu":
        keep_freed_memory()
    batch_size = batch_size or default_batch_size(device)
    selections = [_select(request.metric_names) for request in requests]
    models = _Models(weights_dir=weights_dir, pins=weight_sha256, device=device)
    passes: list[tuple[FrameStream | None, list[Metric], dict[str, str]]] = []
    for request, metrics in zip(requests, selections, strict=True):
        runnable, unavailable = models.split(metrics, prompt=request.prompt)
        plan = FramePlan.for_samplings(m.sampling for m in runnable)
        stream = (
            FrameStream(path=Path(request.path), plan=plan, chunk_size=batch_size)
            if runnable
            else None
        )
        passes.append((stream, runnable, unavailable))
    events = decode_in_turn(stream for stream, _, _ in passes if stream is not None)
    try:
        for request, (stream, runnable, unavailable) in zip(requests, passes, strict=True):
            clock = _Clock(device)
            if stream is None:
                report = ScoreReport({}, unavailable, device, {}, 0, batch_size=batch_size)
                yield ScoredVideo(request, report)
                continue
            video = _VideoPass(
                metrics=runnable,
                scorers=models.scorers,
                prompt=request.prompt,
                device=device,
                batch_size=batch_size,
                clock=clock,
                every_kth=stream.plan.every_kth,
            )
            end, decode_s = video.consume(events, stream)
            if end.error is not None:
                yield ScoredVideo(request, error=end.error)
                continue
            values = video.finish(frames_decoded=end.frames_decoded, unavailable=unavailable)
            times = clock.times
            report = ScoreReport(
                values=values,
                unavailable=unavailable,
                device=device,
                runtimes={m.name: times.get(m.name, 0.0) for m in runnable if m.name in values},
                frames_decoded=end.frames_decoded,
                decode_s=decode_s,
                batch_size=batch_size,
            )
            yield ScoredVideo(request, report)
    finally:
        events.close()  # stops the decoder thread when the caller breaks off


class _Models:
    """The checkpoint models of a batch, loaded once per group on first need; a group whose
    weights are missing or wrong is remembered with the reason."""

    def __init__(self, *, weights_dir: Path | None, pins, device: str) -> None:
        self.weights_dir, self.pins, self.device = weights_dir, pins, device
        self.scorers: dict[str, object] = {}
        self.errors: dict[str, str] = {}

    def split(
        self, metrics: list[Metric], *, prompt: str | None
    ) -> tuple[list[Metric], dict[str, str]]:
        """The metrics that can run on this video, and {metric: why not} for the rest."""
        runnable: list[Metric] = []
        unavailable: dict[str, str] = {}
        for metric in metrics:
            if metric.needs_prompt and not (prompt and prompt.strip()):
                unavailable[metric.name] = "needs a prompt"
                continue
            if metric.needs_weights:
                self._load(metric)
                if metric.group in self.errors:
                    unavailable[metric.name] = self.errors[metric.group]
                    continue
            runnable.append(metric)
        return runnable, unavailable

    def _load(self, metric: Metric) -> None:
        if metric.group in self.scorers or metric.group in self.errors:
            return
        try:
            files = verified_files(metric, weights_dir=self.weights_dir, pins=self.pins)
            self.scorers[metric.group] = load_group(metric.group, files, device=self.device)
        except WeightsUnavailable as exc:
            self.errors[metric.group] = str(exc)


class _VideoPass:
    """The metrics of one video, fed its decoded chunks in order: content metrics chunk by
    chunk, the checkpoint metrics' frame views gathered for `finish`."""

    def __init__(self, *, metrics, scorers, prompt, device, batch_size, clock, every_kth):
        self.content_metrics = [m for m in metrics if m.per_chunk is not None]
        self.groups = {m.group for m in metrics if m.group}
        self.selected = {m.name for m in metrics}
        self.scorers, self.prompt, self.device = scorers, prompt, device
        self.batch_size, self.clock, self.every_kth = batch_size, clock, every_kth
        self.per_frame: dict[str, list[torch.Tensor]] = {m.name: [] for m in self.content_metrics}
        self.clip_frames: list[torch.Tensor] = []
        self.dino_frames: list[torch.Tensor] = []
        self.carry: tuple[torch.Tensor, int, content.LumaRange] | None = None

    def consume(self, events, stream: FrameStream) -> tuple[VideoEnd, float]:
        """Feeds this video's chunks from the batch's decode events up to its end; returns
        the end and the seconds spent waiting for decoded frames."""
        decode_s = 0.0
        on_cpu = self.device == "cpu"
        beside_decoder = max(1, torch.get_num_threads() // 2) if on_cpu else None
        with torch.inference_mode(), _intra_op_threads(beside_decoder):
            while True:
                started = time.perf_counter()
                source, item = next(events)
                decode_s += time.perf_counter() - started
                assert source is stream, "decode events out of order"
                if isinstance(item, VideoEnd):
                    return item, decode_s
                self._feed(item, uniform=stream.uniform)

    def _feed(self, decoded: DecodedChunk, *, uniform: list[int]) -> None:
        clock, device = self.clock, self.device
        rgb = torch.from_numpy(decoded.rgb).to(device)
        if self.content_metrics:
            carry = self.carry
            follows = carry is not None and carry[2] == decoded.luma_range
            chunk = ContentChunk(
                luma=torch.from_numpy(decoded.luma).to(device),
                # frame numbers stay on the host: masks need no device sync
                index=torch.from_numpy(decoded.index),
                luma_range=decoded.luma_range,
                every_kth=self.every_kth,
                rgb=rgb,
                rgb_index=torch.from_numpy(decoded.rgb_index),
                carry_luma=carry[0] if follows else None,
                carry_index=carry[1] if follows else -2,
            )
            for metric in self.content_metrics:
                self.per_frame[metric.name].append(
                    clock.timed(metric.name, metric.per_chunk, chunk)
                )
            self.carry = (chunk.luma[-1], int(decoded.index[-1]), decoded.luma_range)
        if "clip" in self.groups:
            rows = np.isin(decoded.rgb_index, uniform).nonzero()[0]
            self.clip_frames.append(take_rows(rgb, rows))
        if "dino" in self.groups:
            self.dino_frames.append(clock.timed("subject_consistency", preprocess.dino_resize, rgb))

    def finish(self, *, frames_decoded: int, unavailable: dict[str, str]) -> dict[str, float]:
        """Reduces the content metrics' per-frame values and runs the checkpoint models."""
        clock, batch_size = self.clock, self.batch_size
        values: dict[str, float] = {}
        with torch.inference_mode():
            for metric in self.content_metrics:
                joined = torch.cat(self.per_frame[metric.name])
                fewest = 1 if metric.reduce != "clip" else MIN_FRAMES.get(metric.name, 1)
                if joined.numel() < fewest:
                    unavailable[metric.name] = (
                        f"needs at least {MIN_FRAMES.get(metric.name, 1)} frames, "
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
                    batch_size=batch_size,
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
                            clock.timed("subject_consistency", dino.features, batch)
                            for frames in self.dino_frames
                            if frames.numel()
                            for batch in frames.split(batch_size)
                        ]
                    )
                    values["subject_consistency"] = dino.consistency(features)
        return values
