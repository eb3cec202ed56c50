"""`python -m media_pipeline score VIDEO [--prompt T] [--metrics a,b] [--weights-dir DIR]
[--device cpu|cuda] [--batch-size N]`: one JSON object on stdout.

Module-level imports stay light: `transcode` builds the same parser, and torch is only
imported when `score` runs.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("score", help="score one video with the baseline metrics")
    parser.add_argument("video", type=Path)
    parser.add_argument("--prompt", default=None, help="the text prompt (CLIPScore needs it)")
    parser.add_argument("--metrics", default=None, help="comma-separated metric names")
    parser.add_argument(
        "--weights-dir",
        type=Path,
        default=None,
        help="the checkpoints' folder (default: MOSAIC_WEIGHTS_DIR, as on a worker); each "
        "file loads only with its sha256 pinned in MOSAIC_WEIGHT_SHA256 (name=hex,...)",
    )
    parser.add_argument("--device", default=None, help="cpu or cuda (default: cuda if present)")
    parser.add_argument(
        "--batch-size",
        type=int,
        default=None,
        help="frames per batch (default: 4 on CPU; on CUDA sized from the frame size and "
        "the free GPU memory, at most 64)",
    )
    parser.set_defaults(handler=run)


def run(args) -> int:
    from media_pipeline.metrics.scoring import score_video

    names = None
    if args.metrics is not None:
        names = [n.strip() for n in args.metrics.split(",") if n.strip()]
        if not names:
            print(f"error: --metrics {args.metrics!r} names no metric", file=sys.stderr)
            return 2
    if not args.video.is_file():
        what = "is a folder, not a video" if args.video.is_dir() else "no such file"
        print(f"error: {args.video}: {what}", file=sys.stderr)
        return 2
    try:
        pins = weight_pins(os.environ.get("MOSAIC_WEIGHT_SHA256", ""))
        weights_dir = args.weights_dir or _env_path("MOSAIC_WEIGHTS_DIR")
        report = score_video(
            path=args.video,
            prompt=args.prompt,
            metric_names=names,
            weights_dir=weights_dir,
            weight_sha256=pins,
            device=args.device,
            batch_size=args.batch_size,
        )
    except (KeyError, ValueError) as exc:  # unknown metric, no CUDA, not a video
        message = exc.args[0] if exc.args else str(exc)
        print(f"error: {message}", file=sys.stderr)
        return 2
    print(
        json.dumps(
            {
                "video": str(args.video),
                "device": report.device,
                "frames": report.frames_decoded,
                "metrics": report.values,
                "unavailable": report.unavailable,
            }
        )
    )
    return 0


def weight_pins(text: str) -> dict[str, str]:
    """MOSAIC_WEIGHT_SHA256 as the settings read it (``name=hex,name=hex``): the pins the
    workers load checkpoints with, so that ``score`` runs the same code on them."""
    pins = {}
    for entry in filter(None, (part.strip() for part in text.split(","))):
        name, equals, digest = entry.partition("=")
        if not equals or not name.strip() or not digest.strip():
            raise ValueError(f"MOSAIC_WEIGHT_SHA256: {entry!r} is not name=sha256")
        pins[name.strip()] = digest.strip()
    return pins


def _env_path(name: str) -> Path | None:
    value = os.environ.get(name, "").strip()
    return Path(value) if value else None
