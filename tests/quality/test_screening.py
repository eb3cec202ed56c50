"""Line clickers: exact decisions around the share threshold."""

import pandas as pd
import pytest

from quality.stats.ratings import encode_ratings
from quality.stats.screening import line_clickers


def _rater(rater: str, scores: list[float], dimensions=("a",)) -> list[tuple]:
    return [(rater, f"v{i}", dimensions[i % len(dimensions)], s) for i, s in enumerate(scores)]


def _table(rows):
    return encode_ratings(
        ratings=pd.DataFrame(rows, columns=["rater_id", "video_id", "dimension", "score"])
    )


def test_exactly_forty_percent_is_kept_and_just_above_is_excluded():
    # given: 4 of 10 identical (40%) versus 5 of 12 (41.7%), across two dimensions
    kept = _rater("kept", [50, 50, 50, 50, 1, 2, 3, 4, 5, 6], dimensions=("a", "b"))
    clicker = _rater("clicker", [50, 50, 50, 50, 50, 1, 2, 3, 4, 5, 6, 7], dimensions=("a", "b"))
    # when
    excluded = line_clickers(table=_table(kept + clicker), line_click_share=0.40)
    # then
    assert [(e.rater_id, e.reason, e.top_score, e.n_ratings) for e in excluded] == [
        ("clicker", "line_clicker", 50.0, 12)
    ]
    assert excluded[0].share == pytest.approx(5 / 12)


def test_scores_are_rounded_to_the_slider_step_before_counting():
    # given: 49.6, 50.4 and 50 all round to 50 at step 1; at step 0.1 they differ
    rows = _rater("r", [49.6, 50.4, 50.0, 10.0, 20.0])
    # then
    assert [e.top_score for e in line_clickers(table=_table(rows), slider_step=1.0)] == [50.0]
    assert line_clickers(table=_table(rows), slider_step=0.1) == []


def test_rounding_is_half_up_on_the_step_grid():
    # given: 2.5 and 3.4 round to 3 (half up), 1.49 to 1; step 1 -> 3 covers 2 of 4
    rows = _rater("r", [2.5, 3.4, 1.49, 7.0])
    # when
    excluded = line_clickers(table=_table(rows), line_click_share=0.49)
    # then
    assert [(e.top_score, e.share) for e in excluded] == [(3.0, 0.5)]


def test_a_slider_step_of_five_groups_scores_in_fives():
    rows = _rater("r", [48, 52, 51, 20, 80])  # 50, 50, 50, 20, 80 at step 5
    excluded = line_clickers(table=_table(rows), slider_step=5.0)
    assert [(e.top_score, e.share) for e in excluded] == [(50.0, 0.6)]


def test_share_one_turns_the_rule_off():
    rows = _rater("always", [70] * 20)
    assert line_clickers(table=_table(rows), line_click_share=1.0) == []


def test_ties_between_top_scores_report_the_lowest():
    rows = _rater("r", [90, 10, 90, 10, 55])
    excluded = line_clickers(table=_table(rows), line_click_share=0.3)
    assert [(e.top_score, e.share) for e in excluded] == [(10.0, 0.4)]


def test_a_fine_step_on_large_scores_tells_the_scores_apart():
    # given: three different scores whose steps (score / 1e-9) pass 2**63; cast to
    # integers they all became -2**63, one value covering every rating
    rows = _rater("r", [1e11, 2e11, 3e11]) + _rater("s", [7e11, 7e11, 8e11])
    # when
    excluded = line_clickers(table=_table(rows), slider_step=1e-9)
    # then: as counted by hand, r gave three values (kept), s one value twice (2 of 3)
    assert [(e.rater_id, e.top_score, e.share) for e in excluded] == [
        ("s", pytest.approx(7e11), pytest.approx(2 / 3))
    ]
