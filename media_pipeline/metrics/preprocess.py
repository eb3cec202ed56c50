"""Image preprocessing for the checkpoint metrics, in torch (no torchvision, no PIL).

Each step rounds back to 8-bit where the reference pipeline holds an 8-bit image (a
resized PIL image, a resized uint8 tensor), so the model sees what it would see there.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

# OpenAI CLIP's normalisation (CLIPImageProcessor's image_mean / image_std).
CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)
# ImageNet's, as VBench's dino_transform normalises.
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def _resize(nchw: torch.Tensor, size: tuple[int, int], mode: str, antialias: bool) -> torch.Tensor:
    out = F.interpolate(nchw, size=size, mode=mode, antialias=antialias, align_corners=False)
    return out.round().clamp(0, 255)  # an 8-bit image again


def shortest_side_size(height: int, width: int, side: int) -> tuple[int, int]:
    """Output (H, W) with the shorter side = `side`, the longer int(side * long / short),
    as CLIPImageProcessor and torchvision's Resize(int) compute it."""
    if height <= width:
        return side, int(side * width / height)
    return int(side * height / width), side


def _normalize(nchw: torch.Tensor, mean, std) -> torch.Tensor:
    m = torch.tensor(mean, dtype=nchw.dtype, device=nchw.device).view(1, 3, 1, 1)
    s = torch.tensor(std, dtype=nchw.dtype, device=nchw.device).view(1, 3, 1, 1)
    return (nchw / 255.0 - m) / s


def to_height(nchw: torch.Tensor, height: int) -> torch.Tensor:
    """GAIA's rescaling: height `height`, aspect kept, bicubic with antialiasing."""
    h, w = nchw.shape[-2:]
    return _resize(nchw, (height, max(1, round(w * height / h))), "bicubic", antialias=True)


def clip_pixels(frames: torch.Tensor, *, image_size: int, gaia_height: int = 520) -> torch.Tensor:
    """(N, 3, H, W) RGB frames -> CLIP pixel values (N, 3, S, S): GAIA's height-520 rescale,
    then CLIPImageProcessor's steps: shortest side to S (bicubic), centre crop S x S,
    rescale by 1/255, normalise with CLIP's mean and std."""
    x = to_height(frames.to(torch.float32), gaia_height)
    size = shortest_side_size(x.shape[-2], x.shape[-1], image_size)
    x = _resize(x, size, "bicubic", antialias=True)
    top = (x.shape[-2] - image_size) // 2
    left = (x.shape[-1] - image_size) // 2
    x = x[..., top : top + image_size, left : left + image_size]
    return _normalize(x, CLIP_MEAN, CLIP_STD)


def dino_resize(frames: torch.Tensor, *, side: int = 224) -> torch.Tensor:
    """(N, 3, H, W) RGB -> (N, 3, h, w) uint8-valued: VBench's Resize(224) on uint8 tensors
    (shortest side 224, bilinear, no antialiasing)."""
    x = frames.to(torch.float32)
    size = shortest_side_size(x.shape[-2], x.shape[-1], side)
    return _resize(x, size, "bilinear", antialias=False).to(torch.uint8)


def dino_pixels(resized: torch.Tensor) -> torch.Tensor:
    """dino_resize output -> ImageNet-normalised float pixels."""
    return _normalize(resized.to(torch.float32), IMAGENET_MEAN, IMAGENET_STD)
