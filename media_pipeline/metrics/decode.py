"""One decoding pass with PyAV that yields every frame the selected metrics need.

The pass walks the video once, keeps only the wanted frames (every k-th frame, the frame
before each when frame differences are needed, n uniformly spaced frames, or all of them)
and hands them on in chunks of consecutive frames, so a long or large video never sits
whole in memory and the compute device gets batches. Nothing is written to disk.
Decoding runs in a thread of its own, a few chunks ahead of the metrics (FFmpeg and torch
both release the GIL), so the metrics of one chunk are computed while the next one
decodes. `decode_videos` does that for a batch of videos with several decoder threads,
each decoding whole videos one after another: FFmpeg's own frame threads speed up one
small video poorly (1.2x on 2 cores at 512x288) and are slowed most by a metrics thread
beside them, while videos decoded side by side each keep a core busy.

Luma is the coded Y plane itself, as ITU-T P.910 defines SI/TI and as the ITU's
siti-tools reads it: 8-bit code values, copied out of the decoder's frame with no colour
conversion, plus the range they are coded in (`LumaRange`: limited 16-235 or full 0-255)
so the metrics can report 0-255 luma. RGB is made only for the frames a colour metric or a
model reads, by FFmpeg's swscale, planar (`gbrp`: the same values as its packed `rgb24`,
one contiguous plane per colour, as the metrics compute on them and the models take them).
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import av
import numpy as np
import torch

from media_pipeline.ffmpeg.demux import IMAGE_FORMATS, TEXT_FORMATS, libav_path
from media_pipeline.metrics.content import FULL_RANGE, LIMITED_RANGE, LumaRange
from media_pipeline.metrics.registry import FrameSampling

# 8-bit YUV layouts whose first plane is the luma, copied as it is
_EIGHT_BIT_YUV = {
    "yuv420p", "yuvj420p", "yuv422p", "yuvj422p", "yuv444p", "yuvj444p", "yuv440p",
    "yuvj440p", "yuv411p", "yuv410p", "nv12", "nv21",
}  # fmt: skip
_AVCOL_RANGE_JPEG = 2  # FFmpeg's mark of a full-range frame


class VideoDecodeError(ValueError):
    """The file has no decodable video stream."""


def cores() -> int:
    """CPU cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def _plane(frame: av.VideoFrame, number: int) -> np.ndarray:
    """One full-size plane of the frame as an (H, W) uint8 view (without line padding)."""
    plane = frame.planes[number]
    rows = np.frombuffer(plane, np.uint8).reshape(frame.height, plane.line_size)
    return rows[:, : frame.width]


def luma_plane(frame: av.VideoFrame) -> tuple[np.ndarray, LumaRange]:
    """The frame's coded Y plane as an (H, W) uint8 view, and its range. Frames that are
    not 8-bit YUV (GIF's palette or RGB, 10-bit video) are first converted to limited-range
    8-bit YUV by swscale (BT.601), the nearest thing they have to a coded luma."""
    if frame.format.name not in _EIGHT_BIT_YUV:
        frame = frame.reformat(format="yuv420p")
    full = frame.format.name.startswith("yuvj") or frame.color_range == _AVCOL_RANGE_JPEG
    return _plane(frame, 0), FULL_RANGE if full else LIMITED_RANGE


def mean_luma(luma: np.ndarray, luma_range: LumaRange) -> float:
    """The mean of (H, W) luma codes as 0-255 luma: the codes summed exactly (numpy
    releases the GIL), in 32 bits while that cannot overflow (twice as fast as 64)."""
    total = np.uint32 if luma.size * 255 < 2**32 else np.uint64
    return float(luma_range.level(int(luma.sum(dtype=total)) / luma.size))


def rgb_planes(frame: av.VideoFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The frame's R, G and B as (H, W) uint8 views, converted by swscale to `gbrp`."""
    planar = frame.reformat(format="gbrp")
    green, blue, red = (_plane(planar, number) for number in range(3))
    return red, green, blue


@dataclass(frozen=True)
class FramePlan:
    """The union of what the selected metrics sample: which frames (their luma), and which
    of those also as RGB (the every-k-th ones, the uniform ones, or all); every_kth=0: no
    every-k-th frames; frame_means: every frame's mean luma, taken as it is decoded."""

    every_kth: int = 8
    with_previous: bool = False
    all_frames: bool = False
    frame_means: bool = False
    uniform: int = 0
    rgb_sampled: bool = False
    rgb_uniform: bool = False
    rgb_all: bool = False

    @classmethod
    def for_samplings(cls, samplings: Iterable[FrameSampling]) -> FramePlan:
        samplings = list(samplings)
        steps = {s.every_kth for s in samplings if s.every_kth}
        if len(steps) > 1:
            raise ValueError(f"one decode pass serves one every-k-th step, got {sorted(steps)}")
        colour = [s for s in samplings if s.rgb]
        if any(s.with_previous for s in colour):
            raise ValueError("frame pairs are luma only")
        return cls(
            every_kth=steps.pop() if steps else 0,
            with_previous=any(s.with_previous for s in samplings),
            all_frames=any(s.all_frames for s in samplings),
            frame_means=any(s.frame_means for s in samplings),
            uniform=max((s.uniform or 0 for s in samplings), default=0),
            rgb_sampled=any(s.every_kth for s in colour),
            rgb_uniform=any(s.uniform for s in colour),
            rgb_all=any(s.all_frames for s in colour),
        )


def uniform_indices(total: int, n: int) -> list[int]:
    """n frame numbers spread evenly over [0, total - 1] (round(linspace)), as GAIA samples."""
    if n <= 0 or total <= 0:
        return []
    return sorted({int(i) for i in np.linspace(0, total - 1, n).round()})


@dataclass
class DecodedChunk:
    """Consecutive wanted frames: their numbers (N,), their (N, H, W) uint8 luma codes in
    `luma_range`, and planar (M, 3, H, W) uint8 RGB of the M of them numbered `rgb_index`.
    The frames are CPU tensors, in page-locked memory when the stream is `pinned`."""

    index: np.ndarray
    luma: torch.Tensor
    luma_range: LumaRange
    rgb_index: np.ndarray
    rgb: torch.Tensor


@dataclass(eq=False)
class FrameStream:
    """Iterating decodes `path` once and yields DecodedChunk of at most `chunk_size`
    frames, decoded up to `ahead` chunks in advance by a background thread (0: in the
    caller's thread); afterwards `frames_decoded` holds how many frames the video had and,
    if the plan asks, `frame_means` the mean luma (0-255) of each. `threads`: FFmpeg's
    decoding threads (0: its own choice, frame and slice threads). `chunk_for_pixels`, if
    given, sets `chunk_size` from the pixels of a frame once the video is open. `pinned`:
    chunks in page-locked memory, for a CUDA device: the decoder thread writes them there
    in the copy it makes anyway, and the copy to the GPU is then a DMA that does not hold
    up the metrics' thread (from pageable memory it is a staged, synchronous copy: two
    thirds of that thread's time at 1920x1080 on an H200, bench/metrics_profile.py).

    The frame means are taken here, in the decoder's thread, because they are the one
    thing flicker reads of every frame: summing a frame's luma where it is decoded (an
    exact integer sum, the same on any device) spares copying every frame out to the
    metrics."""

    path: Path
    plan: FramePlan
    chunk_size: int = 16
    ahead: int = 2
    threads: int = 0
    chunk_for_pixels: Callable[[int], int] | None = None
    pinned: bool = False
    frames_decoded: int = 0
    uniform: list[int] = field(default_factory=list)
    frame_means: list[float] = field(default_factory=list)

    def _wanted(self, index: int, uniform: set[int]) -> bool:
        if self.plan.all_frames or index in uniform:
            return True
        k = self.plan.every_kth
        return k > 0 and (index % k == 0 or (self.plan.with_previous and index % k == k - 1))

    def _wanted_in_rgb(self, index: int, uniform: set[int]) -> bool:
        plan = self.plan
        return (
            plan.rgb_all
            or (plan.rgb_uniform and index in uniform)
            or (plan.rgb_sampled and index % plan.every_kth == 0)
        )

    def __iter__(self) -> Iterator[DecodedChunk]:
        if self.ahead:
            return _in_background([self._decode()], depth=self.ahead)
        return self._decode()

    def _decode(self) -> Iterator[DecodedChunk]:
        try:
            container = av.open(libav_path(self.path))
        except (av.error.FFmpegError, OSError) as exc:
            raise VideoDecodeError(f"not a video: {self.path.name} ({exc})") from None
        with container:
            _refuse_pictures_and_text(container.format.name, self.path.name)
            if not container.streams.video:
                raise VideoDecodeError(f"not a video: {self.path.name} (no video stream)")
            if self.plan.uniform:
                self.uniform = uniform_indices(_count_frames(self.path), self.plan.uniform)
            uniform = set(self.uniform)
            stream = container.streams.video[0]
            if self.chunk_for_pixels:
                context = stream.codec_context
                self.chunk_size = self.chunk_for_pixels(context.width * context.height)
            stream.thread_type = "AUTO"
            if self.threads:
                stream.codec_context.thread_count = self.threads
            chunk = _ChunkBuilder()
            index, means, self.frame_means = -1, self.plan.frame_means, []
            try:
                for index, frame in enumerate(container.decode(stream)):
                    wanted = self._wanted(index, uniform)
                    if not (wanted or means):
                        continue
                    luma, luma_range = luma_plane(frame)
                    if means:
                        self.frame_means.append(mean_luma(luma, luma_range))
                    if not wanted:
                        continue
                    # a change of size or range mid-stream (rare) starts a new chunk
                    if chunk.index and (
                        len(chunk.index) >= self.chunk_size
                        or luma.shape != chunk.luma[0].shape
                        or luma_range != chunk.luma_range
                    ):
                        yield chunk.build(pinned=self.pinned)
                        chunk = _ChunkBuilder()
                    chunk.luma_range = luma_range
                    chunk.index.append(index)
                    chunk.luma.append(luma)
                    if self._wanted_in_rgb(index, uniform):
                        chunk.rgb_index.append(index)
                        chunk.rgb.append(rgb_planes(frame))
            except av.error.FFmpegError as exc:
                if index < 0:
                    raise VideoDecodeError(f"not a video: {self.path.name} ({exc})") from None
                # a damaged tail: score what decoded, as players show it
            self.frames_decoded = index + 1
            if chunk.index:
                yield chunk.build(pinned=self.pinned)
        if self.frames_decoded == 0:
            raise VideoDecodeError(f"no frame could be decoded from {self.path.name}")


def _refuse_pictures_and_text(demuxer: str, name: str) -> None:
    """The transcode's probe rule (media_pipeline/ffmpeg/probe.py) at the door of the
    metrics: libav decodes a PNG or a JPEG as a one-frame "video" and plays text as ANSI
    art, whatever the file is called. Renditions never trip it; files given to
    `python -m media_pipeline score` may."""
    if demuxer in IMAGE_FORMATS:
        raise VideoDecodeError(f"not a video: {name} is a still image ({demuxer}), not a video")
    if demuxer in TEXT_FORMATS:
        raise VideoDecodeError(f"not a video: {name} is text ({demuxer}), not a video")


@dataclass(frozen=True)
class VideoEnd:
    """The end of one video in `decode_videos`: how many frames it had, or why it could
    not be decoded (then it yielded no chunk)."""

    frames_decoded: int
    error: VideoDecodeError | None = None


def decode_videos(
    streams: Sequence[FrameStream], *, decoders: int = 1, ahead: int = 2
) -> Iterator[tuple[FrameStream, DecodedChunk | VideoEnd]]:
    """Decodes a batch of videos in `decoders` background threads, each taking the next
    video of the batch when it is done with one, all together at most `ahead` chunks per
    thread in advance of the consumer: (stream, chunk) for each chunk, then (stream,
    VideoEnd). With more than one decoder the cores are shared out: each stream's FFmpeg
    `threads` is set to cores // decoders (one decoder keeps FFmpeg's own choice). The
    events of one video come in order; those of videos decoded at the same time are
    interleaved. The decoders never wait for the metrics of a video's last chunks (nor
    for the checkpoint models that run after its pass). A video that cannot be decoded
    ends with its error and the others go on."""
    count = max(1, min(decoders, len(streams)))
    waiting: queue.SimpleQueue[FrameStream] = queue.SimpleQueue()
    for stream in streams:
        if count > 1:
            stream.threads = max(1, cores() // count)
        waiting.put(stream)

    def one_decoder() -> Iterator[tuple[FrameStream, DecodedChunk | VideoEnd]]:
        while True:
            try:
                stream = waiting.get_nowait()
            except queue.Empty:
                return
            chunks = stream._decode()
            try:
                for chunk in chunks:
                    yield stream, chunk
            except VideoDecodeError as exc:
                yield stream, VideoEnd(stream.frames_decoded, exc)
            else:
                yield stream, VideoEnd(stream.frames_decoded)
            finally:
                chunks.close()  # also when the consumer stops early

    return _in_background([one_decoder() for _ in range(count)], depth=ahead * count)


@dataclass
class _ChunkBuilder:
    index: list[int] = field(default_factory=list)
    luma: list[np.ndarray] = field(default_factory=list)
    luma_range: LumaRange = LIMITED_RANGE
    rgb_index: list[int] = field(default_factory=list)
    rgb: list[tuple[np.ndarray, ...]] = field(default_factory=list)  # R, G, B planes

    def build(self, *, pinned: bool) -> DecodedChunk:
        # copies: the decoder's frames are let go
        height, width = self.luma[0].shape
        luma = torch.empty((len(self.luma), height, width), dtype=torch.uint8, pin_memory=pinned)
        np.stack(self.luma, out=luma.numpy())
        rgb = torch.empty((len(self.rgb), 3, height, width), dtype=torch.uint8, pin_memory=pinned)
        for frame, planes in zip(rgb.numpy(), self.rgb, strict=True):
            for colour, plane in zip(frame, planes, strict=True):
                colour[...] = plane
        return DecodedChunk(
            index=np.asarray(self.index),
            luma=luma,
            luma_range=self.luma_range,
            rgb_index=np.asarray(self.rgb_index, dtype=np.int64),
            rgb=rgb,
        )


_END = object()


def _in_background(sources: Sequence[Iterator], *, depth: int) -> Iterator:
    """Yields what the `sources` yield, each produced by a thread of its own, all together
    at most `depth` items ahead (one source's items in its order). An exception of a
    producer is raised here; stopping early (a consumer that breaks off or fails) stops
    the producers and closes each source in its thread."""
    handoff: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def produce(items: Iterator) -> None:
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

    producers = [
        threading.Thread(target=produce, args=(items,), name="frame-decoder", daemon=True)
        for items in sources
    ]
    for producer in producers:
        producer.start()
    try:
        running = len(producers)
        while running:
            item, error = handoff.get()
            if error is not None:
                raise error
            if item is _END:
                running -= 1
                continue
            yield item
    finally:
        stop.set()
        while any(p.is_alive() for p in producers):  # unblock producers waiting for room
            with contextlib.suppress(queue.Empty):
                handoff.get(timeout=0.05)
        for producer in producers:
            producer.join()


def _count_frames(path: Path) -> int:
    """Frames in the first video stream: the container's count, else its packets counted
    by demuxing in a separate opening (no decoding; WebM and GIF carry no count)."""
    with av.open(libav_path(path)) as container:
        stream = container.streams.video[0]
        if stream.frames:
            return stream.frames
        return sum(1 for packet in container.demux(stream) if packet.size)
