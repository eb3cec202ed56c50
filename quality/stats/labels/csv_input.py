"""Reading a long text CSV (answers, verdicts, proposals) with the line of every row.

Every column is read as text (so ``007`` stays ``007`` and an answer ``3`` is parsed by
the statistic that knows its kind). The result has a ``line`` column: the row's line in
the file as an editor shows it (the header is line 1; blank lines count and are skipped;
a row whose quoted field spans lines is named by its first line: ``row_lines``). The
statistics name that line in their error messages. A file goes through pyarrow's parser
(several times faster), which keeps a blank line as a row of empty fields as pandas'
parser does (so row i is line i + 2 either way); asked to, it gives the columns
dictionary-encoded, as pandas categoricals of text, whose codes ``encode_answers`` uses
instead of hashing every row's text again. A file pyarrow complains about (or one
starting with a blank line, or naming a column twice) goes through pandas' own parser,
whose errors are the ones reported.

MOSaic's CSV exports put a single quote before a text cell that starts with a formula
trigger (``spreadsheet_safe``); it is removed again here, so a raw export read back
gives the values the study has.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv

from quality.stats.labels.answers import ANSWER_COLUMNS
from quality.stats.labels.table import LINE_COLUMN, LabelsError
from quality.stats.ratings_csv import (
    EXCLUDED_COLUMN,
    FORMULA_TRIGGERS,
    check_header,
    marked_excluded,
    no_rows_left,
    read_csv_checked,
    refuse_nul,
    row_lines,
)


def _unquote(column: pd.Series) -> pd.Series:
    """Undo ``spreadsheet_safe`` (looking at distinct values only, and only when some
    value starts with a quote); a categorical column's categories are unquoted."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return _unquote_categories(column)
    if not column.str.startswith("'").any():
        return column
    quoted = {
        value: value[1:]
        for value in column.unique()
        if value.startswith("'") and value[1:].startswith(FORMULA_TRIGGERS)
    }
    return column.replace(quoted) if quoted else column


def _unquote_categories(column: pd.Series) -> pd.Series:
    """``_unquote`` of a categorical column: its categories unquoted, and two that are
    then one text (``'=a`` and ``=a``) made one category."""
    categories = pd.Series(column.cat.categories)
    unquoted = _unquote(categories)
    if unquoted is categories:
        return column
    merged, texts = pd.factorize(unquoted, sort=False)
    codes = merged[column.cat.codes.to_numpy()]
    return pd.Series(pd.Categorical.from_codes(codes, texts), index=column.index)


def _read_fast(data: bytes, columns: Sequence[str], *, categorical: bool) -> pd.DataFrame | None:
    """The ``columns`` (those the file has) as text, or as categoricals of text, by
    pyarrow's multithreaded parser, blank lines kept as rows of empty fields (so that
    row i is line i + 2), for a file it reads without complaint; None otherwise, and
    the careful parser decides (and names the problem)."""
    if data.startswith((b"\n", b"\r\n")):  # no header line
        return None
    text = pa.dictionary(pa.int32(), pa.string()) if categorical else pa.string()
    options = pa_csv.ConvertOptions(
        column_types=dict.fromkeys(columns, text),
        default_column_type=pa.string(),  # the other columns too (decoded, so checked)
        null_values=[],
    )
    try:
        table = pa_csv.read_csv(
            pa.py_buffer(data),
            parse_options=pa_csv.ParseOptions(ignore_empty_lines=False),
            convert_options=options,
        )
    except pa.ArrowInvalid:  # parse and decode errors, an empty file
        return None
    if len(set(table.column_names)) < table.num_columns:
        return None  # pandas tells a name given twice apart (``name.1``)
    table = table.select([c for c in columns if c in table.column_names]).unify_dictionaries()
    return pd.DataFrame({name: _pandas(table.column(name)) for name in table.column_names})


def _pandas(column: pa.ChunkedArray) -> pd.api.extensions.ExtensionArray:
    """A column read by pyarrow as pandas text, or, dictionary-encoded (its chunks
    sharing one dictionary), as a categorical of text: its codes as they are, no text
    hashed again."""
    if not pa.types.is_dictionary(column.type):
        return pd.array(column, dtype="str")
    array = column.combine_chunks()
    categories = pd.Index(pd.array(array.dictionary, dtype="str"))
    return pd.Categorical.from_codes(array.indices.to_numpy(), categories)


def _read_careful(data: bytes, path: str | Path) -> pd.DataFrame:
    """pandas' own parser, keeping blank lines as rows (row index + 2 == line)."""
    return read_csv_checked(path, error=LabelsError, data=data)


def read_text_csv(
    *, path: str | Path, columns: Sequence[str], what: str, categorical: bool = False
) -> pd.DataFrame:
    """The ``columns`` of the CSV at ``path`` as text, plus ``line``; ``what`` names the
    rows in the message for a file with only a header ("answers", "verdicts").
    ``categorical``: the columns as categoricals of text when pyarrow's parser reads the
    file (for ``encode_answers``, which numbers them by their codes). Rows a raw export
    marks excluded are left out (``marked_excluded``) and counted in ``attrs``.

    Raises LabelsError for an empty or unreadable file, a missing column or no rows;
    OSError (FileNotFoundError, ...) as ``open`` raises it.
    """
    data = Path(path).read_bytes()
    refuse_nul(data, path, error=LabelsError)
    frame = _read_fast(data, [*columns, EXCLUDED_COLUMN], categorical=categorical)
    if frame is None or not all(c in frame.columns for c in columns):
        # the careful parser keeps every column, so that check_header names what is
        # wrong with the header (another separator, a name in capitals or with spaces)
        frame = _read_careful(data, path)
    check_header(path, frame.columns, columns, error=LabelsError, data=data)
    excluded = marked_excluded(frame)
    lines = row_lines(data, len(frame))
    frame = frame[list(columns)].fillna("")
    skip = np.logical_and.reduce([(frame[c] == "").to_numpy() for c in columns]) | excluded
    line = lines[~skip]
    if skip.any():
        frame = frame[~skip]
    if len(frame) == 0:
        raise LabelsError(no_rows_left(path, what, int(excluded.sum())))
    frame = frame.reset_index(drop=True)
    for column in columns:
        frame[column] = _unquote(frame[column])
    frame[LINE_COLUMN] = line
    frame.attrs[EXCLUDED_COLUMN] = int(excluded.sum())
    return frame


def read_answers_csv(*, path: str | Path) -> pd.DataFrame:
    """The answers CSV (``rater_id,item_id,question,kind,answer``) as text (categoricals
    when read by pyarrow), with each row's ``line``, ready for ``analyse``."""
    return read_text_csv(path=path, columns=ANSWER_COLUMNS, what="answers", categorical=True)
