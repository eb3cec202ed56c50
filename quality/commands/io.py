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

import math
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

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


def csv_text(frame, columns: Sequence[str] | None = None) -> str:
    """``frame`` (only ``columns``, if given) as CSV, text cells made safe for spreadsheets
    (``spreadsheet_safe``, the web exports' rule), numbers as they are."""
    frame = (frame if columns is None else frame[list(columns)]).copy()
    for name in frame.columns:
        if frame[name].dtype.kind not in "biufc":  # text (object, string or category)
            frame[name] = frame[name].map(
                lambda value: spreadsheet_safe(value) if isinstance(value, str) else value
            )
    return frame.to_csv(index=False)


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
