"""Reading the long ratings CSV (``python -m quality analyze``'s input, the raw export).

Header ``rater_id,video_id,dimension,score`` and optionally ``session_id``, one rating
a line. Ids are read as text (so ``007`` stays ``007``); errors name the line number as
it is in the file (the header is line 1; blank lines count), which assumes no quoted
field spans lines.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from quality.stats.ratings import REQUIRED_COLUMNS, SESSION_COLUMN, RatingsError

_ID_COLUMNS = ("rater_id", "video_id", "dimension", SESSION_COLUMN)


def _read(path: str | Path, *, score_as_text: bool) -> pd.DataFrame:
    dtypes = {c: str for c in _ID_COLUMNS}
    dtypes["score"] = str if score_as_text else np.float64
    try:
        with warnings.catch_warnings():
            # A first row with more fields than the header only warns: make it an error.
            warnings.simplefilter("error", pd.errors.ParserWarning)
            return pd.read_csv(
                path,
                dtype=dtypes,
                keep_default_na=False,
                index_col=False,  # a row with an extra field is an error, not an index
                skip_blank_lines=False,  # keeps row index + 2 == line number
                encoding="utf-8",
            )
    except pd.errors.EmptyDataError:
        raise RatingsError(f"{path}: the file is empty") from None
    except (pd.errors.ParserError, pd.errors.ParserWarning, UnicodeDecodeError) as exc:
        raise RatingsError(f"{path}: not a readable CSV ({exc})") from None


def _first_bad_score(path: str | Path) -> str:
    """The error for the first line whose score is not a finite number (slow path)."""
    frame = _read(path, score_as_text=True)
    text = frame["score"].fillna("")
    ids_blank = np.logical_and.reduce(
        [(frame[c].isna() | (frame[c] == "")).to_numpy() for c in REQUIRED_COLUMNS]
    )
    score = pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(score) & ~ids_blank
    first = int(np.argmax(bad))
    return f"{path}: line {first + 2}: score {text.iloc[first]!r} is not a finite number"


def read_ratings_csv(*, path: str | Path) -> pd.DataFrame:
    """The CSV as a DataFrame with text ids and float scores; blank lines are skipped.

    Raises RatingsError for an empty file, a missing column, a row with an empty id or
    a score that is not a finite number (naming the first such line).
    """
    try:
        frame = _read(path, score_as_text=False)
    except ValueError as exc:
        if isinstance(exc, RatingsError):
            raise
        raise RatingsError(_first_bad_score(path)) from None  # a score that is not a number
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        raise RatingsError(f"{path}: missing column(s): {', '.join(missing)}")
    columns = [*REQUIRED_COLUMNS, *([SESSION_COLUMN] if SESSION_COLUMN in frame.columns else [])]
    frame = frame[columns]
    empty = {c: (frame[c].isna() | (frame[c] == "")).to_numpy() for c in _ID_COLUMNS[:3]}
    blank = empty["rater_id"] & empty["video_id"] & empty["dimension"] & frame["score"].isna()
    if blank.any():
        frame = frame[~blank]
    line = np.flatnonzero(~blank) + 2
    if len(frame) == 0:
        raise RatingsError(f"{path}: no ratings (only a header)")
    for column in _ID_COLUMNS[:3]:
        column_empty = empty[column][~blank]
        if column_empty.any():
            raise RatingsError(f"{path}: line {line[np.argmax(column_empty)]}: {column} is empty")
    if not np.isfinite(frame["score"].to_numpy()).all():
        raise RatingsError(_first_bad_score(path))
    return frame.reset_index(drop=True)
