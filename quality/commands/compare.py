"""``python -m quality compare JUDGMENTS.csv --out DIR``: side-by-side preference analysis.

Reads the judgments CSV (``rater_id,question,content_id,left,right,choice``), runs
``quality.stats.preference.analyse`` and writes DIR/scale.csv, DIR/pairs.csv and
DIR/summary.json (all at once: quality.commands.io).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from quality.commands.io import (
    add_bootstrap,
    add_out,
    as_option,
    bad_input,
    csv_text,
    finish,
    json_ready,
    left_out,
)
from quality.stats.preference import (
    MODELS,
    PAIR_COLUMNS,
    SCALE_COLUMNS,
    PreferenceSettings,
    analyse,
    read_judgments_csv,
)

NAME = "compare"
HELP = "side-by-side preferences: pair win rates, a scale of the conditions, rater checks"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "judgments", type=Path, help="long CSV: rater_id,question,content_id,left,right,choice"
    )
    add_out(parser, writes=("scale.csv", "pairs.csv", "summary.json"))
    defaults = PreferenceSettings()
    parser.add_argument(
        "--model",
        choices=list(MODELS),
        default=defaults.model,
        help="the scale's model (default %(default)s)",
    )
    add_bootstrap(
        parser, replicates=defaults.bootstrap, seed=defaults.seed, of="the scale's intervals"
    )
    parser.add_argument(
        "--prior",
        type=float,
        default=defaults.prior,
        help="precision of the Gaussian prior on each score (0: plain maximum likelihood; "
        "default %(default)s)",
    )
    parser.add_argument(
        "--confidence",
        type=float,
        default=defaults.confidence,
        help="level of every interval, Wilson and bootstrap (default %(default)s)",
    )
    parser.add_argument(
        "--no-screen",
        action="store_true",
        help="keep every rater (no position_bias or disagrees_with_majority screening)",
    )


def run(args: argparse.Namespace) -> int:
    if args.seed < 0:
        return bad_input("--seed must be 0 or more")
    try:
        settings = PreferenceSettings(
            model=args.model,
            bootstrap=args.bootstrap,
            seed=args.seed,
            prior=args.prior,
            screen=not args.no_screen,
            confidence=args.confidence,
        )
    except ValueError as exc:  # the message starts with the setting's name
        return bad_input(as_option(exc))
    try:
        judgments = read_judgments_csv(path=args.judgments)
        result = analyse(judgments, settings=settings)
    except (ValueError, FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        return bad_input(exc)
    summary = json_ready(result.summary_dict())
    files = {
        "scale.csv": csv_text(result.scale, SCALE_COLUMNS),
        "pairs.csv": csv_text(result.pairs, PAIR_COLUMNS),
        "summary.json": json.dumps(summary, indent=1, allow_nan=False) + "\n",
    }
    return finish(
        args.out,
        files,
        f"{result.n_judgments_kept} of {result.n_judgments} judgments kept "
        f"({len({e['rater_id'] for e in result.exclusions})} rater(s) excluded)"
        f"{left_out(judgments)}; wrote {args.out}",
    )
