"""Weight-free content features in torch (GAIA's six low-level features and motion).

Every function takes a batch of frames on any device and returns one value per frame; the
caller averages over the sampled frames (GAIA: every 8th frame). Luma comes either as
float values or as the decoder's 8-bit codes: on codes, differences, Sobel and Laplacian
sums are computed exactly in 16-bit integers (half the memory traffic of float32, which is
what these kernels are bound by on a CPU), and the caller maps the result to 0-255 luma
with the code range's gain (every feature here is a mean, a deviation or a variance, so
the mapping is exact: LumaRange.level, gain, gain squared).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps

import numpy as np
import torch


@dataclass(frozen=True)
class LumaRange:
    """How 8-bit luma codes map to 0-255 luma: (code - black) * 255 / (white - black).

    Video is coded in limited range (16-235, ITU-R BT.601/709), JPEG-style sources in full
    range; siti-tools maps limited-range luma the same way (to [0, 1], then times 255).
    """

    black: int
    white: int

    @property
    def gain(self) -> float:
        return 255 / (self.white - self.black)

    def level(self, code: torch.Tensor) -> torch.Tensor:
        """Luma codes (or their mean) -> 0-255 luma."""
        return (code - self.black) * self.gain


LIMITED_RANGE = LumaRange(16, 235)
FULL_RANGE = LumaRange(0, 255)


def _per_frame(fn: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
    """No frames in (a chunk without a sampled frame) -> no values out, not a NaN warning."""

    @wraps(fn)
    def wrapper(first: torch.Tensor, *rest: torch.Tensor) -> torch.Tensor:
        if first.shape[0] == 0:
            return first.new_zeros(0, dtype=torch.float32)
        return fn(first, *rest)

    return wrapper


def mean_var(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-frame mean and population variance of (N, ...) values: the mean, then the dot
    product of the centred values with themselves. On CPU this is about ten times faster
    than torch.var_mean's one-pass (Welford) kernel and as exact: two passes over data
    that sits in cache, each summed pairwise."""
    flat = _floating(x).reshape(x.shape[0], -1)
    mean = flat.mean(dim=1, keepdim=True)
    centred = flat - mean
    return mean.squeeze(1), torch.linalg.vecdot(centred, centred) / flat.shape[1]


def _floating(x: torch.Tensor) -> torch.Tensor:
    return x if x.is_floating_point() else x.to(torch.float32)


def _signed(y: torch.Tensor) -> torch.Tensor:
    """8-bit codes as int16, where every sum below is exact (|Sobel| <= 4 * 255); float
    values as they are."""
    return y if y.is_floating_point() else y.to(torch.int16)


def _mean(x: torch.Tensor) -> torch.Tensor:
    """Per-frame mean of (N, H, W) values; integer values (at most 1023 in size) are summed
    exactly, in int32 while that cannot overflow (twice as fast as int64), then divided."""
    if x.is_floating_point():
        return x.mean(dim=(1, 2))
    pixels = x.shape[1] * x.shape[2]
    total = torch.int32 if pixels * 1023 < 2**31 else torch.int64
    return x.sum(dim=(1, 2), dtype=total).to(torch.float64).div_(pixels)


def _std(x: torch.Tensor) -> torch.Tensor:
    return mean_var(x)[1].sqrt()


@_per_frame
def brightness(y: torch.Tensor) -> torch.Tensor:
    """Mean luma per frame."""
    return _mean(y)


@_per_frame
def contrast(y: torch.Tensor) -> torch.Tensor:
    """RMS contrast: the population standard deviation of luma per frame."""
    return _std(y)


@_per_frame
def colorfulness(rgb: torch.Tensor) -> torch.Tensor:
    """Hasler and Suesstrunk (2003): sqrt(s_rg^2 + s_yb^2) + 0.3 sqrt(m_rg^2 + m_yb^2) with
    rg = R - G and yb = (R + G) / 2 - B, statistics per frame (population std), of planar
    (N, 3, H, W) RGB. 8-bit values are combined exactly in int16, yb as 2 yb = R + G - 2B
    (then halved in the statistics); each plane is contiguous, so every operation runs on
    contiguous rows (2.2x faster than on packed RGB's every third value)."""
    r, g, b = _signed(rgb).unbind(1)
    mean_rg, var_rg = mean_var(r - g)
    mean_yb2, var_yb2 = mean_var(torch.add(r, g).sub_(b, alpha=2))
    return torch.sqrt(var_rg + var_yb2 / 4) + 0.3 * torch.hypot(mean_rg, mean_yb2 / 2)


def _laplacian(y: torch.Tensor) -> torch.Tensor:
    """Valid 3x3 4-neighbour Laplacian (no border, as P.910 drops it), by shifted slices:
    much faster than a one-channel conv2d on CPU, and exact."""
    y = _signed(y)
    up_down = torch.add(y[:, :-2, 1:-1], y[:, 2:, 1:-1])
    return up_down.add_(y[:, 1:-1, :-2]).add_(y[:, 1:-1, 2:]).sub_(y[:, 1:-1, 1:-1], alpha=4)


def _sobel_magnitude(y: torch.Tensor) -> torch.Tensor:
    """Valid-region Sobel gradient magnitude, separably: [1 2 1] smoothing across the
    derivative [-1 0 1]. The kernel's sign and orientation do not change the magnitude."""
    y = _signed(y)
    smooth_v = torch.add(y[:, :-2], y[:, 2:]).add_(y[:, 1:-1], alpha=2)
    gx = _floating(smooth_v[:, :, 2:] - smooth_v[:, :, :-2])
    diff_v = y[:, 2:] - y[:, :-2]
    gy = _floating(torch.add(diff_v[:, :, :-2], diff_v[:, :, 2:]).add_(diff_v[:, :, 1:-1], alpha=2))
    return _sqrt_(gx.mul_(gx).addcmul_(gy, gy))


def _sqrt_(x: torch.Tensor) -> torch.Tensor:
    """In-place square root. On CPU through numpy: torch's CPU kernel takes a slow path on
    zeros (about 7x slower here, and flat areas of a picture are mostly zero gradient),
    numpy's vectorised loop does not."""
    if x.device.type == "cpu" and x.is_contiguous():
        np.sqrt(x.numpy(), out=x.numpy())
        return x
    return x.sqrt_()


@_per_frame
def sharpness(y: torch.Tensor) -> torch.Tensor:
    """Variance of the 4-neighbour Laplacian of luma (Pech-Pacheco et al. 2000)."""
    return mean_var(_laplacian(y))[1]


@_per_frame
def spatial_information(y: torch.Tensor) -> torch.Tensor:
    """ITU-T P.910 SI per frame: std over pixels of the Sobel gradient magnitude."""
    return _std(_sobel_magnitude(y))


@_per_frame
def temporal_information(y: torch.Tensor, previous: torch.Tensor) -> torch.Tensor:
    """ITU-T P.910 TI per frame: std over pixels of the difference to the previous frame."""
    return _std(_signed(y) - _signed(previous))


@_per_frame
def motion(y: torch.Tensor, previous: torch.Tensor) -> torch.Tensor:
    """Mean absolute luma difference to the previous frame (frame-difference motion)."""
    return _mean((_signed(y) - _signed(previous)).abs_())


def flicker(mean_luma: torch.Tensor) -> torch.Tensor:
    """Mean absolute second difference of the per-frame mean luma: brightness that jumps
    up and down from frame to frame, insensitive to steady fades (one value per clip)."""
    if mean_luma.numel() < 3:
        return torch.zeros((), dtype=mean_luma.dtype, device=mean_luma.device)
    return (mean_luma[2:] - 2 * mean_luma[1:-1] + mean_luma[:-2]).abs().mean()
