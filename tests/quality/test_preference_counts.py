"""Pair counts, Wilson intervals (Newcombe 1998's worked values) and Krippendorff's
nominal alpha (the krippendorff package) of side-by-side judgments."""

import itertools

import krippendorff
import numpy as np
import pandas as pd
import pytest

from quality.stats.preference import (
    PAIR_COLUMNS,
    PreferenceSettings,
    analyse,
    encode_judgments,
    nominal_alpha,
    wilson_interval,
)
from quality.stats.preference.reliability import preference_alpha

COLUMNS = ["rater_id", "question", "content_id", "left", "right", "choice"]


def test_wilson_interval_matches_newcombe_1998_table_1():
    # given: Newcombe (1998), Table I, method 3 (score interval without continuity
    # correction), 95 %
    successes = np.array([81, 15, 0, 1])
    trials = np.array([263, 148, 20, 29])
    # when
    low, high = wilson_interval(successes=successes, trials=trials, confidence=0.95)
    # then
    np.testing.assert_allclose(low, [0.2553, 0.0624, 0.0, 0.0061], atol=5e-5)
    np.testing.assert_allclose(high, [0.3662, 0.1605, 0.1611, 0.1718], atol=5e-5)


def test_wilson_interval_is_nan_without_trials_and_symmetric_at_one_half():
    low, high = wilson_interval(successes=np.array([0, 10]), trials=np.array([0, 20]))
    assert np.isnan(low[0]) and np.isnan(high[0])
    assert low[1] + high[1] == pytest.approx(1.0, abs=1e-15)


def test_pair_table_counts_each_unordered_pair_whatever_the_side():
    # given: b vs a shown both ways; "equal" is a tie; ids sort as text
    frame = pd.DataFrame(
        [
            ("r1", "q", "c1", "b", "a", "left"),  # b preferred
            ("r1", "q", "c2", "a", "b", "left"),  # a preferred
            ("r2", "q", "c1", "a", "b", "right"),  # b preferred
            ("r2", "q", "c3", "b", "a", "equal"),
            ("r2", "q", "c3", "a", "c", "right"),  # c preferred
            ("r2", "other", "c3", "a", "c", "left"),  # a preferred, another question
        ],
        columns=COLUMNS,
    )
    # when
    pairs = analyse(frame, settings=PreferenceSettings(bootstrap=0, screen=False)).pairs
    # then
    assert list(pairs.columns) == [*PAIR_COLUMNS, "tie_share"]
    rows = {tuple(r[:3]): tuple(r[3:7]) for r in pairs.itertuples(index=False)}
    assert rows == {
        ("other", "a", "c"): (1, 1, 0, 0),
        ("q", "a", "b"): (4, 1, 2, 1),
        ("q", "a", "c"): (1, 0, 1, 0),
    }
    ab = pairs[(pairs["question"] == "q") & (pairs["condition_b"] == "b")].iloc[0]
    assert ab["win_rate_a"] == pytest.approx(1 / 3)
    low, high = wilson_interval(successes=np.array([1]), trials=np.array([3]))
    assert (ab["ci95_low"], ab["ci95_high"]) == (low[0], high[0])
    assert ab["tie_share"] == 0.25


def test_a_pair_with_only_ties_has_no_win_rate():
    frame = pd.DataFrame([("r1", "q", "c1", "a", "b", "equal")] * 3, columns=COLUMNS)
    pairs = analyse(frame, settings=PreferenceSettings(bootstrap=0, screen=False)).pairs
    row = pairs.iloc[0]
    assert (row["n"], row["ties"], row["tie_share"]) == (3, 3, 1.0)
    assert np.isnan(row["win_rate_a"]) and np.isnan(row["ci95_low"]) and np.isnan(row["ci95_high"])


def test_nominal_alpha_equals_the_krippendorff_package():
    # given: 6 raters x 40 units, each rater judging each unit at most once
    rng = np.random.default_rng(3)
    truth = rng.integers(0, 3, 40)
    data = np.where(rng.random((6, 40)) < 0.7, truth, rng.integers(0, 3, (6, 40))).astype(float)
    data[rng.random((6, 40)) < 0.3] = np.nan
    rater, unit = np.nonzero(~np.isnan(data))
    # when
    ours = nominal_alpha(units=unit, values=data[rater, unit].astype(int))
    # then
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert ours == pytest.approx(expected, abs=1e-12)


def test_preference_alpha_maps_sides_to_conditions_before_comparing():
    # given: 3 raters judge 5 trials; the placement differs by rater; the value is the
    # preferred condition (or equal)
    rng = np.random.default_rng(4)
    rows, matrix = [], np.full((3, 5), np.nan)
    for trial, (rater, a_first) in itertools.product(range(5), [(0, True), (1, False), (2, True)]):
        answer = int(rng.integers(0, 3))  # 0: x preferred, 1: y preferred, 2: equal
        if rng.random() < 0.2:
            continue
        left, right = ("x", "y") if a_first else ("y", "x")
        choice = ["equal", "left", "right"][
            0 if answer == 2 else 1 + int((answer == 0) != (left == "x"))
        ]
        rows.append((f"r{rater}", "q", f"c{trial}", left, right, choice))
        matrix[rater, trial] = answer
    table = encode_judgments(judgments=pd.DataFrame(rows, columns=COLUMNS))
    # when
    ours = preference_alpha(table=table)["q"]
    # then
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
    assert ours == pytest.approx(expected, abs=1e-12)


def test_alpha_is_nan_without_a_unit_judged_twice():
    assert np.isnan(nominal_alpha(units=np.array([0, 1, 2]), values=np.array([0, 1, 0])))
    assert np.isnan(nominal_alpha(units=np.array([0, 0]), values=np.array([1, 1])))
