"""Borda scores, place counts and Recall@K on examples worked by hand."""

from __future__ import annotations

import numpy as np
import pytest

from quality.stats.ranking import (
    average_places,
    borda_points,
    place_counts,
    recall_at_k,
    top_k_share,
)
from quality.stats.ranking.borda import borda_scores


def test_borda_points_give_ties_the_mean_of_the_places_they_span():
    # given: a > b = c > d  and  d > c > b > a   (conditions a, b, c, d)
    level = np.array([[0, 1, 1, 2], [3, 2, 1, 0]])
    # when / then: places 1, 2.5, 2.5, 4 -> points 3, 1.5, 1.5, 0
    np.testing.assert_array_equal(average_places(level), [[1, 2.5, 2.5, 4], [4, 3, 2, 1]])
    np.testing.assert_array_equal(borda_points(level), [[3, 1.5, 1.5, 0], [0, 1, 2, 3]])


def test_borda_of_a_prompt_is_the_mean_and_pooled_the_mean_of_prompts():
    # given: prompt 0 ranked a>b>c twice; prompt 1 ranked c>b>a once
    level = np.array([[0, 1, 2], [0, 1, 2], [2, 1, 0]])
    prompt = np.array([0, 0, 1])
    # when
    scores = borda_scores(level=level, prompt=prompt, n_prompts=2)
    # then: each prompt weighs the same in the pooled row
    np.testing.assert_array_equal(scores, [[2, 1, 0], [0, 1, 2], [1, 1, 1]])


def test_place_counts_spread_a_tie_over_its_places():
    # given: a > b = c  and  b > a > c
    level = np.array([[0, 1, 1], [1, 0, 2]])
    # when
    counts = place_counts(level)
    # then: rows conditions, columns places 1..3
    np.testing.assert_array_equal(counts, [[1, 1, 0], [1, 0.5, 0.5], [0, 0.5, 1.5]])


def test_recall_at_k_on_a_worked_example():
    # given: human a>b>c>d>e>f; model scores b 10, a 9, d 8, c 7, f 6, e 5
    human = np.arange(6)  # places of a..f
    model = -np.array([9.0, 10.0, 7.0, 8.0, 5.0, 6.0])
    # when / then: top1 {a} vs {b}; top3 {a,b,c} vs {b,a,d}; top5 {a..e} vs {b,a,d,c,f}
    assert recall_at_k(human=human, model=model, k=1) == 0.0
    assert recall_at_k(human=human, model=model, k=3) == pytest.approx(2 / 3)
    assert recall_at_k(human=human, model=model, k=5) == pytest.approx(4 / 5)
    assert recall_at_k(human=human, model=model, k=6) == 1.0


def test_a_tie_at_the_boundary_counts_with_its_random_tie_break_probability():
    # given: human a>b>c; the model ties a and b on top
    human = np.array([0, 1, 2])
    model = -np.array([5.0, 5.0, 1.0])
    # when / then: a is in the model's top 1 half the time
    np.testing.assert_array_equal(top_k_share(model, k=1), [0.5, 0.5, 0.0])
    assert recall_at_k(human=human, model=model, k=1) == 0.5
    assert recall_at_k(human=human, model=model, k=2) == 1.0
    # a rater's tie: a=b=c against the model's a>b>c: each in the top 1 a third of the time
    assert recall_at_k(human=np.zeros(3), model=-np.array([3.0, 2.0, 1.0]), k=1) == (
        pytest.approx(1 / 3)
    )


def test_recall_needs_k_within_the_conditions():
    with pytest.raises(ValueError, match="k must be between 1 and"):
        recall_at_k(human=np.arange(3), model=np.arange(3), k=4)
