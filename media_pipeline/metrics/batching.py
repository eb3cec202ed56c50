"""Frames per batch: how many to start with on a device, and fewer once they do not fit.

On CUDA each video's batch is sized from its frame size and the GPU's free memory
(`batch_for_memory`): about BATCH_PIXELS pixels, as far as a share of the free memory
holds; a batch that still runs out of memory (other passes, the models, fragmentation) is
computed again in halves, and the halved size is kept for the rest of the video's pass
(`FrameBatches`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import torch

logger = logging.getLogger(__name__)

# On CPU a few frames keep every operation's data in the core's cache (bench/metrics.py:
# 4 frames run the full set 1.9x faster than 32).
CPU_BATCH_SIZE = 4
# Device bytes per pixel of a batch at the content metrics' peak: every weight-free metric
# at 1920x1080, four videos decoded side by side, peaked at 19 bytes per batch pixel in
# batches of 32 and 29 in batches of 8 on an H200 (bench/metrics.py); the quarter of the
# free memory leaves the rest of the room.
BYTES_PER_PIXEL = 32
# Pixels per batch that keep a CUDA pass fed without holding a video's frames back: on an
# H200 the best of 8-128 frames was 64 at 512x288, 8 at 1920x1080 (each chunk's metrics
# wait for the whole chunk to decode), at 1280x720 all within 7%
# (bench/metrics_profile.py).
BATCH_PIXELS = 16 * 2**20
# The share of the GPU's free memory a pass plans for: passes of videos decoded side by
# side, the checkpoint models and the allocator's slack take the rest.
FREE_MEMORY_SHARE = 0.25
# Decoded chunks of this many frames wait in the decoder's queue in host memory.
MAX_CUDA_BATCH = 64


def batch_for_memory(free_bytes: int, frame_pixels: int) -> int:
    """Frames of `frame_pixels` pixels per CUDA batch: BATCH_PIXELS' worth, no more than
    FREE_MEMORY_SHARE of `free_bytes` holds at BYTES_PER_PIXEL, in [1, MAX_CUDA_BATCH]."""
    pixels = max(1, frame_pixels)
    fits = int(FREE_MEMORY_SHARE * free_bytes // (BYTES_PER_PIXEL * pixels))
    return max(1, min(MAX_CUDA_BATCH, fits, BATCH_PIXELS // pixels))


def default_batch_size(device: str, *, frame_pixels: int = 1920 * 1080) -> int:
    """Frames per batch on `device`: CPU_BATCH_SIZE on CPU; on CUDA `batch_for_memory` of
    the GPU's free memory for frames of `frame_pixels` pixels."""
    if not device.startswith("cuda"):
        return CPU_BATCH_SIZE
    free_bytes, _total = torch.cuda.mem_get_info(device)
    return batch_for_memory(free_bytes, frame_pixels)


def _out_of_memory_is_none(fn: Callable, args: list, kwargs: dict, *, last_try: bool):
    """fn's result, or None if it ran out of memory (re-raised on the last try). Returning
    outside the except block lets the error's frames, and the tensors they hold, go."""
    try:
        return fn(*args, **kwargs)
    except torch.OutOfMemoryError:
        if last_try:
            raise
        return None


class FrameBatches:
    """Computes a function of frames in batches of at most `size` frames, halving `size`
    (down to one frame) when a batch runs out of memory. One per video pass, shared by its
    features and models, so a halving holds for the rest of the pass."""

    def __init__(self, size: int, device: str) -> None:
        self.size, self.device = size, device

    def compute(self, fn: Callable[..., torch.Tensor], *frames, **kwargs) -> torch.Tensor:
        """fn over the frames, its per-frame results joined along dim 0. The tensors among
        the positional arguments are sliced alike along dim 0; the others, and the keyword
        arguments, are passed whole. An out-of-memory error at one frame is raised."""
        count = next((a.shape[0] for a in frames if isinstance(a, torch.Tensor)), 0)
        parts, start = [], 0
        while True:
            stop = min(start + self.size, count)
            batch = [a[start:stop] if isinstance(a, torch.Tensor) else a for a in frames]
            result = _out_of_memory_is_none(fn, batch, kwargs, last_try=stop - start <= 1)
            if result is None:
                self._halve(stop - start)
                continue
            parts.append(result)
            start = stop
            if start >= count:
                return parts[0] if len(parts) == 1 else torch.cat(parts)

    def _halve(self, failed: int) -> None:
        if torch.cuda.is_available():
            torch.cuda.empty_cache()  # the failed batch's freed blocks, back to the driver
        self.size = (failed + 1) // 2
        logger.warning(
            "out of memory on %s at %d frames per batch: batch size %d from now on",
            self.device,
            failed,
            self.size,
        )
