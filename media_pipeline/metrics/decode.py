"""One decoding pass with PyAV that yields every frame the selected metrics need.

The pass walks the video once, converts only the wanted frames to RGB (every k-th frame,
the frame before each when frame differences are needed, n uniformly spaced frames, or
all of them) and hands them on in chunks of consecutive frames, so a long or large video
never sits whole in memory and the compute device gets batches. Nothing is written to
disk. Decoding runs in a thread of its own, a few chunks ahead of the metrics (FFmpeg and
torch both release the GIL), so the metrics of one chunk are computed while the next one
decodes.

RGB comes from FFmpeg's swscale (`rgb24`, 0-255); luma is derived from it on the compute
device with ITU-R BT.601 weights (`content.to_luma`), as ITU-T P.910 assumes for SI/TI
and as OpenCV's grey conversion (used by GAIA-era feature code) does.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import av
import numpy as np

from media_pipeline.metrics.registry import FrameSampling


class VideoDecodeError(ValueError):
    """The file has no decodable video stream."""


@dataclass(frozen=True)
class FramePlan:
    """The union of what the selected metrics sample."""

    every_kth: int = 8
    with_previous: bool = False
    all_frames: bool = False
    uniform: int = 0

    @classmethod
    def for_samplings(cls, samplings: Iterable[FrameSampling]) -> FramePlan:
        samplings = list(samplings)
        steps = {s.every_kth for s in samplings if s.every_kth}
        if len(steps) > 1:
            raise ValueError(f"one decode pass serves one every-k-th step, got {sorted(steps)}")
        return cls(
            every_kth=steps.pop() if steps else 8,
            with_previous=any(s.with_previous for s in samplings),
            all_frames=any(s.all_frames for s in samplings),
            uniform=max((s.uniform or 0 for s in samplings), default=0),
        )


def uniform_indices(total: int, n: int) -> list[int]:
    """n frame numbers spread evenly over [0, total - 1] (round(linspace)), as GAIA samples."""
    if n <= 0 or total <= 0:
        return []
    return sorted({int(i) for i in np.linspace(0, total - 1, n).round()})


@dataclass
class DecodedChunk:
    """Consecutive wanted frames: their numbers and (N, H, W, 3) uint8 RGB."""

    index: np.ndarray
    rgb: np.ndarray


@dataclass
class FrameStream:
    """Iterating decodes `path` once and yields DecodedChunk of at most `chunk_size`
    frames, decoded up to `ahead` chunks in advance by a background thread (0: in the
    caller's thread); afterwards `frames_decoded` holds how many frames the video had."""

    path: Path
    plan: FramePlan
    chunk_size: int = 16
    ahead: int = 2
    frames_decoded: int = 0
    uniform: list[int] = field(default_factory=list)

    def _wanted(self, index: int, uniform: set[int]) -> bool:
        if self.plan.all_frames or index in uniform:
            return True
        k = self.plan.every_kth
        return index % k == 0 or (self.plan.with_previous and index % k == k - 1)

    def __iter__(self) -> Iterator[DecodedChunk]:
        if self.ahead:
            return _in_background(self._decode(), depth=self.ahead)
        return self._decode()

    def _decode(self) -> Iterator[DecodedChunk]:
        try:
            container = av.open(str(self.path))
        except (av.error.FFmpegError, OSError) as exc:
            raise VideoDecodeError(f"not a video: {self.path.name} ({exc})") from None
        with container:
            if not container.streams.video:
                raise VideoDecodeError(f"not a video: {self.path.name} (no video stream)")
            if self.plan.uniform:
                self.uniform = uniform_indices(_count_frames(self.path), self.plan.uniform)
            uniform = set(self.uniform)
            stream = container.streams.video[0]
            stream.thread_type = "AUTO"
            indices: list[int] = []
            frames: list[np.ndarray] = []
            index = -1
            try:
                for index, frame in enumerate(container.decode(stream)):
                    if not self._wanted(index, uniform):
                        continue
                    rgb = frame.to_ndarray(format="rgb24")
                    # a size change mid-stream (rare) starts a new chunk: chunks stack
                    if frames and (len(frames) >= self.chunk_size or rgb.shape != frames[0].shape):
                        yield DecodedChunk(np.asarray(indices), np.stack(frames))
                        indices, frames = [], []
                    indices.append(index)
                    frames.append(rgb)
            except av.error.FFmpegError as exc:
                if index < 0:
                    raise VideoDecodeError(f"not a video: {self.path.name} ({exc})") from None
                # a damaged tail: score what decoded, as players show it
            self.frames_decoded = index + 1
            if frames:
                yield DecodedChunk(np.asarray(indices), np.stack(frames))
        if self.frames_decoded == 0:
            raise VideoDecodeError(f"no frame could be decoded from {self.path.name}")


_END = object()


def _in_background(items: Iterator, *, depth: int) -> Iterator:
    """Yields what `items` yields, produced by a thread that runs at most `depth` items
    ahead. An exception of the producer is raised here; stopping early (a consumer that
    breaks off or fails) stops the producer and closes `items` in its thread."""
    handoff: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def produce() -> None:
        try:
            for item in items:
                handoff.put((item, None))
                if stop.is_set():
                    return
            handoff.put((_END, None))
        except BaseException as exc:  # handed to the consumer, raised there
            handoff.put((_END, exc))
        finally:
            items.close()

    producer = threading.Thread(target=produce, name="frame-decoder", daemon=True)
    producer.start()
    try:
        while True:
            item, error = handoff.get()
            if error is not None:
                raise error
            if item is _END:
                return
            yield item
    finally:
        stop.set()
        while producer.is_alive():  # unblock a producer waiting for room
            with contextlib.suppress(queue.Empty):
                handoff.get(timeout=0.05)
        producer.join()


def _count_frames(path: Path) -> int:
    """Frames in the first video stream: the container's count, else its packets counted
    by demuxing in a separate opening (no decoding; WebM and GIF carry no count)."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        if stream.frames:
            return stream.frames
        return sum(1 for packet in container.demux(stream) if packet.size)
