"""`python -m media_pipeline`: the admin's command line over the pure pipeline cores.

Each subcommand lives beside the core it drives (`ffmpeg/cli.py`, `metrics/cli.py`)
and is imported lazily, so `transcode` never pays for importing torch.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence

SUBCOMMANDS = {
    "transcode": "media_pipeline.ffmpeg.cli",
    "score": "media_pipeline.metrics.cli",
    "degrade": "media_pipeline.ffmpeg.degrade",
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m media_pipeline")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for module_path in SUBCOMMANDS.values():
        module = importlib.import_module(module_path)
        module.add_parser(subparsers)
    args = parser.parse_args(argv)
    return args.handler(args)
