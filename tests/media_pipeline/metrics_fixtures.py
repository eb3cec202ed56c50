"""Helpers for the metric tests: clips made with the ffmpeg command line, frames decoded by
the ffmpeg command line (not PyAV), and tiny random checkpoints written like real ones."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import numpy as np
import torch

from media_pipeline.metrics.registry import CLIP_DIR, DINO_DIR


def make_clip(path: Path, *, size: str, rate: int, frames: int, source: str = "testsrc2") -> Path:
    """Lossless H.264 (qp 0), so the coded luma stays in the legal 16-235 range."""
    subprocess.run(
        [
            "ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi",
            "-i", f"{source}=size={size}:rate={rate}",
            "-frames:v", str(frames), "-c:v", "libx264", "-preset", "ultrafast", "-qp", "0",
            "-pix_fmt", "yuv420p", str(path),
        ],
        check=True,
    )  # fmt: skip
    return path


def ffmpeg_frames(path: Path, width: int, height: int) -> np.ndarray:
    """All frames as (F, H, W, 3) float32 RGB, decoded by the ffmpeg command line."""
    raw = subprocess.run(
        ["ffmpeg", "-v", "error", "-i", str(path), "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
        capture_output=True,
        check=True,
    ).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, height, width, 3).astype(np.float32)


def ffmpeg_luma(path: Path, width: int, height: int) -> np.ndarray:
    """All frames' coded Y planes as (F, H, W) uint8, as the ffmpeg command line writes the
    video's own yuv420p (no conversion): each frame is Y, then U and V at quarter size."""
    raw = subprocess.run(
        ["ffmpeg", "-v", "error", "-i", str(path), "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"],
        capture_output=True,
        check=True,
    ).stdout
    chroma = 2 * ((width + 1) // 2) * ((height + 1) // 2)
    frames = np.frombuffer(raw, np.uint8).reshape(-1, width * height + chroma)
    return frames[:, : width * height].reshape(-1, height, width)


def planar(rgb: np.ndarray) -> torch.Tensor:
    """Packed (N, H, W, 3) RGB as the decoder gives it: planar (N, 3, H, W)."""
    return torch.from_numpy(np.ascontiguousarray(np.moveaxis(rgb, -1, 1)))


def bt601(rgb: np.ndarray) -> np.ndarray:
    return rgb[..., 0] * 0.299 + rgb[..., 1] * 0.587 + rgb[..., 2] * 0.114


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def pins_for(weights_dir: Path) -> dict[str, str]:
    """{relative name: sha256} of every file under weights_dir, hashed here with hashlib."""
    return {
        p.relative_to(weights_dir).as_posix(): sha256(p)
        for p in sorted(weights_dir.rglob("*"))
        if p.is_file()
    }


WORDS = ["a", "person", "waves", "hand", "runs", "in", "park", "cat", "the"]


def write_tiny_clip(weights_dir: Path) -> Path:
    """A random-init CLIP (32 px, 2 layers) and a CLIP BPE tokenizer from a small vocab."""
    import torch
    from transformers import CLIPConfig, CLIPModel

    folder = weights_dir / CLIP_DIR
    folder.mkdir(parents=True)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab: dict[str, int] = {}
    for token in [*letters, *(c + "</w>" for c in letters)]:
        vocab[token] = len(vocab)
    merges = []
    for word in WORDS:  # merge each word left to right into one token
        pieces = list(word[:-1]) + [word[-1] + "</w>"]
        while len(pieces) > 1:
            merges.append(f"{pieces[0]} {pieces[1]}")
            pieces = [pieces[0] + pieces[1], *pieces[2:]]
            vocab.setdefault(pieces[0], len(vocab))
    for special in ("<|startoftext|>", "<|endoftext|>"):
        vocab[special] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(dict.fromkeys(merges)) + "\n")
    text = dict(
        vocab_size=len(vocab),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        max_position_embeddings=32,
        bos_token_id=vocab["<|startoftext|>"],
        eos_token_id=vocab["<|endoftext|>"],
        pad_token_id=vocab["<|endoftext|>"],
    )
    vision = dict(
        image_size=32, patch_size=8, hidden_size=32, intermediate_size=64,
        num_hidden_layers=2, num_attention_heads=2,
    )  # fmt: skip
    torch.manual_seed(0)
    model = CLIPModel(CLIPConfig(text_config=text, vision_config=vision, projection_dim=16))
    model.save_pretrained(folder, safe_serialization=True)
    return folder


def write_tiny_dino(weights_dir: Path) -> Path:
    """A random-init ViT (patch 16, 2 layers) saved as facebook/dino-vitb16 is laid out."""
    import torch
    from transformers import ViTConfig, ViTModel

    folder = weights_dir / DINO_DIR
    folder.mkdir(parents=True)
    torch.manual_seed(1)
    config = ViTConfig(
        image_size=224, patch_size=16, hidden_size=32, intermediate_size=64,
        num_hidden_layers=2, num_attention_heads=2,
    )  # fmt: skip
    ViTModel(config, add_pooling_layer=False).save_pretrained(folder, safe_serialization=True)
    return folder


def tiny_weights(folder: Path) -> tuple[Path, dict[str, str]]:
    """Tiny CLIP and DINO checkpoints under `folder`, and their sha256 pins."""
    write_tiny_clip(folder)
    write_tiny_dino(folder)
    return folder, pins_for(folder)
