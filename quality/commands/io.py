"""What every ``python -m quality`` command shares: exit codes, JSON without NaN, CSV text
made safe for spreadsheets, and writing DIR all at once.

Files are written only after everything was computed, into a temporary folder beside
DIR, then moved in (one rename when DIR is new, else one atomic replace per file), so a
failed run leaves nothing partial in DIR. Text cells follow the web exports' rule
(quality/export.py): one that a spreadsheet would run as a formula (``=HYPERLINK(...)``,
``@v1``) gets a leading single quote (``spreadsheet_safe``); numbers, negative ones too,
are written as numbers.
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from quality.stats.ratings_csv import spreadsheet_safe

EXIT_BAD_INPUT = 2
EXIT_OUTPUT_FAILED = 1


class InputError(ValueError):
    """Input a command cannot use: the message names what is wrong (and its line)."""


def json_ready(value):
    """JSON has no NaN or infinity: undefined statistics become null, recursively; numpy
    scalars become Python's, keys text."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(v) for v in value]
    return value


def _csv_field(text: str) -> str:
    """One cell as pandas' ``to_csv`` writes it, through Python's csv writer (minimal
    quoting): text without a comma, a quote or a line break as it is, any other through
    the csv module itself, so its quoting rules (of this Python) hold exactly."""
    if not _MAY_NEED_QUOTES.search(text):
        return text
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow([text, ""])
    return buffer.getvalue()[: -len(",\n")]


_MAY_NEED_QUOTES = re.compile('[,"\n\r]')


def _cells(column: pd.Series) -> np.ndarray:
    """The CSV text of every cell of ``column`` as ``DataFrame.to_csv`` writes it (text
    made ``spreadsheet_safe``; NaN and None empty), formatting each distinct value once.

    Floats are told apart by their bits (so ``-0.0`` stays ``-0.0``), and text columns
    that are all text (or missing) are factorized; any other column (mixed types, whose
    hashing would take ``1``, ``1.0`` and ``True`` for one value) is formatted cell by
    cell."""
    plain = isinstance(column.dtype, np.dtype)  # not a nullable or extension type
    if plain and column.dtype.kind == "f":
        bits = column.to_numpy(dtype=np.float64).view(np.int64)
        codes, uniques = pd.factorize(bits, sort=False)
        floats = uniques.view(np.float64)
        texts = np.where(np.isnan(floats), "", floats.astype(str)).astype(object)
        return texts[codes]
    if plain and column.dtype.kind in "biu":
        codes, uniques = pd.factorize(column.to_numpy(), sort=False)
        return np.array([str(u) for u in uniques.tolist()], dtype=object)[codes]
    if isinstance(column.dtype, pd.CategoricalDtype) or pd.api.types.infer_dtype(
        column, skipna=True
    ) in ("string", "empty"):
        codes, uniques = pd.factorize(column, sort=False)
        texts = [_text_cell(u) for u in np.asarray(uniques, dtype=object).tolist()]
        return np.array(texts + [""], dtype=object)[codes]  # code -1 (missing): ""
    return np.array([_text_cell(v) for v in column.to_numpy(dtype=object).tolist()], dtype=object)


def _text_cell(value) -> str:
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return ""
    return _csv_field(spreadsheet_safe(value) if isinstance(value, str) else str(value))


def csv_text(frame, columns: Sequence[str] | None = None) -> str:
    """``frame`` (only ``columns``, if given) as CSV, text cells made safe for spreadsheets
    (``spreadsheet_safe``, the web exports' rule), numbers as they are: the text pandas'
    ``to_csv(index=False)`` writes after ``spreadsheet_safe`` on every text cell (the
    tests hold it to that), in a fraction of its time (each distinct value formatted
    once, rows joined in one pass)."""
    frame = frame if columns is None else frame[list(columns)]
    header = ",".join(_csv_field(str(name)) for name in frame.columns)
    cells = [_cells(frame[name]) for name in frame.columns]
    if len(cells) == 1:  # a lone empty field is written "" (else the row would be blank)
        cells[0] = np.where(cells[0] == "", '""', cells[0])
    rows = "\n".join(map(",".join, zip(*cells, strict=True)))
    return header + "\n" + (rows + "\n" if len(frame) else "")


def write_outputs(out: Path, files: dict[str, str]) -> None:
    """Write ``files`` ({name: text}) into ``out`` all at once (see the module docstring)."""
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for name, text in files.items():
            (staging / name).write_text(text, encoding="utf-8")
        if not out.exists():
            os.rename(staging, out)
            return
        for name in files:
            os.replace(staging / name, out / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def bad_input(message: object) -> int:
    print(f"error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def finish(out: Path, files: dict[str, str], done: str) -> int:
    """Write the outputs, print ``done`` and return the exit code."""
    try:
        write_outputs(out, files)
    except OSError as exc:
        print(f"error: cannot write {out}: {exc}", file=sys.stderr)
        return EXIT_OUTPUT_FAILED
    print(done)
    return 0
