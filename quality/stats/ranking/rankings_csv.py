"""Reading ``python -m quality rank``'s two CSV files: the rankings and the model scores.

RANKINGS.csv: header ``rater_id,question,prompt_id,ranking`` (any order, other columns
ignored), one ranking a line (format: ``quality.stats.ranking.rankings``). SCORES.csv:
header ``condition,score``, one condition a line, higher is better.

Everything is read as text (``007`` stays ``007``); line numbers in errors are the
file's (the header is line 1, blank lines count and are skipped; a row whose quoted
field spans lines is named by its first line). A single quote that MOSaic's CSV exports
put before a cell a spreadsheet would run as a formula (``spreadsheet_safe``) is removed
again.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from quality.stats.ranking.rankings import COLUMNS, LINE_COLUMN, RankingsError
from quality.stats.ratings_csv import (
    EXCLUDED_COLUMN,
    FORMULA_TRIGGERS,
    check_header,
    csv_float,
    marked_excluded,
    no_rows_left,
    read_csv_checked,
    row_lines,
)


def _unquote(text: str) -> str:
    if text.startswith("'") and text[1:].startswith(FORMULA_TRIGGERS):
        return text[1:]
    return text


def _read_text_csv(path: str | Path, columns: tuple[str, ...]) -> pd.DataFrame:
    """The CSV's ``columns`` as text plus its ``line`` numbers, blank lines dropped, and
    rows a raw export marks excluded (``marked_excluded``, counted in ``attrs``)."""
    data = Path(path).read_bytes()
    frame = read_csv_checked(path, error=RankingsError, data=data)
    check_header(path, frame.columns, columns, error=RankingsError)
    excluded = marked_excluded(frame)
    lines = row_lines(data, len(frame))
    frame = frame[list(columns)].fillna("")
    frame[LINE_COLUMN] = lines
    blank = np.logical_and.reduce([(frame[c] == "").to_numpy() for c in columns])
    frame = frame[~(blank | excluded)].reset_index(drop=True)
    for column in columns:
        frame[column] = frame[column].map(_unquote)
    frame.attrs[EXCLUDED_COLUMN] = int(excluded.sum())
    return frame


def read_rankings_csv(*, path: str | Path) -> pd.DataFrame:
    """The rankings CSV as a DataFrame of text columns ``COLUMNS`` plus ``line``.

    Only the file is checked here (readable, columns present, not empty); the rankings
    themselves are checked by ``encode_rankings`` (``analyse`` calls it), whose errors name
    the same lines.
    """
    frame = _read_text_csv(path, COLUMNS)
    if len(frame) == 0:
        raise RankingsError(no_rows_left(path, "rankings", frame.attrs[EXCLUDED_COLUMN]))
    return frame


def read_scores_csv(*, path: str | Path) -> dict[str, float]:
    """SCORES.csv as {condition: score}; every score a finite number, each condition once."""
    frame = _read_text_csv(path, ("condition", "score"))
    if len(frame) == 0:
        raise RankingsError(
            f"{path}: no scores (only a header: a run's model_scores.csv is so when the run "
            "compared no metric; leave --against out)"
        )
    scores: dict[str, float] = {}
    for condition, text, line in frame[["condition", "score", LINE_COLUMN]].itertuples(index=False):
        condition = condition.strip()
        if not condition:
            raise RankingsError(f"{path}: line {line}: condition is empty")
        try:
            score = csv_float(text)
        except ValueError:
            score = math.nan
        if not math.isfinite(score):
            raise RankingsError(f"{path}: line {line}: score {text!r} is not a finite number")
        if condition in scores:
            raise RankingsError(f"{path}: line {line}: condition {condition!r} is scored twice")
        scores[condition] = score
    return scores
