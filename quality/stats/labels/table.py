"""What checking any long text table of labels shares: the error type, the line numbers
that error messages name, text columns and empty ids (repeated answers:
quality.stats.repeats).

A table may carry a ``line`` column (``read_text_csv`` adds it: each row's line in its
CSV file); without one, row i is named line i + 2, the line it would have in a CSV with
a header, so a message reads the same for a DataFrame and for the file it came from.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

LINE_COLUMN = "line"


class LabelsError(ValueError):
    """A table of labels cannot be used as it is: the message names the line."""


def check_columns(frame: pd.DataFrame, columns: Sequence[str], *, what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise LabelsError(f"missing column(s): {', '.join(missing)}")
    if len(frame) == 0:
        raise LabelsError(f"no {what}")


def line_numbers(frame: pd.DataFrame) -> np.ndarray:
    if LINE_COLUMN in frame.columns:
        return frame[LINE_COLUMN].to_numpy(dtype=np.int64)
    return np.arange(len(frame), dtype=np.int64) + 2


def text_column(frame: pd.DataFrame, name: str) -> pd.Series:
    """The column as text; a missing value (None, NaN) is the empty text."""
    column = frame[name]
    if isinstance(column.dtype, pd.StringDtype) and not column.hasnans:
        return column
    return column.where(column.notna(), "").astype(str)


def check_not_empty(texts: dict[str, pd.Series], line: np.ndarray) -> None:
    """Raise for the first line where one of the named text columns is empty."""
    for name, text in texts.items():
        empty = (text == "").to_numpy()
        if empty.any():
            raise LabelsError(f"line {line[np.argmax(empty)]}: {name} is empty")
