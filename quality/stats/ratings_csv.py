"""Reading the long ratings CSV (``python -m quality analyze``'s input, the raw export).

Header ``rater_id,video_id,dimension,score`` and optionally ``session_id``, one rating
a line. Ids are read as text (so ``007`` stays ``007``); errors name the line number as
it is in the file (the header is line 1; blank lines count; a row whose quoted field
spans lines is named by the line it starts on: ``row_lines``).

MOSaic's CSV exports put a single quote before a text cell that starts with a formula
trigger (``spreadsheet_safe``), so that spreadsheets show it rather than run it; this
reader removes that quote from the id columns again, so a raw export read back gives
the ids the study has (a dimension key ``-blur`` is written ``'-blur`` and read ``-blur``).
"""

from __future__ import annotations

import csv
import io
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from quality.stats.ratings import LARGEST_SCORE, REQUIRED_COLUMNS, SESSION_COLUMN, RatingsError
from quality.stats.repeats import first_repeat

_ID_COLUMNS = ("rater_id", "video_id", "dimension", SESSION_COLUMN)

# A MOSaic raw export's last column: the rule that left the row out of the study's
# analysis run (docs/researchers.md, "Which ratings count"), empty when it counts.
EXCLUDED_COLUMN = "excluded"

# A spreadsheet runs a cell starting with one of these as a formula (OWASP, "CSV Injection").
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(text: str) -> str:
    """``text`` with a single quote in front when it starts with a formula trigger."""
    return "'" + text if text.startswith(FORMULA_TRIGGERS) else text


def csv_float(text: str) -> float:
    """``float(text)`` limited to the numbers pandas' CSV parser reads: ValueError also
    for text with an underscore or a character outside ASCII (``1_0``, a full-width
    digit), which Python's ``float`` would take as 10 and 1."""
    if not text.isascii() or "_" in text:
        raise ValueError(f"not a number: {text!r}")
    return float(text)


def not_utf8(path: str | Path, data: bytes | None = None) -> str:
    """The message for a file that is not UTF-8 text, naming the line of its first
    undecodable byte (the position a decoder reports is within a chunk of the file)."""
    data = Path(path).read_bytes() if data is None else data
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return (
            f"{path}: line {line}: not UTF-8 text (byte 0x{data[exc.start]:02x}); save it as UTF-8"
        )
    return f"{path}: not UTF-8 text"


def refuse_nul(data: bytes, path: str | Path, *, error: type[Exception]) -> None:
    """``error`` naming the line of the file's first NUL byte: no id or answer holds one,
    and taken as part of an id it made two raters of one (a binary or damaged file,
    or text saved as UTF-16)."""
    at = data.find(b"\x00")
    if at >= 0:
        line = data.count(b"\n", 0, at) + 1
        raise error(
            f"{path}: line {line}: a NUL byte (a binary or damaged file, or text saved as "
            "UTF-16): save it as UTF-8 text"
        )


def marked_excluded(frame: pd.DataFrame) -> np.ndarray:
    """Which rows of a CSV as read (every column, blank lines kept) a raw export marks as
    left out of its analysis: a non-empty ``excluded`` cell. The readers leave them out
    and count them (``frame.attrs[EXCLUDED_COLUMN]``), so that a command given a raw
    export reproduces the run; all False for a file without that column."""
    if EXCLUDED_COLUMN not in frame.columns:
        return np.zeros(len(frame), dtype=bool)
    cells = frame[EXCLUDED_COLUMN].astype(str)
    return ~(frame[EXCLUDED_COLUMN].isna() | (cells.str.strip() == "")).to_numpy()


def no_rows_left(path: str | Path, what: str, excluded: int) -> str:
    """The message for a file with no row to use: only a header, or every row excluded."""
    if excluded:
        return f"{path}: every one of its {excluded} {what} is marked excluded"
    return f"{path}: no {what} (only a header)"


def read_csv_checked(
    path: str | Path,
    *,
    error: type[Exception],
    dtype=str,
    data: bytes | None = None,
    numbers: Sequence[str] = (),
) -> pd.DataFrame:
    """pandas' ``read_csv`` of the file at ``path`` (or of ``data``, its bytes) as the
    CSV readers need it: UTF-8, nothing read as missing (``007`` and an empty field stay
    text), blank lines kept as rows (``row_lines`` gives the line each starts on), a row
    with an extra field an error rather than an index. Its failures are raised as
    ``error`` naming the problem: an empty file, text that is not UTF-8 (with its line),
    a first row with more fields than the header (which pandas only warns about), a row
    with fewer (which pandas fills with empty text), a NUL byte, any other parse error. The columns
    named in ``numbers`` (read as numbers by ``dtype``) read an empty field, a blank
    line's included, as NaN."""
    data = Path(path).read_bytes() if data is None else data
    refuse_nul(data, path, error=error)
    frame = _read_csv(path, error=error, dtype=dtype, data=data, numbers=numbers)
    _refuse_short_rows(frame, path, error=error, data=data)
    return frame


def row_lines(data: bytes, rows: int) -> np.ndarray:
    """The line (the header is line 1) on which each of the ``rows`` rows after the
    header starts in the CSV ``data``, a blank line counting as a row, as the readers
    keep it. Where the file has one line per row, row i is on line i + 2; where a quoted
    field spans lines (a prompt of two lines), the csv module reads the file again for
    where each row starts, so that an error names the line an editor shows it on."""
    plain = np.arange(rows, dtype=np.int64) + 2
    if b'"' not in data:  # no quoted field (the usual file: one scan, stopped at a quote)
        return plain
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    if lines - 1 == rows:
        return plain
    reader = csv.reader(io.StringIO(data.decode("utf-8-sig"), newline=""))
    next(reader, None)
    starts, end = [], reader.line_num
    for _ in reader:
        starts.append(end + 1)
        end = reader.line_num
    return np.array(starts, dtype=np.int64) if len(starts) == rows else plain


def _read_csv(
    path: str | Path, *, error: type[Exception], dtype, data: bytes | None, numbers: Sequence[str]
):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            return pd.read_csv(
                path if data is None else io.BytesIO(data),
                dtype=dtype,
                keep_default_na=False,
                na_values={column: [""] for column in numbers},
                index_col=False,
                skip_blank_lines=False,
                encoding="utf-8",
            )
    except pd.errors.EmptyDataError:
        raise error(f"{path}: the file is empty") from None
    except UnicodeDecodeError:
        raise error(not_utf8(path, data)) from None
    except (pd.errors.ParserWarning, pd.errors.ParserError) as exc:
        # pandas only warns of a first row with an extra field, and names a later one by
        # its record, not its line: the lines are counted again here
        raise error(_unreadable(path, data, exc)) from None


def _unreadable(path: str | Path, data: bytes | None, exc: Exception) -> str:
    """The message for a file pandas' parser refused or warned about: another separator
    than commas, else the first line with more fields than the header, else pandas' own
    words."""
    header = _header(path, data)
    if problem := other_separator(path, header):
        return problem
    data = Path(path).read_bytes() if data is None else data
    if long := _first_line_with(data, len(header), longer=True):
        line, fields = long
        return f"{path}: line {line}: {fields} field(s) where the header has {len(header)}"
    return f"{path}: not a readable CSV ({str(exc).strip()})"


def other_separator(path: str | Path, header: Sequence[str]) -> str | None:
    """The message for a file whose header is one column holding a semicolon, a tab or a
    bar, so that its fields are separated by that rather than by commas (a spreadsheet's
    export in a comma-decimal locale uses semicolons); None for any other header. Every
    input of ``python -m quality`` has two columns or more, so such a header is never
    right."""
    if len(header) != 1:
        return None
    separator = next((s for s in ";\t|" if s in header[0]), None)
    if separator is None:
        return None
    shown = {"\t": "tabs"}.get(separator, f"'{separator}'")
    return (
        f"{path}: the header is one column, {header[0][:60]!r}: the file must be separated "
        f"by commas, and this one seems separated by {shown} (in a spreadsheet, save it as "
        "CSV UTF-8, comma-delimited)"
    )


def _header(path: str | Path, data: bytes | None) -> list[str]:
    """The header's fields as the csv module reads them (a BOM before it dropped)."""
    data = Path(path).read_bytes() if data is None else data
    with io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", newline="") as text:
        return next(csv.reader(text), [])


def _refuse_short_rows(
    frame: pd.DataFrame, path: str | Path, *, error: type[Exception], data: bytes | None
) -> None:
    """Raise ``error`` naming the first line with fewer fields than the header. pandas
    reads a missing field as empty text, like an empty one, so a short row shows as one
    whose last field reads empty and that is not a blank line; only when there is such a
    row are the file's lines counted again (``_first_line_with``)."""
    last = frame.iloc[:, -1] if frame.shape[1] > 1 else None
    if last is None or not pd.api.types.is_string_dtype(last.dtype):
        return  # one column cannot be short; a missing number reads as NaN, refused later
    last_empty = (last.isna() | (last == "")).to_numpy()
    if not last_empty.any():
        return
    empty = [(frame[c].isna() | (frame[c] == "")).to_numpy() for c in frame.columns[:-1]]
    if not (last_empty & ~np.logical_and.reduce(empty)).any():
        return  # blank lines only
    data = Path(path).read_bytes() if data is None else data
    short = _first_line_with(data, frame.shape[1], longer=False)
    if short is not None:
        line, fields = short
        raise error(f"{path}: line {line}: {fields} field(s) where the header has {frame.shape[1]}")


def _first_line_with(data: bytes, header: int, *, longer: bool) -> tuple[int, int] | None:
    """(line, fields) of the first line after the header that is not blank and has fewer
    than ``header`` fields (or more, when ``longer``). Without a quote character in the
    file every comma separates two fields, and numpy counts the commas of every line at
    once (a raw export read back has its last column, ``excluded``, mostly empty);
    otherwise the csv module reads the file record by record, quoted line breaks counted."""
    if b'"' not in data:
        raw = np.frombuffer(data, dtype=np.uint8)
        ends = np.flatnonzero(raw == ord("\n"))
        if raw.size and raw[-1] != ord("\n"):
            ends = np.append(ends, raw.size)
        starts = np.r_[0, ends[:-1] + 1]
        commas = np.flatnonzero(raw == ord(","))
        fields = np.searchsorted(commas, ends) - np.searchsorted(commas, starts) + 1
        length = ends - starts
        blank = (length == 0) | ((length == 1) & (raw[np.minimum(starts, raw.size - 1)] == 13))
        wrong = np.flatnonzero(((fields > header) if longer else (fields < header)) & ~blank)
        wrong = wrong[wrong > 0]  # the header line
        return None if wrong.size == 0 else (int(wrong[0]) + 1, int(fields[wrong[0]]))
    with io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", newline="") as text:
        records = csv.reader(text)
        next(records, [])
        for record in records:
            if (len(record) > header) if longer else (0 < len(record) < header):
                return records.line_num, len(record)
    return None


def check_header(
    path: str | Path,
    read: Sequence[str],
    columns: Sequence[str],
    *,
    error: type[Exception],
    optional: Sequence[str] = (),
    data: bytes | None = None,
) -> None:
    """Raise ``error`` for a header (``read``: the names pandas read) that lacks one of
    ``columns`` or names one of them, or of the ``optional`` ones, twice; a header of one
    column that another separator splits (semicolons, say) is refused as such
    (``other_separator``)."""
    if problem := other_separator(path, read):
        raise error(problem)
    missing = [c for c in columns if c not in read]
    if missing:
        raise error(missing_columns(path, read, missing))
    twice = named_twice(path, read, [*columns, *optional], data)
    if twice:
        raise error(f"{path}: the header names column(s) twice: {', '.join(twice)}")


def missing_columns(path: str | Path, header: Sequence[str], missing: Sequence[str]) -> str:
    """The message for a header that lacks the ``missing`` columns, naming the header's
    cells that would be one of them but for case or spaces around (``Score``, `` score``)."""
    near = [str(name) for name in header if str(name).strip().lower() in missing]
    hint = (
        f" (the header has {', '.join(repr(n) for n in near)}: column names are matched "
        "exactly, in lower case without spaces)"
        if near
        else ""
    )
    return f"{path}: missing column(s): {', '.join(missing)}{hint}"


def named_twice(
    path: str | Path, read: Sequence[str], columns: Sequence[str], data: bytes | None = None
) -> list[str]:
    """The ``columns`` the header of the file names more than once, given the column
    names pandas ``read`` (it renames a second ``x`` to ``x.1``): the header itself is
    read only when such a name is there."""
    if not any(f"{c}.1" in read for c in columns):
        return []
    header = _header(path, data)
    return [c for c in columns if header.count(c) > 1]


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


def _read(path: str | Path, data: bytes, *, score_as_text: bool) -> pd.DataFrame:
    dtypes: dict = {c: str for c in _ID_COLUMNS}
    if score_as_text:
        return read_csv_checked(path, error=RatingsError, data=data, dtype={**dtypes, "score": str})
    # A blank line's empty score is NaN (a float column has no empty text), so that the
    # line is skipped as blank rather than refused as a score that is not a number.
    return read_csv_checked(
        path,
        error=RatingsError,
        data=data,
        dtype={**dtypes, "score": np.float64},
        numbers=("score",),
    )


def _first_bad_score(path: str | Path, data: bytes) -> str:
    """The error for the first line whose score is not a finite number (slow path)."""
    frame = _read(path, data, score_as_text=True)
    text = frame["score"].fillna("")
    ids_blank = np.logical_and.reduce(
        [(frame[c].isna() | (frame[c] == "")).to_numpy() for c in REQUIRED_COLUMNS]
    )
    score = pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(score) & ~ids_blank
    first = int(np.argmax(bad))
    line = row_lines(data, len(frame))[first]
    return f"{path}: line {line}: score {text.iloc[first]!r} is not a finite number"


def read_ratings_csv(*, path: str | Path) -> pd.DataFrame:
    """The CSV as a DataFrame with text ids and float scores; blank lines are skipped, and
    so are rows a raw export marks excluded (``marked_excluded``, counted in
    ``attrs``); a single quote that ``spreadsheet_safe`` put before an id is removed.

    Raises RatingsError for an empty file, a missing column, a row with an empty id, a
    score that is not a finite number or is beyond ±LARGEST_SCORE, or a rater's second
    rating of the same video on the same dimension (naming the first such line).
    """
    data = Path(path).read_bytes()
    try:
        frame = _read(path, data, score_as_text=False)
    except ValueError as exc:
        if isinstance(exc, RatingsError):
            raise
        raise RatingsError(_first_bad_score(path, data)) from None  # a score that is not a number
    check_header(
        path, frame.columns, REQUIRED_COLUMNS, error=RatingsError, optional=(SESSION_COLUMN,)
    )
    excluded = marked_excluded(frame)
    lines = row_lines(data, len(frame))
    columns = [*REQUIRED_COLUMNS, *([SESSION_COLUMN] if SESSION_COLUMN in frame.columns else [])]
    frame = frame[columns]
    empty = {c: (frame[c].isna() | (frame[c] == "")).to_numpy() for c in _ID_COLUMNS[:3]}
    blank = empty["rater_id"] & empty["video_id"] & empty["dimension"] & frame["score"].isna()
    skip = blank | excluded
    if skip.any():
        frame = frame[~skip]
    line = lines[~skip]
    if len(frame) == 0:
        raise RatingsError(no_rows_left(path, "ratings", int(excluded.sum())))
    for column in _ID_COLUMNS[:3]:
        column_empty = empty[column][~skip]
        if column_empty.any():
            raise RatingsError(f"{path}: line {line[np.argmax(column_empty)]}: {column} is empty")
    if not np.isfinite(frame["score"].to_numpy()).all():
        raise RatingsError(_first_bad_score(path, data))
    huge = np.abs(frame["score"].to_numpy()) > LARGEST_SCORE
    if huge.any():
        row = int(np.argmax(huge))
        raise RatingsError(
            f"{path}: line {line[row]}: score {float(frame['score'].iat[row])!r} is beyond "
            f"±{LARGEST_SCORE:g} (no rating scale is that wide)"
        )
    frame = _strip_spreadsheet_quotes(frame.reset_index(drop=True))
    _refuse_repeats(path, frame, line)
    frame.attrs[EXCLUDED_COLUMN] = int(excluded.sum())
    return frame


def _refuse_repeats(path: str | Path, frame: pd.DataFrame, line: np.ndarray) -> None:
    """RatingsError naming the first row that rates a video on a dimension its rater
    already rated (and the earlier line). The platform stores one rating per rater, video
    and dimension (a regular video is in one session, never served twice), and the
    subjective models refuse a repeat too; a repeated row (an export pasted twice) would
    count twice in n, the MOS, its interval and alpha."""
    codes = [pd.factorize(frame[c])[0] for c in ("rater_id", "video_id", "dimension")]
    repeat = first_repeat(codes)
    if repeat is not None:
        row, earlier = repeat
        rater, video, dimension = (frame[c].iat[row] for c in ("rater_id", "video_id", "dimension"))
        raise RatingsError(
            f"{path}: line {line[row]}: rater {rater!r} rated video {video!r} on dimension "
            f"{dimension!r} again (first on line {line[earlier]})"
        )
