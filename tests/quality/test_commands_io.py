"""``csv_text``: the CSV every ``python -m quality`` command writes, held to pandas'
``to_csv`` (after ``spreadsheet_safe`` on every text cell) as the oracle."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from quality.commands.io import csv_text
from quality.stats.ratings_csv import spreadsheet_safe

AWKWARD_TEXT = [
    "plain",
    "",
    "a,b",
    'say "hi"',
    "two\nlines",
    "carriage\rreturn",
    '=HYPERLINK("x")',
    "-blur",
    "+1",
    "@v1",
    "\tindented",
    "'quoted already",
    " spaced ",
    "ünïcödé",
    "007",
]


def oracle(frame: pd.DataFrame) -> str:
    """What the commands wrote before: pandas' own writer after ``spreadsheet_safe``."""
    frame = frame.copy()
    for name in frame.columns:
        if frame[name].dtype.kind not in "biufc":
            frame[name] = frame[name].map(
                lambda value: spreadsheet_safe(value) if isinstance(value, str) else value
            )
    return frame.to_csv(index=False, lineterminator="\r\n")


def random_frame(rng: np.random.Generator, rows: int) -> pd.DataFrame:
    text = rng.choice(np.array(AWKWARD_TEXT, dtype=object), rows)
    floats = rng.choice(
        np.array([0.0, -0.0, 1.5, -2.25, 1e-5, 1e20, 1 / 3, np.nan, np.inf, -np.inf, 3.0]),
        rows,
    )
    mixed = rng.choice(
        np.array(["3", 3.0, 3, "level", None, np.nan, True, np.float64(2.5), "a,b"], dtype=object),
        rows,
    )
    return pd.DataFrame(
        {
            "text": text,
            "category": pd.Categorical(rng.choice(np.array(AWKWARD_TEXT[:6]), rows)),
            "int category": pd.Categorical(rng.integers(0, 3, rows)),
            "float": floats,
            "int": rng.integers(-5, 5, rows),
            "bool": rng.random(rows) < 0.5,
            "mixed": mixed,
            "nullable": pd.array(
                np.where(rng.random(rows) < 0.3, None, rng.integers(0, 9, rows)), dtype="Int64"
            ),
            "with missing text": np.where(rng.random(rows) < 0.3, None, text),
        }
    )


@pytest.mark.parametrize("seed", range(5))
def test_every_kind_of_column_is_written_as_pandas_writes_it(seed):
    # given: text a spreadsheet would run, quotes, commas, line breaks, -0.0, NaN,
    # infinities, ints, bools, nullable ints, categories and a column of mixed types
    frame = random_frame(np.random.default_rng(seed), rows=200)
    # when / then
    assert csv_text(frame) == oracle(frame)


def test_a_column_of_mixed_types_keeps_one_and_one_point_zero_apart():
    # given: 1, 1.0 and True hash alike; pandas writes them 1, 1.0 and True
    frame = pd.DataFrame({"value": np.array([1, 1.0, True, "1"], dtype=object), "n": 1})
    # when
    text = csv_text(frame)
    # then
    assert text == "value,n\r\n1,1\r\n1.0,1\r\nTrue,1\r\n1,1\r\n" == oracle(frame)


def test_selected_columns_empty_frames_and_a_single_column_of_empty_cells():
    frame = pd.DataFrame({"a": ["x", "", None], "b": [1.0, 2.0, np.nan], "c": ["=1", "y", "z"]})
    assert csv_text(frame, ["c", "a"]) == oracle(frame[["c", "a"]])
    # a lone empty field is written "" so that the row is not blank
    assert csv_text(frame, ["a"]) == oracle(frame[["a"]]) == 'a\r\nx\r\n""\r\n""\r\n'
    assert csv_text(frame.iloc[:0]) == oracle(frame.iloc[:0]) == "a,b,c\r\n"
    # a header that needs quotes (headers are names the command chose, not made safe)
    named = pd.DataFrame({"x,y": [1], 'say "z"': [2]})
    assert csv_text(named) == oracle(named) == '"x,y","say ""z"""\r\n1,2\r\n'


def test_a_carriage_return_inside_a_text_cell_is_quoted_so_the_row_reads_back_whole():
    # given: an id holding a bare carriage return (from a quoted field of the input)
    frame = pd.DataFrame({"video_id": ["v\r1", "v2"], "mos": [1.5, 2.5]})
    # when
    text = csv_text(frame)
    # then: quoted, so the csv module and pandas read two rows, not three
    assert text == 'video_id,mos\r\n"v\r1",1.5\r\nv2,2.5\r\n'
    back = pd.read_csv(io.StringIO(text, newline=""))
    assert back["video_id"].tolist() == ["v\r1", "v2"]


@pytest.mark.parametrize("dtype", [object, "str", "category"])
def test_text_that_needs_a_quote_or_csv_quoting_is_written_as_pandas_writes_it(dtype):
    # given: many plain texts and, among them, the few that need care (formatted
    # apart from the rest), as object, pyarrow-backed and categorical columns
    plain = [f"item{i:04d}" for i in range(500)]
    texts = np.array(plain + AWKWARD_TEXT + [None], dtype=object)
    rng = np.random.default_rng(1)
    column = pd.Series(rng.choice(texts, 2000), dtype=dtype)
    frame = pd.DataFrame({"text": column, "n": np.arange(2000)})
    # when / then
    assert csv_text(frame) == oracle(frame)
    assert csv_text(frame[["text"]]) == oracle(frame[["text"]])
