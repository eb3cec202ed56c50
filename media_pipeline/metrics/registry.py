"""The metric registry: what each metric computes, from which frames, with which weights.

Every metric declares its name and version (a stored score is keyed by both, so a change
of definition bumps the version), the definition it implements with its source, how it
samples frames, the weight files it needs (file name relative to the weights directory
and the sha256 it must have) and whether it batches frames.

Two kinds of metric:
- content metrics (weight-free): computed chunk by chunk on luma/RGB tensors while the
  video is decoded (`content.py`); each yields one value per sampled frame (or per clip)
  and a reduction ("mean" or "max") over them. Luma is the coded Y plane reported as
  0-255 luma (`LumaRange`), RGB is decoded only for the frames a colour metric reads;
- checkpoint metrics: a model loaded from local files (`checkpoints.py`) scores a frame
  view kept from the same decode pass; metrics that share a model (the two CLIPScore
  variants) share a `group` so the model runs once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import torch

from media_pipeline.metrics import content

# A checksum that is not one: the real releases' sha256 are pinned by whoever installs the
# weights (MOSAIC_WEIGHT_SHA256 in settings, passed as `weight_sha256`); until then the
# metric is unavailable rather than trusting an unverified file.
UNPINNED = "unpinned"


@dataclass(frozen=True)
class WeightFile:
    """A file the metric reads, relative to the weights directory, and its sha256."""

    name: str
    sha256: str = UNPINNED


@dataclass(frozen=True)
class FrameSampling:
    """Which frames a metric reads and at what resolution.

    every_kth=8 -> frames 0, 8, 16, ...; with_previous adds the frame just before each
    sampled one (frame differences); uniform=n -> n frames at round(linspace(0, F-1, n));
    all_frames -> every decoded frame. rgb: the metric reads colour (RGB), else luma only.
    """

    every_kth: int | None = None
    with_previous: bool = False
    uniform: int | None = None
    all_frames: bool = False
    resolution: str = "native"
    rgb: bool = False

    def describe(self) -> str:
        if self.all_frames:
            which = "every frame"
        elif self.uniform:
            which = f"{self.uniform} uniformly sampled frames"
        else:
            which = f"every {self.every_kth}th frame (0, {self.every_kth}, ...)"
            if self.with_previous:
                which += " and the frame just before each"
        planes = "RGB" if self.rgb else "luma (the coded Y plane)"
        return f"{which}; {planes}; resolution: {self.resolution}"


def take_rows(frames: torch.Tensor, rows: np.ndarray) -> torch.Tensor:
    """frames[rows] for host-side row numbers. Evenly spaced rows (every k-th frame of a
    chunk, GAIA's frame pairs) are a strided view: no copy, and on CUDA no transfer of the
    row numbers, which would wait for every kernel queued before it."""
    if len(rows) == 0:
        return frames[:0]
    steps = np.diff(rows)
    if len(rows) == 1 or (steps[0] > 0 and (steps == steps[0]).all()):
        step = int(steps[0]) if len(rows) > 1 else 1
        return frames[int(rows[0]) : int(rows[-1]) + 1 : step]
    return frames.index_select(0, torch.as_tensor(rows, device=frames.device))


@dataclass(frozen=True)
class ContentChunk:
    """Consecutive decoded frames of one video on the compute device (index on the host side
    is derived once; views are built on first use).

    luma: (N, H, W) uint8 luma codes of the wanted frames in decode order, coded in
    `luma_range`; index: (N,) their frame numbers; rgb: (M, H, W, 3) uint8 of the frames
    numbered rgb_index (those a colour metric reads); every_kth: the GAIA step; carry_*:
    the last frame of the previous chunk, so frame pairs straddling two chunks are not lost.
    The views below are computed on first use, only for the metrics that ask for them.
    """

    luma: torch.Tensor
    index: torch.Tensor
    luma_range: content.LumaRange
    every_kth: int
    rgb: torch.Tensor
    rgb_index: torch.Tensor
    carry_luma: torch.Tensor | None = None
    carry_index: int = -2

    @property
    def gain(self) -> float:
        """Luma codes -> 0-255 luma, for deviations (a variance takes it squared)."""
        return self.luma_range.gain

    def level(self, code: torch.Tensor) -> torch.Tensor:
        return self.luma_range.level(code)

    @cached_property
    def _host_index(self):
        return self.index.cpu().numpy()

    @cached_property
    def luma_sampled(self) -> torch.Tensor:
        return take_rows(self.luma, (self._host_index % self.every_kth == 0).nonzero()[0])

    @cached_property
    def rgb_sampled(self) -> torch.Tensor:
        rows = (self.rgb_index.numpy() % self.every_kth == 0).nonzero()[0]
        return take_rows(self.rgb, rows)

    def over_pairs(self, fn, *, sampled_only: bool) -> torch.Tensor:
        """fn(current, previous) over every pair of consecutive frames (frame i, i - 1), in
        frame order; sampled_only keeps the pairs whose frame i is an every-k-th frame.
        Pairs inside the chunk are views where possible (no copy of the whole chunk)."""
        index, k = self._host_index, self.every_kth
        parts = []
        first_sampled = not sampled_only or index[0] % k == 0
        if (
            self.carry_luma is not None
            and self.carry_index == index[0] - 1
            and self.carry_luma.shape == self.luma.shape[1:]
            and first_sampled
        ):
            parts.append(fn(self.luma[:1], self.carry_luma.unsqueeze(0)))
        consecutive = index[1:] == index[:-1] + 1
        if sampled_only:
            consecutive &= index[1:] % k == 0
        if consecutive.all():
            parts.append(fn(self.luma[1:], self.luma[:-1]))
        elif consecutive.any():
            rows = consecutive.nonzero()[0]
            parts.append(fn(take_rows(self.luma, rows + 1), take_rows(self.luma, rows)))
        return torch.cat(parts) if parts else self.luma.new_zeros(0, dtype=torch.float32)


@dataclass(frozen=True)
class Metric:
    name: str
    version: str
    definition: str  # what it computes and the source of the definition
    sampling: FrameSampling
    weights: tuple[WeightFile, ...] = ()
    batched: bool = True
    needs_prompt: bool = False
    reduce: str = "mean"  # over per-frame values: "mean", "max"; "clip" = whole-clip value
    per_chunk: Callable[[ContentChunk], torch.Tensor] | None = None  # content metrics
    group: str | None = None  # checkpoint metrics sharing one model run

    @property
    def needs_weights(self) -> bool:
        return bool(self.weights)


GAIA_SAMPLING = FrameSampling(every_kth=8, resolution="native")
GAIA_SAMPLING_RGB = FrameSampling(every_kth=8, resolution="native", rgb=True)
GAIA_PAIRS = FrameSampling(every_kth=8, with_previous=True, resolution="native")
ALL_FRAMES = FrameSampling(all_frames=True, resolution="native")

CLIP_DIR = "openai-clip-vit-base-patch32"
DINO_DIR = "facebook-dino-vitb16"
CLIP_FILES = tuple(
    WeightFile(f"{CLIP_DIR}/{name}")
    for name in ("config.json", "model.safetensors", "vocab.json", "merges.txt")
)
DINO_FILES = tuple(
    WeightFile(f"{DINO_DIR}/{name}") for name in ("config.json", "model.safetensors")
)
CLIP_SAMPLING = FrameSampling(
    uniform=8,
    rgb=True,
    resolution="height 520 (aspect kept, as GAIA), then CLIP's shortest side to the model's "
    "image size (bicubic) and centre crop",
)
DINO_SAMPLING = FrameSampling(
    all_frames=True, rgb=True, resolution="shortest side 224 (bilinear, as VBench's dino_transform)"
)


def _content(
    name: str,
    definition: str,
    sampling: FrameSampling,
    per_chunk: Callable[[ContentChunk], torch.Tensor],
    reduce: str = "mean",
    version: str = "2",
) -> Metric:
    """A content metric. Version 2 of the luma metrics reads the coded Y plane (version 1
    re-derived luma from decoded RGB: the same values up to 8-bit rounding of the RGB)."""
    return Metric(
        name=name,
        version=version,
        definition=definition,
        sampling=sampling,
        per_chunk=per_chunk,
        reduce=reduce,
    )


METRICS: dict[str, Metric] = {
    m.name: m
    for m in [
        _content(
            "brightness",
            "mean luma (the coded Y plane as 0-255 luma) per frame, averaged (GAIA's "
            "low-level feature)",
            GAIA_SAMPLING,
            lambda c: c.level(content.brightness(c.luma_sampled)),
        ),
        _content(
            "contrast",
            "RMS contrast: population std of luma (0-255) per frame, averaged (GAIA)",
            GAIA_SAMPLING,
            lambda c: c.gain * content.contrast(c.luma_sampled),
        ),
        _content(
            "colorfulness",
            "Hasler and Suesstrunk 2003 (rg = R-G, yb = (R+G)/2-B; "
            "sqrt(s_rg^2+s_yb^2) + 0.3 sqrt(m_rg^2+m_yb^2)) per frame, averaged",
            GAIA_SAMPLING_RGB,
            lambda c: content.colorfulness(c.rgb_sampled),
            version="1",
        ),
        _content(
            "sharpness",
            "variance of the 4-neighbour Laplacian of luma, valid region (Pech-Pacheco et "
            "al. 2000), per frame, averaged",
            GAIA_SAMPLING,
            lambda c: c.gain**2 * content.sharpness(c.luma_sampled),
        ),
        _content(
            "si",
            "ITU-T P.910 spatial information (std of the Sobel magnitude of luma) on every "
            "8th frame, averaged: GAIA's variant",
            GAIA_SAMPLING,
            lambda c: c.gain * content.spatial_information(c.luma_sampled),
        ),
        _content(
            "ti",
            "ITU-T P.910 temporal information (std of the luma difference to the previous "
            "frame) at every 8th frame, averaged: GAIA's variant",
            GAIA_PAIRS,
            lambda c: c.gain * c.over_pairs(content.temporal_information, sampled_only=True),
        ),
        _content(
            "si_p910",
            "ITU-T P.910 (2008, 'legacy' in siti-tools) SI: maximum over every frame",
            ALL_FRAMES,
            lambda c: c.gain * content.spatial_information(c.luma),
            reduce="max",
        ),
        _content(
            "ti_p910",
            "ITU-T P.910 (2008, 'legacy' in siti-tools) TI: maximum over every pair of "
            "consecutive frames",
            ALL_FRAMES,
            lambda c: c.gain * c.over_pairs(content.temporal_information, sampled_only=False),
            reduce="max",
        ),
        _content(
            "motion",
            "frame-difference motion: mean absolute luma difference to the previous frame "
            "at every 8th frame, averaged",
            GAIA_PAIRS,
            lambda c: c.gain * c.over_pairs(content.motion, sampled_only=True),
        ),
        _content(
            "flicker",
            "mean absolute second difference over time of the per-frame mean luma "
            "(|m[t+1] - 2 m[t] + m[t-1]|, averaged): brightness jumping between frames, "
            "blind to steady fades",
            ALL_FRAMES,
            lambda c: c.level(content.brightness(c.luma)),  # frame means, finished per clip
            reduce="clip",
        ),
        Metric(
            name="clip_cosine",
            version="1",
            definition="mean over 8 uniformly sampled frames of the cosine similarity between "
            "the CLIP ViT-B/32 image embedding and the prompt's text embedding (raw cosine; "
            "GAIA's CLIPScore protocol, Hessel et al. 2021)",
            sampling=CLIP_SAMPLING,
            weights=CLIP_FILES,
            needs_prompt=True,
            group="clip",
        ),
        Metric(
            name="clip_score",
            version="1",
            definition="mean over the same 8 frames of 100 * max(cos, 0) (the CLIPScore "
            "scaling used by torchmetrics; Hessel's w = 2.5 is clip_score / 40)",
            sampling=CLIP_SAMPLING,
            weights=CLIP_FILES,
            needs_prompt=True,
            group="clip",
        ),
        Metric(
            name="subject_consistency",
            version="1",
            definition="VBench subject consistency (Huang et al. 2024): DINO ViT-B/16 CLS "
            "features; for every frame t > 0, (max(0, cos(f_t, f_t-1)) + max(0, cos(f_t, "
            "f_0))) / 2, averaged over t",
            sampling=DINO_SAMPLING,
            weights=DINO_FILES,
            group="dino",
        ),
    ]
}


def available_metrics() -> list[Metric]:
    """Every registered metric (whether its weights are present is decided when scoring)."""
    return list(METRICS.values())


def get_metric(name: str) -> Metric:
    try:
        return METRICS[name]
    except KeyError:
        raise KeyError(f"unknown metric {name!r} (one of {', '.join(METRICS)})") from None
