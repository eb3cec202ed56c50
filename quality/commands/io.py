"""What every ``python -m quality`` command shares: exit codes, JSON without NaN, CSV text
made safe for spreadsheets, and writing DIR all at once.

Files are written only after everything was computed, into a temporary folder beside
DIR, then moved in (one rename when DIR is new, made with the usual permissions, else one
atomic replace per file, the earlier versions put back when one cannot be replaced), so a
failed run leaves nothing partial in DIR; a file of the command's own that an earlier run
wrote and this one does not (``analyze``'s ``subjective_NAME.csv``) is removed, so that DIR
never mixes two runs. Text cells follow the web exports' rule
(quality/export.py): one that a spreadsheet would run as a formula (``=HYPERLINK(...)``,
``@v1``) gets a leading single quote (``spreadsheet_safe``); numbers, negative ones too,
are written as numbers; lines end in CRLF, as the exports' do (``LINE_END``).
"""

from __future__ import annotations

import argparse
import csv
import fnmatch
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
import pyarrow as pa
import pyarrow.compute as pc

from quality.stats.ratings_csv import EXCLUDED_COLUMN, FORMULA_TRIGGERS, spreadsheet_safe

EXIT_BAD_INPUT = 2
EXIT_OUTPUT_FAILED = 1
# CRLF, as the web exports' (RFC 4180): the csv module quotes a cell holding a character
# of the line end, so only with CRLF is a carriage return inside a text cell quoted; with
# LF one was written bare, and every reader took it for the end of the row.
LINE_END = "\r\n"


class InputError(ValueError):
    """Input a command cannot use: the message names what is wrong (and its line)."""


def left_out(frame: pd.DataFrame) -> str:
    """What a command says of the rows its input marks excluded (a raw export's
    ``excluded`` column), which the readers leave out: nothing when there were none."""
    count = frame.attrs.get(EXCLUDED_COLUMN, 0)
    return f"; {count} row(s) marked excluded in the file left out" if count else ""


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
    """One cell as pandas' ``to_csv(lineterminator=LINE_END)`` writes it, through Python's
    csv writer (minimal quoting): text without a comma, a quote or a line break as it is,
    any other through the csv module itself, so its quoting rules (of this Python) hold
    exactly."""
    if not _MAY_NEED_QUOTES.search(text):
        return text
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator=LINE_END).writerow([text, ""])
    return buffer.getvalue()[: -len("," + LINE_END)]


_MAY_NEED_QUOTES = re.compile('[,"\n\r]')


def _cells(column: pd.Series, *, formatted: bool = False) -> tuple[np.ndarray, pa.Array]:
    """The CSV text of every cell of ``column`` as ``DataFrame.to_csv`` writes it (text
    made ``spreadsheet_safe``; NaN and None empty), as (each cell's code, the distinct
    texts): each distinct value is formatted once.

    Floats are told apart by their bits (so ``-0.0`` stays ``-0.0``), a categorical
    column's categories are formatted as a column of their own, and text columns that
    are all text (or missing) are factorized; any other column (mixed types, whose
    hashing would take ``1``, ``1.0`` and ``True`` for one value) is formatted cell by
    cell."""
    plain = isinstance(column.dtype, np.dtype)  # not a nullable or extension type
    if plain and column.dtype.kind == "f":
        bits = column.to_numpy(dtype=np.float64).view(np.int64)
        codes, uniques = pd.factorize(bits, sort=False)
        floats = uniques.view(np.float64)
        return codes, _texts(np.where(np.isnan(floats), "", floats.astype(str)).tolist())
    if plain and column.dtype.kind in "biu":
        codes, uniques = pd.factorize(column.to_numpy(), sort=False)
        return codes, _texts([str(u) for u in uniques.tolist()])
    if isinstance(column.dtype, pd.CategoricalDtype):
        return _category_cells(column)
    if pd.api.types.infer_dtype(column, skipna=True) in ("string", "empty"):
        return _text_cells(column, formatted=formatted)
    texts = [_text_cell(v) for v in column.to_numpy(dtype=object).tolist()]
    return np.arange(len(texts)), _texts(texts)


def _texts(texts: list[str]) -> pa.Array:
    return pa.array(texts, type=pa.large_string())


def _category_cells(column: pd.Series) -> tuple[np.ndarray, pa.Array]:
    """``_cells`` of a categorical column: its categories formatted as a column, each
    cell coded by its category (a missing cell, code -1, by an empty text appended)."""
    category_codes, texts = _cells(pd.Series(column.cat.categories))
    codes = np.append(category_codes, len(texts))[column.cat.codes.to_numpy()]
    return codes, pa.concat_arrays([texts, _texts([""])])


def _text_cells(column: pd.Series, *, formatted: bool = False) -> tuple[np.ndarray, pa.Array]:
    """``_cells`` of a text column, formatted by pyarrow: only the rare distinct texts
    that start with a formula trigger or need CSV quoting go through ``_text_cell``.
    ``formatted``: the texts are the caller's, numbers written as text and other text
    already ``spreadsheet_safe``: only CSV quoting is added."""
    codes, uniques = pd.factorize(column, sort=False, use_na_sentinel=False)
    texts = pc.fill_null(pa.array(uniques, from_pandas=True).cast(pa.large_string()), "")
    rare = pc.match_substring_regex(texts, _MAY_NEED_QUOTES.pattern)
    for trigger in () if formatted else FORMULA_TRIGGERS:
        rare = pc.or_(rare, pc.starts_with(texts, trigger))
    if pc.any(rare).as_py():
        cell = _csv_field if formatted else _text_cell
        fixed = [cell(text) for text in texts.filter(rare).to_pylist()]
        texts = pc.replace_with_mask(texts, rare, _texts(fixed))
    return codes, texts


def _text_cell(value) -> str:
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return ""
    return _csv_field(spreadsheet_safe(value) if isinstance(value, str) else str(value))


def csv_text(frame, columns: Sequence[str] | None = None, *, formatted: Sequence[str] = ()) -> str:
    """``frame`` (only ``columns``, if given) as CSV, text cells made safe for spreadsheets
    (``spreadsheet_safe``, the web exports' rule), numbers as they are, lines ended by
    ``LINE_END``: the text pandas' ``to_csv(index=False, lineterminator=LINE_END)`` writes
    after ``spreadsheet_safe`` on every text cell (the tests hold it to that), in a
    fraction of its time (each distinct value formatted once, rows joined by pyarrow).
    The ``formatted`` columns hold the caller's text (numbers as text, a ``-3`` that must
    stay a number, other text already made safe): only CSV quoting is added."""
    frame = frame if columns is None else frame[list(columns)]
    header = ",".join(_csv_field(str(name)) for name in frame.columns) + LINE_END
    if len(frame) == 0:
        return header
    cells = [_cells(frame[name], formatted=name in formatted) for name in frame.columns]
    if len(cells) == 1:  # a lone empty field is written "" (else the row would be blank)
        codes, texts = cells[0]
        cells[0] = codes, pc.if_else(pc.equal(texts, ""), _texts(['""'])[0], texts)
    return header + _rows(cells)


def _rows(cells: list[tuple[np.ndarray, pa.Array]]) -> str:
    """The rows of ``_cells``' columns, each ended by a line break: pyarrow takes every
    column's texts by its codes and joins them with commas (the line break is appended
    to the last column's distinct texts), and the joined rows are read end to end
    straight from the result's data buffer."""
    codes, texts = cells[-1]
    cells = [*cells[:-1], (codes, pc.binary_join_element_wise(texts, _NEWLINE, _NOTHING))]
    rows = pc.binary_join_element_wise(*(pc.take(texts, codes) for codes, texts in cells), _COMMA)
    _, offsets, data = rows.buffers()
    start, end = np.frombuffer(offsets, dtype=np.int64)[[rows.offset, rows.offset + len(rows)]]
    return str(data[start:end], "utf-8")


_COMMA, _NEWLINE, _NOTHING = (pa.scalar(text, pa.large_string()) for text in (",", LINE_END, ""))


def write_outputs(out: Path, files: dict[str, str], *, own: Sequence[str] = ()) -> None:
    """Write ``files`` ({name: text}) into ``out`` all at once (see the module docstring);
    then remove the files in ``out`` that match one of the ``own`` glob patterns (the
    command's optional outputs) and are not among ``files``: an earlier run's."""
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for name, text in files.items():
            (staging / name).write_text(text, encoding="utf-8")
        if not out.exists():
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(staging, 0o777 & ~umask)  # as mkdir makes it, not mkdtemp's 0700
            os.rename(staging, out)
            return
        _replace_all(staging, out, list(files))
        for pattern in own:
            for earlier in out.glob(pattern):
                if earlier.name not in files and earlier.is_file():
                    earlier.unlink()
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _replace_all(staging: Path, out: Path, names: list[str]) -> None:
    """Move the staged files into ``out``, each by an atomic replace; when one cannot be
    (a folder in its place, a disk gone), the files replaced so far get their earlier
    versions back, so that ``out`` never mixes two runs, and the error is raised."""
    kept = staging / ".earlier"
    kept.mkdir()
    done: list[str] = []
    try:
        for name in names:
            if (out / name).is_file():
                _keep(out / name, kept / name)
            os.replace(staging / name, out / name)
            done.append(name)
    except OSError:
        for name in done:
            if (kept / name).exists():
                os.replace(kept / name, out / name)
            else:
                (out / name).unlink(missing_ok=True)
        raise


def _keep(path: Path, aside: Path) -> None:
    """The earlier version of an output, kept aside: a hard link (no copy), else a copy."""
    try:
        os.link(path, aside)
    except OSError:
        shutil.copy2(path, aside)


def out_problem(out: Path) -> str | None:
    """Why ``out`` cannot be DIR (a file, under a file, in a folder this user cannot write
    to), checked before any work; None when it can."""
    out = out.resolve()
    if out.exists() and not out.is_dir():
        return f"--out {out} is a file, not a folder"
    folder = out.parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        return f"--out {out}: {folder} is a file, not a folder"
    for place in (out, folder) if out.exists() else (folder,):
        if not os.access(place, os.W_OK | os.X_OK):
            return f"--out {out}: cannot write into {place} (permission denied)"
    return None


def add_out(parser: argparse.ArgumentParser, *, writes: Sequence[str]) -> None:
    """Every command's ``--out DIR``, naming the files it ``writes`` there (glob patterns
    for the optional ones: ``subjective_*.csv``), which ``input_problem`` reads back."""
    parser.add_argument(
        "--out",
        type=_folder,
        required=True,
        metavar="DIR",
        help=f"output folder, created or updated: {', '.join(writes)}",
    )
    parser.set_defaults(writes=tuple(writes))


def _folder(text: str) -> Path:
    """``--out``'s value: an empty one is refused (``Path("")`` is the current folder,
    which nobody asked for by leaving the name out)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("needs a folder's name (--out . is the current folder)")
    return Path(text)


def input_problem(args: argparse.Namespace) -> str | None:
    """Why the command would overwrite one of its own input files (``labels
    DIR/labels.csv --out DIR``: the answers would be lost for the labels), checked before
    any work; None when it would not."""
    out = args.out.resolve()
    for name, value in vars(args).items():
        if name == "out" or not isinstance(value, Path):
            continue
        path = value.resolve()
        if path.parent == out and any(fnmatch.fnmatchcase(path.name, p) for p in args.writes):
            return (
                f"--out {args.out} would replace the input {value} with this command's "
                f"{path.name}: write into another folder"
            )
    return None


def add_bootstrap(parser: argparse.ArgumentParser, *, replicates: int, seed: int, of: str) -> None:
    """``--bootstrap`` (rater-bootstrap replicates for ``of``) and its ``--seed``, as
    compare and rank take them."""
    parser.add_argument(
        "--bootstrap",
        type=int,
        default=replicates,
        help=f"rater-bootstrap replicates for {of} (0: none; default %(default)s)",
    )
    parser.add_argument(
        "--seed", type=int, default=seed, help="seed of the bootstrap (default %(default)s)"
    )


def as_option(exc: Exception) -> str:
    """A settings check's message, which starts with the setting's name (``bootstrap must
    be 0 or more``), with that name written as its option (``--bootstrap must be ...``)."""
    name, _, rest = str(exc).partition(" ")
    return f"--{name.replace('_', '-')} {rest}"


def bad_input(message: object) -> int:
    print(f"error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def finish(out: Path, files: dict[str, str], done: str, *, own: Sequence[str] = ()) -> int:
    """Write the outputs (``own``: see ``write_outputs``), print ``done`` and return the
    exit code."""
    try:
        write_outputs(out, files, own=own)
    except OSError as exc:
        print(f"error: cannot write {out}: {exc}", file=sys.stderr)
        return EXIT_OUTPUT_FAILED
    print(done)
    return 0
