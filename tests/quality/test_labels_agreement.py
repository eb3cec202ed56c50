"""Krippendorff's alpha against the krippendorff package at every level (with missing
values), and each rater's agreement with the final labels by brute force."""

import math

import krippendorff
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quality.stats.labels import LabelSettings, analyse
from quality.stats.labels.agreement import alpha_from_counts, unit_value_counts
from tests.quality.test_labels_majority import random_questionnaire

NAN = np.nan
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": 4 observers, 12 units.
WORKED_EXAMPLE = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
        [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
    ]
)


def counts_of(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(units x values) counts of a (raters x units) matrix with NaN, and the values."""
    raters, units = np.nonzero(~np.isnan(matrix))
    values, code = np.unique(matrix[raters, units], return_inverse=True)
    counts = unit_value_counts(
        unit=units, value=code, n_units=matrix.shape[1], n_values=values.size
    )
    return counts, values


@pytest.mark.parametrize(
    ("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_alpha_of_krippendorffs_worked_example(level, published):
    # given
    counts, values = counts_of(WORKED_EXAMPLE)
    # when
    alpha = alpha_from_counts(counts=counts, level=level, values=values)
    # then: the published value (3 decimals) and the package's exact one
    assert round(alpha, 3) == published
    package = krippendorff.alpha(reliability_data=WORKED_EXAMPLE, level_of_measurement=level)
    assert alpha == pytest.approx(package, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    raters=st.integers(2, 6),
    units=st.integers(2, 30),
    n_values=st.integers(2, 6),
    missing=st.floats(0.0, 0.6),
    level=st.sampled_from(["nominal", "ordinal", "interval"]),
)
def test_alpha_equals_the_package_on_random_data_with_missing_values(
    seed, raters, units, n_values, missing, level
):
    # given
    rng = np.random.default_rng(seed)
    matrix = rng.integers(1, n_values + 1, size=(raters, units)).astype(float)
    matrix[rng.random(matrix.shape) < missing] = np.nan
    counts, values = counts_of(matrix)
    # when
    alpha = alpha_from_counts(counts=counts, level=level, values=values)
    # then
    try:
        with np.errstate(invalid="ignore", divide="ignore"):
            package = krippendorff.alpha(reliability_data=matrix, level_of_measurement=level)
    except ValueError:  # the package refuses data with a single value
        package = math.nan
    if math.isnan(package) or not np.isfinite(package):
        assert math.isnan(alpha)
    else:
        assert alpha == pytest.approx(package, abs=1e-9)


def test_alpha_is_nan_without_a_pairable_unit():
    counts = np.array([[1, 0], [0, 1]])
    assert math.isnan(alpha_from_counts(counts=counts, level="nominal"))


def matrix_of(answers: pd.DataFrame, value) -> np.ndarray:
    """(raters x items) matrix of value(answer), NaN where no answer or value is None."""
    raters = sorted(set(answers["rater_id"]))
    items = sorted(set(answers["item_id"]))
    matrix = np.full((len(raters), len(items)), np.nan)
    for rater, item, answer in answers[["rater_id", "item_id", "answer"]].itertuples(False):
        number = value(answer)
        if number is not None:
            matrix[raters.index(rater), items.index(item)] = number
    return matrix


def test_question_alphas_equal_the_package_at_their_levels():
    # given
    answers = random_questionnaire(items=80, raters_per_item=3, seed=11)
    # when
    result = analyse(answers=answers, settings=LabelSettings())
    # then: interval for scores, ordinal for levels with `invalid` as missing
    by_question = {q: part for q, part in answers.groupby("question")}
    scores = matrix_of(by_question["aesthetic"], float)
    levels = matrix_of(by_question["motion"], lambda a: None if a == "invalid" else float(a))
    assert result.alpha["aesthetic"] == pytest.approx(
        krippendorff.alpha(reliability_data=scores, level_of_measurement="interval"), abs=1e-9
    )
    assert result.alpha["motion"] == pytest.approx(
        krippendorff.alpha(reliability_data=levels, level_of_measurement="ordinal"), abs=1e-9
    )
    # then: per tag, nominal chosen (1) / not chosen (0) by each rater who answered
    for tag in ["blur", "flicker", "noir", "retro"]:
        chosen = matrix_of(by_question["style"], lambda a, t=tag: float(t in a.split("|")))
        expected = krippendorff.alpha(reliability_data=chosen, level_of_measurement="nominal")
        assert result.tag_alpha["style"][tag] == pytest.approx(expected, abs=1e-9)
    summary = result.summary_dict()
    assert summary["alpha_level"] == {"aesthetic": "interval", "motion": "ordinal"}


def test_rater_agreement_with_the_final_labels_by_brute_force():
    # given
    answers = random_questionnaire(items=60, raters_per_item=3, seed=12)
    # when
    result = analyse(answers=answers, settings=LabelSettings())
    # then: recount every decision in plain Python
    labels = {(row.item_id, row.question): row for row in result.labels.itertuples(index=False)}
    in_play = {}
    for row in answers[answers["kind"] == "tags"].itertuples(index=False):
        in_play.setdefault(row.item_id, set()).update(t for t in row.answer.split("|") if t)
    expected = {}
    for row in answers.itertuples(index=False):
        label = labels[(row.item_id, row.question)]
        if row.kind == "ordinal" and label.status == "ok" and row.answer != "invalid":
            decisions, agreed = 1, int(int(row.answer) == label.value)
        elif row.kind == "tags":
            chosen = set(t for t in row.answer.split("|") if t)
            kept = set(t for t in label.value.split("|") if t)
            play = in_play[row.item_id]
            decisions = len(play)
            agreed = sum((t in chosen) == (t in kept) for t in play)
        else:
            continue
        if decisions:
            key = (row.rater_id, row.question)
            total = expected.setdefault(key, [0, 0])
            total[0] += decisions
            total[1] += agreed
    ours = {
        (r.rater_id, r.question): [r.decisions, r.agreed]
        for r in result.rater_agreement.itertuples(index=False)
    }
    assert ours == expected
    summary = result.summary_dict()["rater_agreement"]
    for rater, entry in summary.items():
        decisions = sum(v[0] for (r, _), v in expected.items() if r == rater)
        agreed = sum(v[1] for (r, _), v in expected.items() if r == rater)
        assert entry == {"decisions": decisions, "agreed": agreed, "share": agreed / decisions}
