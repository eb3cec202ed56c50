"""Reading a long text CSV (answers, verdicts, proposals) with the line of every row.

Every column is read as text (so ``007`` stays ``007`` and an answer ``3`` is parsed
by the statistic that knows its kind). The result has a ``line`` column: the row's line
in the file as an editor shows it (the header is line 1; blank lines count and are
skipped), which assumes no quoted field spans lines. The statistics name that line in
their error messages. A file without blank lines goes through pyarrow's parser (several
times faster); any other file, or one pyarrow complains about, through pandas' own,
whose errors are the ones reported.

MOSaic's CSV exports put a single quote before a text cell that starts with a formula
trigger (``spreadsheet_safe``); it is removed again here, so a raw export read back gives
the values the study has.
"""

from __future__ import annotations

import io
import re
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from quality.stats.labels.answers import ANSWER_COLUMNS
from quality.stats.labels.table import LINE_COLUMN, LabelsError
from quality.stats.ratings_csv import FORMULA_TRIGGERS

_BLANK_LINE = re.compile(rb"\n\r?\n")


def _unquote(column: pd.Series) -> pd.Series:
    """Undo ``spreadsheet_safe`` (looking at distinct values only, and only when some
    value starts with a quote)."""
    if not column.str.startswith("'").any():
        return column
    quoted = {
        value: value[1:]
        for value in column.unique()
        if value.startswith("'") and value[1:].startswith(FORMULA_TRIGGERS)
    }
    return column.replace(quoted) if quoted else column


def _read_fast(data: bytes) -> pd.DataFrame | None:
    """pyarrow's multithreaded parser, for a file without blank lines (so that row i is
    line i + 2) that it reads without complaint; None otherwise, and the careful parser
    decides (and names the problem)."""
    if _BLANK_LINE.search(data) or data.startswith((b"\n", b"\r\n")):
        return None
    try:
        return pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False, engine="pyarrow")
    except ValueError:  # pyarrow's parse and decode errors are ValueErrors
        return None


def _read_careful(data: bytes, path: str | Path) -> pd.DataFrame:
    """pandas' own parser, keeping blank lines as rows (row index + 2 == line)."""
    try:
        with warnings.catch_warnings():
            # A first row with more fields than the header only warns: make it an error.
            warnings.simplefilter("error", pd.errors.ParserWarning)
            return pd.read_csv(
                io.BytesIO(data),
                dtype=str,
                keep_default_na=False,
                index_col=False,  # a row with an extra field is an error, not an index
                skip_blank_lines=False,
                encoding="utf-8",
            )
    except pd.errors.EmptyDataError:
        raise LabelsError(f"{path}: the file is empty") from None
    except (pd.errors.ParserError, pd.errors.ParserWarning, UnicodeDecodeError) as exc:
        raise LabelsError(f"{path}: not a readable CSV ({exc})") from None


def read_text_csv(*, path: str | Path, columns: Sequence[str], what: str) -> pd.DataFrame:
    """The ``columns`` of the CSV at ``path`` as text, plus ``line``; ``what`` names the
    rows in the message for a file with only a header ("answers", "verdicts").

    Raises LabelsError for an empty or unreadable file, a missing column or no rows;
    OSError (FileNotFoundError, ...) as ``open`` raises it.
    """
    data = Path(path).read_bytes()
    frame = _read_fast(data)
    if frame is None:
        frame = _read_careful(data, path)
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise LabelsError(f"{path}: missing column(s): {', '.join(missing)}")
    frame = frame[list(columns)].fillna("")
    blank = np.logical_and.reduce([(frame[c] == "").to_numpy() for c in columns])
    line = np.flatnonzero(~blank) + 2
    if blank.any():
        frame = frame[~blank]
    if len(frame) == 0:
        raise LabelsError(f"{path}: no {what} (only a header)")
    frame = frame.reset_index(drop=True)
    for column in columns:
        frame[column] = _unquote(frame[column])
    frame[LINE_COLUMN] = line
    return frame


def read_answers_csv(*, path: str | Path) -> pd.DataFrame:
    """The answers CSV (``rater_id,item_id,question,kind,answer``) as text, with each
    row's ``line``, ready for ``analyse``."""
    return read_text_csv(path=path, columns=ANSWER_COLUMNS, what="answers")
