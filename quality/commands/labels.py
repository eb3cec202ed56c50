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
import math
from pathlib import Path

import numpy as np
import pandas as pd

from quality.commands.io import add_out, bad_input, csv_text, finish, json_ready, left_out
from quality.stats.labels import (
    LABEL_COLUMNS,
    METHODS,
    LabelsError,
    LabelSettings,
    analyse,
    read_answers_csv,
)
from quality.stats.ratings_csv import spreadsheet_safe

NAME = "labels"
HELP = "questionnaire labels (mean, majority level, kept tags) and alpha from an answers CSV"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "answers", type=Path, help="long CSV: rater_id,item_id,question,kind,answer"
    )
    add_out(parser, writes=("labels.csv", "summary.json"))
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
        help="Dawid-Skene: most EM iterations (default %(default)s)",
    )
    parser.add_argument(
        "--tolerance",
        type=float,
        default=defaults.tolerance,
        help="Dawid-Skene: stop tolerance (default %(default)s)",
    )


def labels_csv(labels) -> str:
    """The labels table as CSV, ``value`` first made text (``value_text``) so that
    ``csv_text`` formats each distinct value once."""
    frame = labels[list(LABEL_COLUMNS)].copy()
    frame["value"] = value_text(labels)
    return csv_text(frame, formatted=("value",))


def value_text(labels) -> np.ndarray:
    """The ``value`` column as the text pandas writes for it (a mean ``3.0``, a level
    ``3``, kept tags made ``spreadsheet_safe``), None where there is no value.

    Its cells are of mixed types (float means, int or float levels, tag text), which
    hashing cannot tell apart (a level 3 and a mean 3.0 are one key), so the means are
    formatted on their own (per distinct bit pattern, so ``-0.0`` stays ``-0.0``), and
    the rest, where no two types share a value (a whole level is an int), per distinct
    value."""
    value = labels["value"].to_numpy(dtype=object)
    score = (labels["kind"] == "score").to_numpy()
    text = np.full(value.size, None, dtype=object)
    means = np.array(value[score], dtype=np.float64)  # None (no mean) becomes NaN
    codes, uniques = pd.factorize(means.view(np.int64))
    distinct = uniques.view(np.float64)
    text[score] = np.where(np.isnan(distinct), None, distinct.astype(str))[codes]
    codes, uniques = pd.factorize(value[~score])  # None: code -1
    # levels are numbers (a -3 stays one); kept tags are text, made spreadsheet-safe
    names = [spreadsheet_safe(v) if isinstance(v, str) else str(v) for v in uniques.tolist()]
    names.append(None)
    text[~score] = np.array(names, dtype=object)[codes]
    return text


def _check_settings(args: argparse.Namespace) -> LabelSettings:
    if not 0.0 <= args.keep_share < 1.0:
        raise LabelsError("--keep-share must be in [0, 1)")
    if args.max_iterations < 1:
        raise LabelsError("--max-iterations must be at least 1")
    if not 0.0 <= args.tolerance < math.inf:
        raise LabelsError("--tolerance must be a finite number, at least 0")
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
    except (LabelsError, FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        return bad_input(exc)
    try:
        result = analyse(answers=answers, settings=settings)
    except LabelsError as exc:  # names the line: the file too, as the reader's errors do
        return bad_input(f"{args.answers}: {exc}")
    summary = json_ready(result.summary_dict())
    counts = summary["counts"]
    return finish(
        args.out,
        {
            "labels.csv": labels_csv(result.labels),
            "summary.json": json.dumps(summary, indent=1, allow_nan=False) + "\n",
        },
        f"{counts['labels']} labels of {counts['items']} item(s) from {counts['answers']} "
        f"answers ({len(result.ties())} tie(s) for adjudication)"
        f"{left_out(answers)}; wrote {args.out}",
    )
