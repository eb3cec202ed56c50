"""`python -m media_pipeline score VIDEO [--prompt T] [--metrics a,b] [--weights-dir DIR]
[--device cpu|cuda] [--batch-size N]`: one JSON object on stdout.

Module-level imports stay light: `transcode` builds the same parser, and torch is only
imported when `score` runs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("score", help="score one video with the baseline metrics")
    parser.add_argument("video", type=Path)
    parser.add_argument("--prompt", default=None, help="the text prompt (CLIPScore needs it)")
    parser.add_argument("--metrics", default=None, help="comma-separated metric names")
    parser.add_argument("--weights-dir", type=Path, default=None)
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

    names = [n.strip() for n in args.metrics.split(",") if n.strip()] if args.metrics else None
    if not args.video.is_file():
        print(f"error: no such file: {args.video}", file=sys.stderr)
        return 2
    try:
        report = score_video(
            path=args.video,
            prompt=args.prompt,
            metric_names=names,
            weights_dir=args.weights_dir,
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
