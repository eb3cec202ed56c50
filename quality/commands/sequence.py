"""``python -m quality sequence SCORES.csv --out DIR``: the anytime-valid confidence
sequence of every (video, dimension), after each rating.

Reads ``video_id,dimension,score`` in arrival order (extra columns are ignored, a UTF-8 BOM
before the header too, rows with a rule in an ``excluded`` column left out) and writes
DIR/sequence.csv, one row per rating in input order: ``video_id,dimension,n,mean,low,high``
(the betting confidence sequence of quality.stats.adaptive.confidence_sequence after the
n-th rating of that video and dimension), and DIR/summary.json (all at once:
quality.commands.io). A score that is not a number or lies outside [--low, --high], an
empty id or a missing column is refused with the line it is on (the header is line 1).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from quality.commands.io import (
    InputError,
    add_out,
    bad_input,
    csv_text,
    finish,
    json_ready,
    left_out,
)
from quality.stats.adaptive.confidence_sequence import DEFAULT_GRID_SIZE, AnytimeConfidenceSequence
from quality.stats.ratings_csv import (
    EXCLUDED_COLUMN,
    FORMULA_TRIGGERS,
    csv_float,
    missing_columns,
    no_rows_left,
    not_utf8,
    other_separator,
    refuse_nul,
)

NAME = "sequence"
HELP = "anytime-valid confidence sequence per video and dimension, after each rating"
VERSION = "quality.stats.adaptive/1"
COLUMNS = ("video_id", "dimension", "score")
OUTPUT_COLUMNS = ("video_id", "dimension", "n", "mean", "low", "high")
MAX_GRID_SIZE = 100_001  # 1e-5 of the scale; a finer grid only costs time and memory


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scores", type=Path, help="CSV: video_id,dimension,score in arrival order")
    add_out(parser, writes=("sequence.csv", "summary.json"))
    parser.add_argument("--alpha", type=float, default=0.05, help="1 - coverage (default 0.05)")
    parser.add_argument(
        "--low", type=float, default=0.0, help="lowest score of the scale (default 0)"
    )
    parser.add_argument(
        "--high", type=float, default=100.0, help="highest score of the scale (default 100)"
    )
    parser.add_argument(
        "--grid-size",
        type=int,
        default=DEFAULT_GRID_SIZE,
        help="candidate means on the scale (resolution (high - low) / (grid size - 1); "
        "default %(default)s)",
    )


def _plan(args: argparse.Namespace) -> AnytimeConfidenceSequence:
    if not 0.0 < args.alpha < 1.0:
        raise InputError("--alpha must be in (0, 1)")
    if not (math.isfinite(args.high - args.low) and args.low < args.high):
        raise InputError("--low must be below --high (both finite, and so their difference)")
    if not 3 <= args.grid_size <= MAX_GRID_SIZE:
        raise InputError(f"--grid-size must be at least 3 and at most {MAX_GRID_SIZE}")
    return AnytimeConfidenceSequence(
        alpha=args.alpha, low=args.low, high=args.high, grid_size=args.grid_size
    )


def _unquote(text: str) -> str:
    """Undo the web exports' spreadsheet quote before an id (as quality.stats.ratings_csv)."""
    if text.startswith("'") and text[1:].startswith(FORMULA_TRIGGERS):
        return text[1:]
    return text


def read_scores(path: Path, *, low: float, high: float) -> pd.DataFrame:
    """The rows as video_id, dimension (text) and score (float); InputError naming the line.
    Rows a raw export marks excluded (a rule in its ``excluded`` column: ratings.csv, in
    the order the ratings arrived) are left out and counted in ``attrs``, as every other
    command's reader does."""
    videos, dimensions, scores = [], [], []
    excluded = 0
    try:
        refuse_nul(path.read_bytes(), path, error=InputError)
        handle = path.open(newline="", encoding="utf-8-sig")  # a BOM is no name
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
    with handle:  # opened apart, so that a missing file is not reported as a CSV error
        reader = csv.reader(handle)
        try:
            header = next(reader, None)
            if header is None:
                raise InputError(f"{path}: the file is empty")
            if problem := other_separator(path, header):
                raise InputError(problem)
            missing = [name for name in COLUMNS if name not in header]
            if missing:
                raise InputError(missing_columns(path, header, missing))
            twice = [name for name in COLUMNS if header.count(name) > 1]
            if twice:
                raise InputError(f"{path}: the header names column(s) twice: {', '.join(twice)}")
            where = [header.index(name) for name in COLUMNS]
            rule = header.index(EXCLUDED_COLUMN) if EXCLUDED_COLUMN in header else None
            for row in reader:
                if not any(cell.strip() for cell in row):
                    continue  # a blank line
                line = reader.line_num
                if len(row) != len(header):
                    raise InputError(
                        f"{path}: line {line}: {len(row)} field(s) where the header has "
                        f"{len(header)}"
                    )
                if rule is not None and row[rule].strip():
                    excluded += 1
                    continue
                video, dimension, text = (row[i] for i in where)
                for name, value in (("video_id", video), ("dimension", dimension)):
                    if not value:
                        raise InputError(f"{path}: line {line}: {name} is empty")
                try:
                    score = csv_float(text)
                except ValueError:
                    raise InputError(
                        f"{path}: line {line}: score {text!r} is not a number"
                    ) from None
                if not math.isfinite(score):
                    raise InputError(f"{path}: line {line}: score {text!r} is not a finite number")
                if not low <= score <= high:
                    raise InputError(
                        f"{path}: line {line}: score {text!r} is outside [{low:g}, {high:g}]"
                    )
                videos.append(_unquote(video))
                dimensions.append(_unquote(dimension))
                scores.append(score)
        except UnicodeDecodeError:
            raise InputError(not_utf8(path)) from None
        except csv.Error as exc:
            raise InputError(f"{path}: not a readable CSV ({exc})") from None
    if not scores:
        raise InputError(no_rows_left(path, "scores", excluded))
    frame = pd.DataFrame({"video_id": videos, "dimension": dimensions, "score": np.asarray(scores)})
    frame.attrs[EXCLUDED_COLUMN] = excluded
    return frame


def sequence_table(scores: pd.DataFrame, plan: AnytimeConfidenceSequence) -> pd.DataFrame:
    """One row per rating, in input order, with its (video, dimension)'s sequence then."""
    out = {name: np.empty(len(scores)) for name in ("mean", "low", "high")}
    count = np.empty(len(scores), dtype=np.int64)
    groups = scores.groupby(["video_id", "dimension"], sort=False).indices
    for rows in groups.values():
        result = plan.sequence(scores["score"].to_numpy()[rows])
        count[rows] = result.n
        out["mean"][rows], out["low"][rows], out["high"][rows] = (
            result.mean,
            result.lower,
            result.upper,
        )
    return pd.DataFrame(
        {
            "video_id": scores["video_id"].astype(object),
            "dimension": scores["dimension"].astype(object),
            "n": count,
            **out,
        }
    )


def run(args: argparse.Namespace) -> int:
    try:
        plan = _plan(args)
        scores = read_scores(args.scores, low=plan.low, high=plan.high)
    except InputError as exc:
        return bad_input(exc)
    table = sequence_table(scores, plan)
    last = table.groupby(["video_id", "dimension"], sort=False).tail(1)
    summary = {
        "version": VERSION,
        "settings": {
            "alpha": plan.alpha,
            "low": plan.low,
            "high": plan.high,
            "grid_size": plan.grid_size,
            "grid_step": plan.grid_step,
            "truncation": plan.truncation,
        },
        "method": "Waudby-Smith & Ramdas (2023) hedged betting confidence sequence, "
        "predictable plug-in bets, running intersection; conservative on the grid",
        "ratings": len(table),
        "series": len(last),
        "widest_final_half_width": float(((last["high"] - last["low"]) / 2).max()),
    }
    files = {
        "sequence.csv": csv_text(table, OUTPUT_COLUMNS),
        "summary.json": json.dumps(json_ready(summary), indent=1, allow_nan=False) + "\n",
    }
    return finish(
        args.out,
        files,
        f"{len(table)} ratings of {len(last)} (video, dimension){left_out(scores)}; "
        f"wrote {args.out}",
    )
