"""Reading and checking rankings: the format, the per-line errors, the CSV readers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from quality.stats.ranking import (
    RankingsError,
    encode_rankings,
    format_ranking,
    parse_ranking,
    read_rankings_csv,
    read_scores_csv,
)

HEADER = "rater_id,question,prompt_id,ranking\n"


def frame(*rows: tuple[str, str, str, str]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["rater_id", "question", "prompt_id", "ranking"])


def test_parse_splits_groups_and_ties_and_strips_spaces():
    assert parse_ranking("m3 > m1 = m4 >m2") == [["m3"], ["m1", "m4"], ["m2"]]
    assert format_ranking([["m3"], ["m1", "m4"], ["m2"]]) == "m3>m1=m4>m2"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a>>b", "empty condition id"),
        ("a>b=", "empty condition id"),
        ("a>b>a", "lists condition 'a' twice"),
        ("a=a", "lists condition 'a' twice"),
        ("  ", "the ranking is empty"),
    ],
)
def test_parse_rejects_malformed_rankings(text, message):
    with pytest.raises(RankingsError, match=message):
        parse_ranking(text)


def test_encode_gives_levels_over_sorted_conditions_raters_and_prompts():
    # given
    rankings = frame(
        ("r2", "q", "p2", "b>a=c"),
        ("r1", "q", "p1", "c>b>a"),
        ("r1", "q2", "p1", "x>y"),
    )
    # when
    q, q2 = encode_rankings(rankings)
    # then: questions in order of appearance; ids sorted, rankings by (rater, prompt)
    assert (q.question, q2.question) == ("q", "q2")
    assert q.conditions == ("a", "b", "c") and q.raters == ("r1", "r2")
    assert q.prompts == ("p1", "p2")
    np.testing.assert_array_equal(q.level, [[2, 1, 0], [1, 0, 1]])
    np.testing.assert_array_equal(q.rater, [0, 1])
    np.testing.assert_array_equal(q.prompt, [0, 1])
    np.testing.assert_array_equal(q.line, [3, 2])
    np.testing.assert_array_equal(q2.level, [[0, 1]])


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (
            [("r1", "q", "p", "a>b>c"), ("r2", "q", "p", "a>b>a")],
            "line 3 \\(rater 'r2', prompt 'p', question 'q'\\): ranking 'a>b>a' lists "
            "condition 'a' twice",
        ),
        (
            [("r1", "q", "p", "a>b>c"), ("r2", "q", "p", "a>b")],
            "line 3: ranking 'a>b' of prompt 'p' on question 'q' must rank the conditions of "
            "the prompt's first ranking \\(line 2\\); misses 'c'",
        ),
        (
            [("r1", "q", "p", "a>b>c"), ("r2", "q", "p", "a>b>c=d")],
            "line 3: .* adds 'd'",
        ),
        (
            [("r1", "q", "p", "a>b>c"), ("r2", "q", "p", "a>b>x")],
            "line 3: .* misses 'c' and adds 'x'",
        ),
        (
            [("r1", "q", "p1", "a>b>c"), ("r1", "q", "p2", "a>b>d")],
            "line 3: prompt 'p2' of question 'q' must rank the same conditions as prompt 'p1' "
            "\\(line 2\\); misses 'c' and adds 'd'",
        ),
        (
            [("r1", "q", "p", "a>b"), ("r1", "q", "p", "b>a")],
            "line 3: rater 'r1' already ranked prompt 'p' on question 'q' \\(line 2\\)",
        ),
        ([("r1", "q", "p", "a")], "line 2: a ranking needs at least 2 conditions"),
        ([("r1", "q", "p", ">".join(f"c{i}" for i in range(21)))], "line 2: 21 conditions"),
        ([("r1", "q", "p", "a>b"), ("", "q", "p", "b>a")], "line 3: rater_id is empty"),
        ([("r1", "q", "*", "a>b")], "line 2: prompt_id '\\*' is reserved"),
    ],
)
def test_encode_names_the_line_of_a_bad_ranking(rows, message):
    with pytest.raises(RankingsError, match=message):
        encode_rankings(frame(*rows))


def test_encode_uses_a_line_column_when_there_is_one():
    rankings = frame(("r1", "q", "p", "a>b"), ("r2", "q", "p", "a>c"))
    rankings["line"] = [10, 14]
    with pytest.raises(RankingsError, match="line 14: .*first ranking \\(line 10\\)"):
        encode_rankings(rankings)


def test_encode_needs_the_columns_and_a_ranking():
    with pytest.raises(RankingsError, match="missing column\\(s\\): ranking"):
        encode_rankings(pd.DataFrame({"rater_id": [], "question": [], "prompt_id": []}))
    with pytest.raises(RankingsError, match="no rankings"):
        encode_rankings(frame())


def test_csv_keeps_ids_as_text_skips_blank_lines_and_counts_them(tmp_path):
    # given: a blank line 3, an id with leading zeros, a spreadsheet-quoted condition id
    path = tmp_path / "r.csv"
    path.write_text(HEADER + "007,q,01,'-x>b\n\n8,q,01,b>-x\n8,q,02,b>-x=a\n")
    # when
    rankings = read_rankings_csv(path=path)
    # then
    assert rankings["rater_id"].tolist() == ["007", "8", "8"]
    assert rankings["ranking"].tolist()[0] == "-x>b"
    assert rankings["line"].tolist() == [2, 4, 5]
    with pytest.raises(RankingsError, match="line 5: prompt '02'.* adds 'a'"):
        encode_rankings(rankings)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "the file is empty"),
        (HEADER, "no rankings"),
        ("rater_id,question,ranking\na,q,x>y\n", "missing column\\(s\\): prompt_id"),
        (HEADER + "a,q,p,x>y,extra\n", r"line 2: 5 field\(s\) where the header has 4"),
    ],
)
def test_csv_file_errors(tmp_path, content, message):
    path = tmp_path / "r.csv"
    path.write_text(content)
    with pytest.raises(RankingsError, match=message):
        read_rankings_csv(path=path)


def test_scores_csv(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("condition,score\nm1,0.5\n\nm2,-3\n'=m3,1e2\n")
    assert read_scores_csv(path=path) == {"m1": 0.5, "m2": -3.0, "=m3": 100.0}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("condition,score\nm1,abc\n", "line 2: score 'abc' is not a finite number"),
        ("condition,score\nm1,1\nm2,inf\n", "line 3: score 'inf'"),
        ("condition,score\nm1,1\n,2\n", "line 3: condition is empty"),
        ("condition,score\nm1,1\nm1,2\n", "line 3: condition 'm1' is scored twice"),
        ("condition,value\nm1,1\n", "missing column\\(s\\): score"),
        ("condition,score\n", "no scores"),
    ],
)
def test_scores_csv_errors(tmp_path, content, message):
    path = tmp_path / "s.csv"
    path.write_text(content)
    with pytest.raises(RankingsError, match=message):
        read_scores_csv(path=path)
