"""Reading and checking side-by-side judgments: clear errors naming the line or row."""

import numpy as np
import pandas as pd
import pytest

from quality.stats.preference import (
    JudgmentsError,
    encode_judgments,
    read_judgments_csv,
)
from quality.stats.preference.judgments import A_PREFERRED, B_PREFERRED, EQUAL

HEADER = "rater_id,question,content_id,left,right,choice\n"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "the file is empty"),
        (HEADER, "no judgments (only a header)"),
        ("rater_id,question,left,right,choice\nr,q,a,b,left\n", "missing column(s): content_id"),
        (HEADER + "r,q,c,a,b,left\n\nr,q,c,a,b,up\n", "line 4: choice 'up' is not one of"),
        (HEADER + "r,q,c,a,b,left\n,q,c,a,b,left\n", "line 3: rater_id is empty"),
        (HEADER + "r,q,c,a,b,left\nr,,c,a,b,left\n", "line 3: question is empty"),
        (HEADER + "r,q,,a,b,left\n", "line 2: content_id is empty"),
        (HEADER + "r,q,c,a,,left\n", "line 2: right is empty"),
        (HEADER + "r,q,c,a,b,left\nr,q,c,a,a,left\n", "line 3: left and right are the same"),
        (HEADER + "r,q,c,a,b,Left\n", "line 2: choice 'Left'"),
        (HEADER + "r,q,c,a,b,\n", "line 2: choice ''"),
        (HEADER + "r,q,c,a,b,left,9\n", "line 2: 7 field(s) where the header has 6"),
    ],
)
def test_bad_files_are_refused_naming_the_line(tmp_path, content, message):
    path = tmp_path / "j.csv"
    path.write_text(content)
    with pytest.raises(JudgmentsError) as error:
        read_judgments_csv(path=path)
    assert message in str(error.value)


def test_the_first_bad_line_is_named_whatever_the_problem(tmp_path):
    # given: a bad choice on line 3 and an empty id on line 4
    path = tmp_path / "j.csv"
    path.write_text(HEADER + "r,q,c,a,b,left\nr,q,c,a,b,x\n,q,c,a,b,left\n")
    # when / then
    with pytest.raises(JudgmentsError, match="line 3: choice 'x'"):
        read_judgments_csv(path=path)


def test_ids_stay_text_extra_columns_are_ignored_and_export_quotes_removed(tmp_path):
    path = tmp_path / "j.csv"
    path.write_text(
        "note,rater_id,question,content_id,left,right,choice\n"
        "x,007,q,01,'=m1,m2,left\n"
        "y,8,q,01,m2,'=m1,equal\n"
    )
    frame = read_judgments_csv(path=path)
    assert frame.to_dict("list") == {
        "rater_id": ["007", "8"],
        "question": ["q", "q"],
        "content_id": ["01", "01"],
        "left": ["=m1", "m2"],
        "right": ["m2", "=m1"],
        "choice": ["left", "equal"],
    }


def test_a_dataframe_with_a_bad_row_is_refused_naming_the_row_label():
    frame = pd.DataFrame(
        {
            "rater_id": ["r", "r"],
            "question": ["q", "q"],
            "content_id": ["c", None],
            "left": ["a", "a"],
            "right": ["b", "b"],
            "choice": ["left", "left"],
        },
        index=[10, 11],
    )
    with pytest.raises(JudgmentsError, match="row 11: content_id is empty"):
        encode_judgments(judgments=frame)


def test_encoding_maps_sides_to_the_sorted_pair():
    # given: numbers as ids (a Django frame may hold ints): they become text
    frame = pd.DataFrame(
        {
            "rater_id": [2, 1, 1],
            "question": ["q", "q", "q"],
            "content_id": [1, 1, 2],
            "left": ["b", "a", "b"],
            "right": ["a", "b", "a"],
            "choice": ["left", "left", "equal"],
        }
    )
    # when
    table = encode_judgments(judgments=frame)
    # then
    assert table.raters.tolist() == ["1", "2"] and table.conditions.tolist() == ["a", "b"]
    assert table.rater.tolist() == [1, 0, 0]
    assert table.condition_a.tolist() == [0, 0, 0] and table.condition_b.tolist() == [1, 1, 1]
    assert table.outcome.tolist() == [B_PREFERRED, A_PREFERRED, EQUAL]
    assert table.chose_left.tolist() == [True, True, False]
    assert np.array_equal(table.content, [0, 0, 1])
