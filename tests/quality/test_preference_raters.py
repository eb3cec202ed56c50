"""Per-rater figures (position bias, agreement with the others' majority, circular
triads) against scipy's binomial test and brute-force counts, and the screening rule."""

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from quality.stats.preference import RATER_COLUMNS, PreferenceSettings, analyse
from quality.stats.preference.counts import pair_tensors
from quality.stats.preference.judgments import encode_judgments
from quality.stats.preference.raters import (
    binomial_two_sided_half,
    rater_figures,
    screen_raters,
)
from quality.stats.preference.synthetic import simulate_judgments

COLUMNS = ["rater_id", "question", "content_id", "left", "right", "choice"]


def figures_of(frame: pd.DataFrame) -> pd.DataFrame:
    table = encode_judgments(judgments=frame)
    return rater_figures(table=table, tensors=pair_tensors(table=table)).set_index("rater_id")


@pytest.mark.parametrize(("k", "n"), [(0, 5), (3, 10), (7, 10), (20, 25), (12, 24), (1, 1)])
def test_the_position_p_value_is_scipy_s_exact_two_sided_binomial_test(k, n):
    ours = binomial_two_sided_half(successes=np.array([k]), trials=np.array([n]))[0]
    assert ours == pytest.approx(binomtest(k, n, 0.5).pvalue, rel=1e-12)


def test_position_bias_counts_left_picks_among_decisive_answers():
    # given: 3 left, 1 right, 2 equal
    choices = ["left", "left", "right", "equal", "left", "equal"]
    frame = pd.DataFrame(
        [("r", "q", f"c{i}", "a", "b", c) for i, c in enumerate(choices)], columns=COLUMNS
    )
    # when
    rater = figures_of(frame).loc["r"]
    # then
    assert (rater["n"], rater["n_decisive"], rater["left_share"]) == (6, 4, 0.75)
    assert rater["position_p_value"] == pytest.approx(binomtest(3, 4, 0.5).pvalue)


def test_agreement_is_with_the_other_raters_majority_on_the_same_pair():
    # given: on (a, b) r1 and r2 prefer a, r3 prefers b twice; on (a, c) the others of r1
    # are split, so r1's (a, c) judgment does not count
    rows = [
        ("r1", "q", "c1", "a", "b", "left"),  # a
        ("r2", "q", "c2", "b", "a", "right"),  # a
        ("r3", "q", "c3", "a", "b", "right"),  # b
        ("r3", "q", "c4", "b", "a", "left"),  # b
        ("r1", "q", "c5", "a", "c", "left"),  # a
        ("r2", "q", "c5", "a", "c", "left"),  # a
        ("r3", "q", "c5", "c", "a", "left"),  # c
        ("r3", "q", "c6", "a", "c", "equal"),
    ]
    # when
    figures = figures_of(pd.DataFrame(rows, columns=COLUMNS))
    # then: r1 vs (r2, r3) on ab: 1 a vs 2 b -> disagrees; ac: 1 a vs 1 c -> not counted
    assert (figures.loc["r1", "agreement"], figures.loc["r1", "agreement_n"]) == (0.0, 1)
    # r2 vs (r1, r3): ab 1 a vs 2 b -> disagrees; ac: 1 a vs 1 c -> not counted
    assert (figures.loc["r2", "agreement"], figures.loc["r2", "agreement_n"]) == (0.0, 1)
    # r3 vs (r1, r2): ab 2 a -> both b disagree; ac 2 a -> c disagrees (equal not counted)
    assert (figures.loc["r3", "agreement"], figures.loc["r3", "agreement_n"]) == (0.0, 3)
    assert figures.loc["r3", "agreement_p_value"] == pytest.approx(0.125)


def brute_force_circular_triads(preferences: dict[tuple[str, str], str]) -> tuple[int, int]:
    """(circular, fully directed) triads of one rater's majority per pair."""
    beats = set()
    for (a, b), winner in preferences.items():
        if winner is not None:
            beats.add((winner, b if winner == a else a))
    conditions = sorted({c for pair in preferences for c in pair})
    circular = directed = 0
    for x, y, z in itertools.combinations(conditions, 3):
        edges = [(x, y), (y, z), (x, z)]
        if all((p, q) in beats or (q, p) in beats for p, q in edges):
            directed += 1
            if {(x, y), (y, z), (z, x)} <= beats or {(y, x), (z, y), (x, z)} <= beats:
                circular += 1
    return circular, directed


@pytest.mark.parametrize("seed", range(4))
def test_circular_triads_equal_a_brute_force_count(seed):
    # given: one rater, 7 conditions, 0-3 judgments per pair, random answers
    rng = np.random.default_rng(seed)
    conditions = [f"m{i}" for i in range(7)]
    rows, majority = [], {}
    for a, b in itertools.combinations(conditions, 2):
        wins = {a: 0, b: 0}
        for i in range(int(rng.integers(0, 4))):
            choice = str(rng.choice(["left", "right", "equal"]))
            left, right = (a, b) if rng.random() < 0.5 else (b, a)
            rows.append(("r", "q", f"c{a}{b}{i}", left, right, choice))
            if choice != "equal":
                wins[left if choice == "left" else right] += 1
        if wins[a] != wins[b]:
            majority[(a, b)] = a if wins[a] > wins[b] else b
        else:
            majority[(a, b)] = None
    # when
    rater = figures_of(pd.DataFrame(rows, columns=COLUMNS)).loc["r"]
    # then
    assert (rater["circular_triads"], rater["triads"]) == brute_force_circular_triads(majority)


def test_a_perfect_cycle_is_one_circular_triad_per_question():
    rows = [
        ("r", q, "c", left, right, "left")
        for q in ("q1", "q2")
        for left, right in (("a", "b"), ("b", "c"), ("c", "a"))
    ]
    rater = figures_of(pd.DataFrame(rows, columns=COLUMNS)).loc["r"]
    assert (rater["circular_triads"], rater["triads"]) == (2, 2)


def test_screening_excludes_a_left_clicker_and_a_contrarian_with_their_figures():
    # given: 6 honest raters, one who always clicks left, one who reverses every answer
    frame = simulate_judgments(
        strengths=[0.0, 1.5, 3.0, 4.5], raters=8, per_pair=12, tie_share=0.1, seed=5
    )
    left_clicker = frame["rater_id"] == "r006"
    frame.loc[left_clicker, "choice"] = "left"
    contrarian = (frame["rater_id"] == "r007") & (frame["choice"] != "equal")
    frame.loc[contrarian, "choice"] = frame.loc[contrarian, "choice"].map(
        {"left": "right", "right": "left"}
    )
    # when
    result = analyse(frame, settings=PreferenceSettings(bootstrap=10))
    # then
    rules = {(e["rater_id"], e["rule"]) for e in result.exclusions}
    assert rules == {("r006", "position_bias"), ("r007", "disagrees_with_majority")}
    left = next(e for e in result.exclusions if e["rule"] == "position_bias")
    assert (left["share"], left["n"]) == (1.0, 72)
    assert left["p_value"] == pytest.approx(binomtest(72, 72, 0.5).pvalue)
    assert list(result.raters.columns) == [*RATER_COLUMNS, "excluded"]
    assert result.raters.set_index("rater_id")["excluded"].to_dict() == {
        f"r{i:03d}": i >= 6 for i in range(8)
    }
    assert result.n_judgments_kept == 6 * 6 * 12
    assert result.pairs["n"].sum() == 6 * 6 * 12  # the pairs are of the kept raters only


def test_screening_off_keeps_everyone_and_a_rule_needs_enough_answers():
    frame = simulate_judgments(strengths=[0.0, 1.0], raters=3, per_pair=19, seed=1)
    frame.loc[frame["rater_id"] == "r000", "choice"] = "left"  # 19 answers: below 20
    figures = figures_of(frame).reset_index()
    assert screen_raters(figures=figures, p_value=0.001, min_answers=20) == []
    assert [e["rater_id"] for e in screen_raters(figures=figures, min_answers=19)] == ["r000"]
    result = analyse(frame, settings=PreferenceSettings(bootstrap=0, screen=False))
    assert result.exclusions == [] and not result.raters["excluded"].any()
