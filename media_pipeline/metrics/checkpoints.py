"""Checkpoint metrics: CLIPScore (GAIA's protocol) and VBench's subject consistency.

Models are built from the verified local files only (config.json + model.safetensors,
the tokenizer's vocab.json + merges.txt): no `from_pretrained` on a directory, so no file
that was not checksummed is ever read, and nothing is downloaded. A loaded model is kept
per (files' checksums, device), so a worker loads each once.
"""

from __future__ import annotations

import inspect
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

from media_pipeline.metrics import preprocess
from media_pipeline.metrics.batching import FrameBatches
from media_pipeline.metrics.weights import WeightsUnavailable, sha256_of

_models: dict[tuple, object] = {}


def _from_verified(model_class, files: Mapping[str, Path], **kwargs) -> torch.nn.Module:
    """`from_pretrained` on a private folder that links exactly the verified config.json and
    model.safetensors, so transformers applies its own key conversions for the release
    (transformers 5 renamed ViT's modules) yet reads nothing unchecked; offline only."""
    by_name = {Path(name).name: path for name, path in files.items()}
    with tempfile.TemporaryDirectory(prefix="mosaic-weights-") as folder:
        for name in ("config.json", "model.safetensors"):
            os.symlink(by_name[name].resolve(), Path(folder) / name)
        model, info = model_class.from_pretrained(
            folder, local_files_only=True, output_loading_info=True, **kwargs
        )
    # position_ids are buffers some releases store and others do not
    missing = [k for k in info.get("missing_keys", []) if not k.endswith("position_ids")]
    if missing:  # transformers would have filled them with random values
        raise WeightsUnavailable(
            f"model.safetensors does not fit its config.json: missing {', '.join(missing[:3])}"
        )
    return model.eval()


def _features(output) -> torch.Tensor:
    # transformers 4 returns the projected tensor, transformers 5 an output object
    return output if isinstance(output, torch.Tensor) else output.pooler_output


@dataclass
class ClipScorer:
    """CLIPScore as GAIA computes it (Hessel et al. 2021, EMNLP)."""

    model: torch.nn.Module
    tokenizer: object
    image_size: int
    max_length: int
    device: str

    def scores(
        self, frames: torch.Tensor, prompt: str, *, batches: FrameBatches
    ) -> dict[str, float]:
        """frames: planar (N, 3, H, W) 0-255 RGB. clip_cosine = mean_t cos(E_img(x_t),
        E_txt(prompt)); clip_score = mean_t 100 * max(cos_t, 0)."""
        tokens = self.tokenizer(
            [prompt], truncation=True, max_length=self.max_length, return_tensors="pt"
        ).to(self.device)
        text = F.normalize(_features(self.model.get_text_features(**tokens)), dim=-1)
        cos = batches.compute(self._cosines, frames, text=text[0])
        return {
            "clip_cosine": float(cos.mean()),
            "clip_score": float((100 * cos.clamp(min=0)).mean()),
        }

    def _cosines(self, frames: torch.Tensor, *, text: torch.Tensor) -> torch.Tensor:
        """cos(E_img(x_t), text) per frame, `text` the normalised prompt embedding."""
        pixels = preprocess.clip_pixels(frames, image_size=self.image_size)
        image = F.normalize(_features(self.model.get_image_features(pixel_values=pixels)), dim=-1)
        return image @ text


def _clip_tokenizer(vocab: Path, merges: Path):
    from transformers import CLIPTokenizer

    params = inspect.signature(CLIPTokenizer.__init__).parameters
    if "vocab_file" in params:  # transformers 4
        return CLIPTokenizer(vocab_file=str(vocab), merges_file=str(merges))
    return CLIPTokenizer(vocab=str(vocab), merges=str(merges))


def load_clip(files: Mapping[str, Path], *, device: str) -> ClipScorer:
    from transformers import CLIPModel

    by_name = {Path(name).name: path for name, path in files.items()}
    model = _from_verified(CLIPModel, files).to(device)
    config = model.config
    return ClipScorer(
        model=model,
        tokenizer=_clip_tokenizer(by_name["vocab.json"], by_name["merges.txt"]),
        image_size=config.vision_config.image_size,
        max_length=config.text_config.max_position_embeddings,
        device=device,
    )


@dataclass
class DinoScorer:
    """VBench's subject consistency (Huang et al. 2024, CVPR) on DINO CLS features."""

    model: torch.nn.Module
    device: str
    interpolate: bool  # ViT needs to be told to interpolate position embeddings; DINOv2 not

    def features(self, resized: torch.Tensor) -> torch.Tensor:
        """dino_resize output (N, 3, h, w) -> L2-normalised CLS features (N, D)."""
        kwargs = {"interpolate_pos_encoding": True} if self.interpolate else {}
        out = self.model(pixel_values=preprocess.dino_pixels(resized), **kwargs)
        # the CLS token after the final layer norm: what DINO's own ViT returns
        return F.normalize(out.last_hidden_state[:, 0], dim=-1)

    @staticmethod
    def consistency(features: torch.Tensor) -> float:
        """mean over t >= 1 of (max(0, cos(f_t, f_t-1)) + max(0, cos(f_t, f_0))) / 2."""
        previous = (features[1:] * features[:-1]).sum(-1).clamp(min=0)
        first = (features[1:] @ features[0]).clamp(min=0)
        return float(((previous + first) / 2).mean())


def load_dino(files: Mapping[str, Path], *, device: str) -> DinoScorer:
    from transformers import Dinov2Model, ViTModel

    by_name = {Path(name).name: path for name, path in files.items()}
    model_type = json.loads(by_name["config.json"].read_text()).get("model_type", "vit")
    if model_type == "dinov2":
        model = _from_verified(Dinov2Model, files)
    elif model_type == "vit":  # the CLS token is used, not ViT's pooler (DINO has none)
        model = _from_verified(ViTModel, files, add_pooling_layer=False)
    else:
        raise WeightsUnavailable(f"config.json: model_type {model_type!r} is not a DINO ViT")
    model = model.to(device)
    return DinoScorer(model=model, device=device, interpolate=model_type == "vit")


LOADERS = {"clip": load_clip, "dino": load_dino}


def load_group(group: str, files: Mapping[str, Path], *, device: str):
    """The scorer of a metric group, loaded once per (checksums, device)."""
    key = (group, device, tuple(sorted((n, sha256_of(p)) for n, p in files.items())))
    if key not in _models:
        try:
            _models[key] = LOADERS[group](files, device=device)
        except WeightsUnavailable:
            raise
        except Exception as exc:  # a file that passed its checksum but does not load
            raise WeightsUnavailable(f"could not load {group} weights: {exc}") from exc
    return _models[key]
