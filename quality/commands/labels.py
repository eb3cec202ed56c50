"""``python -m quality labels ANSWERS.csv --out DIR``: questionnaire labels from a CSV.

Reads the long answers CSV (``rater_id,item_id,question,kind,answer``), runs
``quality.stats.labels.analyse`` and writes DIR/labels.csv (LABEL_COLUMNS: one label
per item and question) and DIR/summary.json (alpha per question, per-rater agreement,
Dawid-Skene confusion matrices when used, settings, version), all at once
(quality.commands.io).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from quality.commands.io import bad_input, csv_text, finish, json_ready
from quality.stats.labels import (
    LABEL_COLUMNS,
    METHODS,
    LabelsError,
    LabelSettings,
    analyse,
    read_answers_csv,
)

NAME = "labels"
HELP = "questionnaire labels (mean, majority level, kept tags) and alpha from an answers CSV"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "answers", type=Path, help="long CSV: rater_id,item_id,question,kind,answer"
    )
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    defaults = LabelSettings()
    parser.add_argument(
        "--keep-share",
        type=float,
        default=defaults.keep_share,
        help="a tag is kept when chosen by MORE than this share of the item's raters "
        "(default 0.5: 2 of 3 keeps, 2 of 4 does not)",
    )
    parser.add_argument(
        "--method",
        choices=METHODS,
        default=defaults.method,
        help="how ordinal questions are decided (default majority)",
    )
    parser.add_argument(
        "--max-iterations",
        type=int,
        default=defaults.max_iterations,
        help="Dawid-Skene: most EM iterations",
    )
    parser.add_argument(
        "--tolerance", type=float, default=defaults.tolerance, help="Dawid-Skene: stop tolerance"
    )


def labels_csv(labels) -> str:
    """The labels table as CSV; the repeated text columns go through ``csv_text`` as
    categories, so that each distinct value is made spreadsheet-safe once."""
    frame = labels[list(LABEL_COLUMNS)].copy()
    for column in ("item_id", "question", "kind", "status"):
        frame[column] = frame[column].astype("category")
    return csv_text(frame)


def _check_settings(args: argparse.Namespace) -> LabelSettings:
    if not 0.0 <= args.keep_share < 1.0:
        raise LabelsError("--keep-share must be in [0, 1)")
    if args.max_iterations < 1:
        raise LabelsError("--max-iterations must be at least 1")
    if not args.tolerance >= 0.0:
        raise LabelsError("--tolerance must be at least 0")
    return LabelSettings(
        keep_share=args.keep_share,
        method=args.method,
        max_iterations=args.max_iterations,
        tolerance=args.tolerance,
    )


def run(args: argparse.Namespace) -> int:
    try:
        settings = _check_settings(args)
        answers = read_answers_csv(path=args.answers)
        result = analyse(answers=answers, settings=settings)
    except (LabelsError, FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        return bad_input(exc)
    summary = json_ready(result.summary_dict())
    counts = summary["counts"]
    return finish(
        args.out,
        {
            "labels.csv": labels_csv(result.labels),
            "summary.json": json.dumps(summary, indent=1, allow_nan=False) + "\n",
        },
        f"{counts['labels']} labels of {counts['items']} item(s) from {counts['answers']} "
        f"answers ({len(result.ties())} tie(s) for adjudication); wrote {args.out}",
    )
