"""Scoring videos: one decode pass, every selected metric, on the chosen device.

A batch of videos (`score_videos`) is decoded by a few threads side by side, each taking
the next video when done with one, ahead of the metrics; each video's chunks go to its
own `VideoPass` (video_pass.py) as they arrive, so the passes of videos decoded at the
same time are interleaved. `score_video` is a batch of one. A checkpoint metric whose
weights are missing or wrong is reported unavailable with the reason; the others still
run.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import platform
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from media_pipeline.metrics.batching import FrameBatches, batch_for_memory, default_batch_size
from media_pipeline.metrics.checkpoints import load_group
from media_pipeline.metrics.decode import FramePlan, FrameStream, VideoEnd, cores, decode_videos
from media_pipeline.metrics.registry import Metric, available_metrics, get_metric
from media_pipeline.metrics.video_pass import VideoPass
from media_pipeline.metrics.weights import WeightsUnavailable, verified_files

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ScoreReport:
    """values {metric: value}; unavailable {metric: reason}; runtimes {metric: seconds of
    compute, decode excluded}; decode_s: time spent waiting for the video's decoded frames
    (decoding runs ahead in threads of its own, so this is what decoding added)."""

    values: dict[str, float]
    unavailable: dict[str, str]
    device: str
    runtimes: dict[str, float]
    frames_decoded: int
    decode_s: float = 0.0
    batch_size: int = 0  # frames per batch that were used (after halvings on out-of-memory)


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


def pick_device(device: str | None) -> str:
    """`device` as given, else CUDA when present; asking for CUDA without one, or for a
    device torch does not know, is an error (ValueError)."""
    if device is None:
        return "cuda" if torch.cuda.is_available() else "cpu"
    try:
        torch.device(device)
    except RuntimeError:
        raise ValueError(f"unknown device {device!r} (cpu, cuda or cuda:N)") from None
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError("device cuda requested but CUDA is not available")
    return device


def _select(metric_names: Sequence[str] | None) -> list[Metric]:
    if metric_names is None:
        return available_metrics()
    return [get_metric(name) for name in dict.fromkeys(metric_names)]


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
    scored (`VideoDecodeError` for a file that is not a video)."""

    request: VideoRequest
    report: ScoreReport | None = None
    error: Exception | None = None


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


def default_decoders() -> int:
    """Videos a batch decodes at once: one per core, at most 4 (each holds a few chunks
    of frames; 4 side by side keep 16 cores busy at 4 FFmpeg threads each)."""
    return max(1, min(4, cores()))


def score_videos(
    requests: Sequence[VideoRequest],
    *,
    weights_dir: Path | None = None,
    device: str | None = None,
    batch_size: int | None = None,
    weight_sha256: Mapping[str, str] | None = None,
    decoders: int | None = None,
) -> Iterator[ScoredVideo]:
    """Scores a batch of videos, yielding one ScoredVideo per request, in order, as each
    is done. `decoders` threads (default `default_decoders()`) decode videos side by side,
    the cores shared out among them, ahead of the metrics; each decoded chunk is scored as
    it arrives. A video that cannot be decoded, or whose metrics fail, is yielded with its
    error and the others go on. On CUDA without a `batch_size`, each video's batch is sized
    from its frame size and the GPU's free memory (`batch_for_memory`).

    Raises KeyError for an unknown metric name, ValueError for a `batch_size` below 1 or
    an unknown device (before anything is decoded).
    """
    if batch_size is not None and batch_size < 1:  # a negative size never advanced: a hang
        raise ValueError(f"batch size must be at least 1 frame, got {batch_size}")
    device = pick_device(device)
    if device == "cpu":
        keep_freed_memory()
    cuda = device.startswith("cuda")
    free_memory = torch.cuda.mem_get_info(device)[0] if batch_size is None and cuda else None
    batch_size = batch_size or default_batch_size(device)
    selections = [_select(request.metric_names) for request in requests]
    models = _Models(weights_dir=weights_dir, pins=weight_sha256, device=device)
    outcomes: list[ScoredVideo | None] = [None] * len(requests)
    videos: dict[FrameStream, _Video] = {}
    for position, (request, metrics) in enumerate(zip(requests, selections, strict=True)):
        runnable, unavailable = models.split(metrics, prompt=request.prompt)
        if not runnable:
            report = ScoreReport({}, unavailable, device, {}, 0, batch_size=batch_size)
            outcomes[position] = ScoredVideo(request, report)
            continue
        plan = FramePlan.for_samplings(m.sampling for m in runnable)
        metric_pass = VideoPass(
            metrics=runnable,
            scorers=models.scorers,
            prompt=request.prompt,
            device=device,
            batch_size=batch_size,
            every_kth=plan.every_kth,
        )
        sizing = None
        if free_memory is not None:
            sizing = functools.partial(size_for_frame, metric_pass.batches, free_memory)
        stream = FrameStream(
            path=Path(request.path),
            plan=plan,
            chunk_size=batch_size,
            chunk_for_pixels=sizing,
            pinned=cuda,
        )
        videos[stream] = _Video(position, request, unavailable, metric_pass)
    events = decode_videos(list(videos), decoders=decoders or default_decoders())
    try:
        for position in range(len(requests)):
            while outcomes[position] is None:
                started = time.perf_counter()
                stream, item = next(events)
                video = videos[stream]
                video.decode_s += time.perf_counter() - started
                if video.metric_pass is not None:  # else its metrics failed: skip the rest
                    outcomes[video.position] = video.take(item, stream)
            yield outcomes[position]
    finally:
        events.close()  # stops the decoder threads when the caller breaks off


def size_for_frame(batches: FrameBatches, free_bytes: int, pixels: int) -> int:
    """Sets a video's batch from its frame size (`batch_for_memory`) and returns it as the
    stream's chunk size: called by the video's decoder once the video is open, before its
    first chunk reaches the metrics."""
    batches.size = batch_for_memory(free_bytes, pixels)
    return batches.size


@dataclass
class _Video:
    """One request of a batch while it is being scored."""

    position: int
    request: VideoRequest
    unavailable: dict[str, str]
    metric_pass: VideoPass | None  # None once done
    decode_s: float = 0.0

    def take(self, item, stream: FrameStream) -> ScoredVideo | None:
        """Feeds a decoded chunk to the metrics (None: not done yet), or at the video's end
        returns its outcome. A failure of its metrics is its outcome, logged; once done,
        its frames are let go and later chunks of it are not taken."""
        try:
            if not isinstance(item, VideoEnd):
                self.metric_pass.feed(item, uniform=stream.uniform)
                return None
            if item.error is not None:
                outcome = ScoredVideo(self.request, error=item.error)
            else:
                outcome = ScoredVideo(self.request, self._report(item.frames_decoded, stream))
        except Exception as exc:
            logger.exception("scoring %s failed", self.request.path)
            outcome = ScoredVideo(self.request, error=exc)
        self.metric_pass = None
        return outcome

    def _report(self, frames_decoded: int, stream: FrameStream) -> ScoreReport:
        metric_pass = self.metric_pass
        values = metric_pass.finish(
            frames_decoded=frames_decoded,
            frame_means=stream.frame_means,
            unavailable=self.unavailable,
        )
        times = metric_pass.runtimes
        return ScoreReport(
            values=values,
            unavailable=self.unavailable,
            device=metric_pass.device,
            runtimes={name: times.get(name, 0.0) for name in values},
            frames_decoded=frames_decoded,
            decode_s=self.decode_s,
            batch_size=metric_pass.batch_size,
        )


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
