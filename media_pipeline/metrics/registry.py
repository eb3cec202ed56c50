"""The metric registry: what each metric computes, from which frames, with which weights.

Every metric declares its name and version (a stored score is keyed by both, so a change
of definition bumps the version), the definition it implements with its source, how it
samples frames, the weight files it needs (file name relative to the weights directory
and the sha256 it must have) and whether it batches frames.

Two kinds of metric:
- content metrics (weight-free): each reads a per-frame `Feature` (`content.py`) at the
  frames it samples and reduces the values ("mean", "max", or a whole-clip statistic).
  Features are computed while the video is decoded, once per frame however many metrics
  read them (`frame_features.py`). Luma is the coded Y plane reported as 0-255 luma
  (`LumaRange`), RGB is decoded only for the frames a colour metric reads;
- checkpoint metrics: a model loaded from local files (`checkpoints.py`) scores a frame
  view kept from the same decode pass; metrics that share a model (the two CLIPScore
  variants) share a `group` so the model runs once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

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
    all_frames -> every decoded frame; frame_means -> only every frame's mean luma, which
    the decoder takes as it goes (no frame is kept for it). rgb: the metric reads colour
    (RGB), else luma only.
    """

    every_kth: int | None = None
    with_previous: bool = False
    uniform: int | None = None
    all_frames: bool = False
    frame_means: bool = False
    resolution: str = "native"
    rgb: bool = False

    def frames_for(self, samples: int) -> int:
        """The fewest decoded frames that give ``samples`` values: frames 0, k, 2k, ...
        with the frame before each (none before frame 0) need samples * k + 1."""
        extra = 1 if self.with_previous else 0
        if self.every_kth and not (self.all_frames or self.frame_means):
            return (samples - 1 + extra) * self.every_kth + 1
        return samples + extra

    def describe(self) -> str:
        if self.frame_means:
            return "the mean luma (the coded Y plane as 0-255 luma) of every frame"
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
class Feature:
    """A value per frame that content metrics read, computed once per frame whichever
    metrics read it (si and si_p910 read the same SI of a frame, at different frames).

    reads: "luma" (compute(luma, luma_range)), "pairs" (compute(current, previous,
    luma_range): a frame and the one just before it, the value belongs to the current
    one) or "rgb" (compute(rgb)). Luma is a batch of 8-bit codes in `luma_range`; the
    value is reported as of 0-255 luma (`content.LumaRange`).
    """

    name: str
    reads: str
    compute: Callable[..., torch.Tensor]


FEATURES: dict[str, Feature] = {
    f.name: f
    for f in [
        Feature("mean_luma", "luma", lambda y, r: r.level(content.brightness(y))),
        Feature("contrast", "luma", lambda y, r: r.gain * content.contrast(y)),
        Feature("sharpness", "luma", lambda y, r: r.gain**2 * content.sharpness(y)),
        Feature("si", "luma", lambda y, r: r.gain * content.spatial_information(y)),
        Feature("ti", "pairs", lambda y, p, r: r.gain * content.temporal_information(y, p)),
        Feature("abs_diff", "pairs", lambda y, p, r: r.gain * content.motion(y, p)),
        Feature("colorfulness", "rgb", lambda rgb: content.colorfulness(rgb)),
    ]
}


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
    feature: str | None = None  # content metrics: the per-frame value (FEATURES) they read
    # (flicker reads the decoder's frame means instead: sampling.frame_means)
    group: str | None = None  # checkpoint metrics sharing one model run

    @property
    def needs_weights(self) -> bool:
        return bool(self.weights)


GAIA_SAMPLING = FrameSampling(every_kth=8, resolution="native")
GAIA_SAMPLING_RGB = FrameSampling(every_kth=8, resolution="native", rgb=True)
GAIA_PAIRS = FrameSampling(every_kth=8, with_previous=True, resolution="native")
ALL_FRAMES = FrameSampling(all_frames=True, resolution="native")
FRAME_MEANS = FrameSampling(frame_means=True, resolution="native")

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
    feature: str | None,
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
        feature=feature,
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
            "mean_luma",
        ),
        _content(
            "contrast",
            "RMS contrast: population std of luma (0-255) per frame, averaged (GAIA)",
            GAIA_SAMPLING,
            "contrast",
        ),
        _content(
            "colorfulness",
            "Hasler and Suesstrunk 2003 (rg = R-G, yb = (R+G)/2-B; "
            "sqrt(s_rg^2+s_yb^2) + 0.3 sqrt(m_rg^2+m_yb^2)) per frame, averaged",
            GAIA_SAMPLING_RGB,
            "colorfulness",
            version="1",
        ),
        _content(
            "sharpness",
            "variance of the 4-neighbour Laplacian of luma, valid region (Pech-Pacheco et "
            "al. 2000), per frame, averaged",
            GAIA_SAMPLING,
            "sharpness",
        ),
        _content(
            "si",
            "ITU-T P.910 spatial information (std of the Sobel magnitude of luma) on every "
            "8th frame, averaged: GAIA's variant",
            GAIA_SAMPLING,
            "si",
        ),
        _content(
            "ti",
            "ITU-T P.910 temporal information (std of the luma difference to the previous "
            "frame) at every 8th frame, averaged: GAIA's variant",
            GAIA_PAIRS,
            "ti",
        ),
        _content(
            "si_p910",
            "ITU-T P.910 (2008, 'legacy' in siti-tools) SI: maximum over every frame",
            ALL_FRAMES,
            "si",
            reduce="max",
        ),
        _content(
            "ti_p910",
            "ITU-T P.910 (2008, 'legacy' in siti-tools) TI: maximum over every pair of "
            "consecutive frames",
            ALL_FRAMES,
            "ti",
            reduce="max",
        ),
        _content(
            "motion",
            "frame-difference motion: mean absolute luma difference to the previous frame "
            "at every 8th frame, averaged",
            GAIA_PAIRS,
            "abs_diff",
        ),
        _content(
            "flicker",
            "mean absolute second difference over time of the per-frame mean luma "
            "(|m[t+1] - 2 m[t] + m[t-1]|, averaged): brightness jumping between frames, "
            "blind to steady fades",
            FRAME_MEANS,
            None,  # a whole-clip statistic of the decoder's frame means
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
