"""``python -m quality verify VERDICTS.csv --out DIR``: the verify stage of
propose-then-verify labelling from a CSV.

Reads the long verdicts CSV (``rater_id,item_id,label,verdict``), runs
``quality.stats.verify.verify_labels`` and writes DIR/labels.csv
(``item_id,label,yes,no,kept``) and DIR/summary.json (verifier alpha, per-verifier
accuracy, settings, version), all at once (quality.commands.io).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from quality.commands.io import add_out, bad_input, csv_text, finish, json_ready, left_out
from quality.stats.labels.csv_input import read_text_csv
from quality.stats.verify import VERDICT_COLUMNS, VERIFIED_COLUMNS, LabelsError, verify_labels

NAME = "verify"
HELP = "labels kept by their verifiers (AVA: 2 of 3 say yes) from a verdicts CSV"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("verdicts", type=Path, help="long CSV: rater_id,item_id,label,verdict")
    add_out(parser, writes=("labels.csv", "summary.json"))
    parser.add_argument(
        "--keep",
        type=int,
        default=2,
        help="a label is kept when at least this many verifiers say yes (default 2)",
    )


def run(args: argparse.Namespace) -> int:
    try:
        if args.keep < 1:
            raise LabelsError("--keep must be at least 1")
        verdicts = read_text_csv(path=args.verdicts, columns=VERDICT_COLUMNS, what="verdicts")
    except (LabelsError, FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        return bad_input(exc)
    try:
        result = verify_labels(verdicts=verdicts, keep=args.keep)
    except LabelsError as exc:  # names the line: the file too, as the reader's errors do
        return bad_input(f"{args.verdicts}: {exc}")
    summary = json_ready(result.summary_dict())
    counts = summary["counts"]
    return finish(
        args.out,
        {
            "labels.csv": csv_text(result.labels, VERIFIED_COLUMNS),
            "summary.json": json.dumps(summary, indent=1, allow_nan=False) + "\n",
        },
        f"{counts['kept']} of {counts['labels']} labels kept from {counts['verdicts']} "
        f"verdicts"
        f"{left_out(verdicts)}; wrote {args.out}",
    )
