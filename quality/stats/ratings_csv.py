"""Reading the long ratings CSV (``python -m quality analyze``'s input, the raw export).

Header ``rater_id,video_id,dimension,score`` and optionally ``session_id``, one rating
a line. Ids are read as text (so ``007`` stays ``007``); errors name the line number as
it is in the file (the header is line 1; blank lines count), which assumes no quoted
field spans lines.

MOSaic's CSV exports put a single quote before a text cell that starts with a formula
trigger (``spreadsheet_safe``), so that spreadsheets show it rather than run it; this
reader removes that quote from the id columns again, so a raw export read back gives
the ids the study has (a dimension key ``-blur`` is written ``'-blur`` and read ``-blur``).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from quality.stats.ratings import REQUIRED_COLUMNS, SESSION_COLUMN, RatingsError

_ID_COLUMNS = ("rater_id", "video_id", "dimension", SESSION_COLUMN)

# A spreadsheet runs a cell starting with one of these as a formula (OWASP, "CSV Injection").
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(text: str) -> str:
    """``text`` with a single quote in front when it starts with a formula trigger."""
    return "'" + text if text.startswith(FORMULA_TRIGGERS) else text


def _is_quoted(text: object) -> bool:
    return isinstance(text, str) and text.startswith("'") and text[1:].startswith(FORMULA_TRIGGERS)


def _strip_spreadsheet_quotes(frame: pd.DataFrame) -> pd.DataFrame:
    """Undo ``spreadsheet_safe`` in the id columns (looking at distinct values only)."""
    for column in _ID_COLUMNS:
        if column in frame.columns:
            quoted = {v: v[1:] for v in frame[column].unique() if _is_quoted(v)}
            if quoted:
                frame[column] = frame[column].replace(quoted)
    return frame


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
    """The CSV as a DataFrame with text ids and float scores; blank lines are skipped; a
    single quote that ``spreadsheet_safe`` put before an id is removed.

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
    return _strip_spreadsheet_quotes(frame.reset_index(drop=True))
