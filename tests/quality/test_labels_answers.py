"""Questionnaire answers: what is accepted, how it is encoded, and the errors naming lines."""

import json
import re

import numpy as np
import pandas as pd
import pytest

from quality.stats.labels import (
    ANSWER_COLUMNS,
    LabelsError,
    LabelSettings,
    analyse,
    encode_answers,
)


def frame(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(ANSWER_COLUMNS))


def test_codes_ids_in_sorted_order_and_questions_in_questionnaire_order():
    # given
    answers = frame(
        [
            ("r2", "v2", "motion", "ordinal", "3"),
            ("r1", "v1", "aesthetic", "score", "7.5"),
            ("r1", "v2", "motion", "ordinal", "invalid"),
            ("r2", "v1", "style", "tags", " noir |anime|noir"),
        ]
    )
    # when
    table = encode_answers(answers=answers)
    # then
    assert list(table.raters) == ["r1", "r2"] and list(table.items) == ["v1", "v2"]
    assert list(table.questions) == ["motion", "aesthetic", "style"]
    assert table.rater.tolist() == [1, 0, 0, 1] and table.item.tolist() == [1, 0, 1, 0]
    assert table.question_kind.tolist() == [1, 0, 2]  # ordinal, score, tags
    np.testing.assert_array_equal(table.number, [3.0, 7.5, np.nan, np.nan])
    assert table.invalid.tolist() == [False, False, True, False]
    # then: tags are trimmed, a repeated tag counts once, names are sorted
    assert list(table.tags) == ["anime", "noir"]
    assert table.tag_row.tolist() == [3, 3] and table.tag.tolist() == [0, 1]
    assert table.line.tolist() == [2, 3, 4, 5]


def test_invalid_is_an_abstention_never_the_number_minus_one():
    # given: the level -1 is a real level; "Invalid" (any case) is not a level at all
    answers = frame(
        [
            ("a", "v", "q", "ordinal", "-1"),
            ("b", "v", "q", "ordinal", "-1"),
            ("c", "v", "q", "ordinal", "INVALID"),
            ("a", "w", "q", "ordinal", "Invalid"),
            ("b", "w", "q", "ordinal", "2"),
            ("c", "w", "q", "ordinal", "2"),
        ]
    )
    # when
    labels = analyse(answers=answers, settings=LabelSettings()).labels
    # then: v keeps the level -1 (2 of 3), w the level 2 (the abstention is not a vote)
    assert labels["value"].tolist() == [-1, 2]
    assert labels["status"].tolist() == ["ok", "ok"]
    assert labels["n"].tolist() == [3, 3]


def test_a_dataframe_with_numbers_and_missing_values_is_read_as_text():
    # given: what a service may pass: numeric answers and ids, None for "no tag"
    answers = pd.DataFrame(
        {
            "rater_id": [1, 2, 1, 2],
            "item_id": [10, 10, 10, 10],
            "question": ["s", "s", "t", "t"],
            "kind": ["score", "score", "tags", "tags"],
            "answer": [4.0, 5, None, "x"],
        }
    )
    # when: called as a service would, the table positional
    labels = analyse(answers, settings=LabelSettings()).labels
    # then
    assert labels["item_id"].tolist() == ["10", "10"]
    assert labels["value"].tolist() == [4.5, ""]  # x: 1 of 2 is not more than half


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([], "no answers"),
        (
            [("a", "v", "q", "score", "1"), ("", "v", "q", "score", "1")],
            "line 3: rater_id is empty",
        ),
        ([("a", "", "q", "score", "1")], "line 2: item_id is empty"),
        ([("a", "v", "", "score", "1")], "line 2: question is empty"),
        (
            [("a", "v", "q", "score", "1"), ("a", "v", "p", "rating", "1")],
            "line 3: kind 'rating' is not one of score, ordinal, tags",
        ),
        (
            [
                ("a", "v", "q", "score", "1"),
                ("a", "v", "p", "tags", ""),
                ("b", "v", "q", "tags", ""),
            ],
            "line 4: question 'q' is kind 'tags' here but 'score' on line 2",
        ),
        ([("a", "v", "q", "score", "1"), ("b", "v", "q", "score", "abc")], "line 3: score 'abc'"),
        ([("a", "v", "q", "score", "inf")], "line 2: score 'inf' is not a finite number"),
        ([("a", "v", "q", "score", "invalid")], "line 2: score 'invalid' is not a finite"),
        (
            [("a", "v", "q", "ordinal", "good")],
            "line 2: ordinal answer 'good' is neither a number nor 'invalid'",
        ),
        ([("a", "v", "q", "ordinal", "")], "line 2: ordinal answer ''"),
        (
            [
                ("a", "v", "q", "tags", "x|y"),
                ("b", "v", "q", "tags", "x||y"),
                ("c", "v", "q", "tags", "x|"),
            ],
            "line 3: tags answer 'x||y' has an empty tag",
        ),
        (
            [
                ("a", "v", "q", "score", "1"),
                ("b", "v", "q", "score", "2"),
                ("a", "v", "q", "score", "3"),
            ],
            "line 4: rater 'a' answered question 'q' for item 'v' again (first on line 2)",
        ),
    ],
)
def test_unusable_answers_raise_naming_the_line(rows, message):
    with pytest.raises(LabelsError, match="^" + re.escape(message)):
        encode_answers(answers=frame(rows))


def test_a_line_column_is_what_errors_name():
    # given: rows read from a CSV with blank lines (read_answers_csv adds `line`)
    answers = frame([("a", "v", "q", "score", "1"), ("b", "v", "q", "score", "x")])
    answers["line"] = [2, 7]
    # then
    with pytest.raises(LabelsError, match="^line 7: score 'x'"):
        encode_answers(answers=answers)


def test_missing_columns_are_named():
    with pytest.raises(LabelsError, match="missing column\\(s\\): kind, answer"):
        encode_answers(answers=pd.DataFrame({"rater_id": [], "item_id": [], "question": []}))


def categorical(answers: pd.DataFrame, *, unused: str | None = "zz") -> pd.DataFrame:
    """``answers`` with every text column categorical, categories in reverse sorted
    order plus one no row uses (unlike text, whose codes follow the values); with
    ``unused`` None, categories in order of first appearance, every one used (as
    pyarrow's parser numbers them: the codes are then taken as they are)."""
    answers = answers.copy()
    for name in ANSWER_COLUMNS:
        if unused is None:
            categories = list(dict.fromkeys(answers[name]))
        else:
            categories = sorted(set(answers[name]) | {unused}, reverse=True)
        answers[name] = pd.Categorical(answers[name], categories=categories)
    return answers


@pytest.mark.parametrize("unused", ["zz", None], ids=["reordered", "first-appearance"])
def test_categorical_answers_are_encoded_as_their_text_is(unused):
    # given: the answers as text and as categoricals (read_answers_csv gives these)
    answers = frame(
        [
            ("r2", "v2", "motion", "ordinal", "3"),
            ("r1", "v1", "aesthetic", "score", "7.5"),
            ("r1", "v2", "motion", "ordinal", "invalid"),
            ("r2", "v1", "style", "tags", " noir |anime|noir"),
            ("r3", "v10", "aesthetic", "score", "2"),
        ]
    )
    # when
    text = encode_answers(answers=answers)
    coded = encode_answers(answers=categorical(answers, unused=unused))
    # then: ids in sorted order, questions in order of appearance, the unused left out
    for name in ("raters", "items", "questions", "tags"):
        pd.testing.assert_index_equal(getattr(coded, name), getattr(text, name))
    for name in ("rater", "item", "question", "number", "invalid", "tag_row", "tag", "unit"):
        np.testing.assert_array_equal(getattr(coded, name), getattr(text, name))


def test_categorical_answers_give_the_same_result_and_errors_as_text():
    # given
    rng = np.random.default_rng(3)
    rows = [
        (f"r{rater}", f"v{item}", question, kind, answer)
        for item in range(30)
        for rater in rng.choice(9, size=3, replace=False)
        for question, kind, answer in [
            ("q", "ordinal", str(rng.choice(["1", "2", "3", "invalid"]))),
            ("s", "score", str(rng.integers(1, 6))),
            ("t", "tags", str(rng.choice(["", "a", "a|b", "b"]))),
        ]
    ]
    answers = frame(rows).sample(frac=1.0, random_state=4)  # rows in any order
    # when
    text = analyse(answers=answers, settings=LabelSettings())
    coded = analyse(answers=categorical(answers), settings=LabelSettings())
    # then
    pd.testing.assert_frame_equal(coded.labels, text.labels)
    assert json.dumps(coded.summary_dict()) == json.dumps(text.summary_dict())  # NaN too
    # then: the messages name the same line and value
    bad = frame([("a", "v", "q", "score", "1"), ("b", "v", "q", "score", "x")])
    with pytest.raises(LabelsError, match="^line 3: score 'x' is not a finite number"):
        encode_answers(answers=categorical(bad))


def test_read_answers_csv_numbers_lines_with_and_without_blank_lines(tmp_path, monkeypatch):
    # given: the same answers, once plain and once with blank lines (kept as rows so
    # that lines are counted), both read by pyarrow's parser, and the blank lines once
    # more by pandas' parser (the one a file pyarrow's declines goes to)
    from quality.stats.labels import csv_input, read_answers_csv

    header = "rater_id,item_id,question,kind,answer\n"
    body = ["a,007,q,score,1\n", "b,007,q,tags,\n", "'@c,007,q,tags,'-x|y\n"]
    plain, spaced = tmp_path / "plain.csv", tmp_path / "spaced.csv"
    plain.write_text(header + "".join(body))
    spaced.write_text(header + "\n" + body[0] + "\n\n" + body[1] + ",,,,\n" + body[2])
    # when
    first = read_answers_csv(path=plain)
    second = read_answers_csv(path=spaced)
    monkeypatch.setattr(csv_input, "_read_fast", lambda *args, **kwargs: None)
    third = read_answers_csv(path=spaced)
    # then: text kept as written, spreadsheet quotes removed, empty answers empty
    assert first.drop(columns="line").values.tolist() == [
        ["a", "007", "q", "score", "1"],
        ["b", "007", "q", "tags", ""],
        ["@c", "007", "q", "tags", "-x|y"],
    ]
    assert first["line"].tolist() == [2, 3, 4]
    # (pyarrow's parser gives categoricals, pandas' text: the same text either way)
    assert isinstance(first["answer"].dtype, pd.CategoricalDtype)
    assert not isinstance(third["answer"].dtype, pd.CategoricalDtype)
    for other in (second, third):
        pd.testing.assert_frame_equal(
            first.drop(columns="line").astype(str), other.drop(columns="line").astype(str)
        )
        assert other["line"].tolist() == [3, 6, 8]


def test_read_answers_csv_unquotes_categories_and_merges_what_becomes_one(tmp_path):
    # given: a question once exported with the spreadsheet quote and once without
    from quality.stats.labels import read_answers_csv

    path = tmp_path / "a.csv"
    path.write_text(
        "rater_id,item_id,question,kind,answer\na,v,'=q,score,1\nb,v,=q,score,2\nc,v,'x,score,3\n"
    )
    # when
    answers = read_answers_csv(path=path)
    # then: one question "=q" ("'x" is not a quoted formula and stays)
    assert answers["question"].tolist() == ["=q", "=q", "'x"]
    assert list(answers["question"].cat.categories) == ["=q", "'x"]
    assert list(encode_answers(answers=answers).questions) == ["=q", "'x"]
