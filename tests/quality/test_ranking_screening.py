"""The random-ranker rule: taus to the leave-one-out consensus, z and p, testability."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from quality.stats.ranking import encode_rankings, rater_taus
from quality.stats.ranking.screening import leave_one_out_taus


def rankings_frame(level: np.ndarray, rater: list[str], prompt: list[str]) -> pd.DataFrame:
    """Rows of tie levels over conditions c0..c{n-1} as a rankings table."""
    texts = []
    for row in level:
        groups = [
            "=".join(f"c{c}" for c in np.flatnonzero(row == g)) for g in sorted(set(row.tolist()))
        ]
        texts.append(">".join(groups))
    return pd.DataFrame({"rater_id": rater, "question": "q", "prompt_id": prompt, "ranking": texts})


def brute_force_consensus(level: np.ndarray) -> list[tuple[int, ...]]:
    """Every order with the least number of pairs against the rankings."""
    n = level.shape[1]
    costs = {}
    for order in itertools.permutations(range(n)):
        place = np.argsort(order)
        costs[order] = sum(
            int((r[i] < r[j]) and place[i] > place[j]) + int((r[i] > r[j]) and place[i] < place[j])
            for r in level
            for i, j in itertools.combinations(range(n), 2)
        )
    best = min(costs.values())
    return [order for order, cost in costs.items() if cost == best]


def test_each_tau_is_scipys_tau_b_to_the_brute_force_consensus_of_the_others():
    # given: one prompt, 6 rankings of 5 conditions, some ties
    rng = np.random.default_rng(21)
    level = np.minimum(np.argsort(np.argsort(rng.random((6, 5)) + np.arange(5) * 0.3)), 3)
    rankings = encode_rankings(rankings_frame(level, [f"r{k}" for k in range(6)], ["p"] * 6))
    # when
    taus = leave_one_out_taus(rankings[0])
    # then
    checked = 0
    for k in range(6):
        optima = brute_force_consensus(np.delete(level, k, axis=0))
        if len(optima) > 1:
            continue  # the tie-break among optima is tested with kemeny
        place = np.argsort(optima[0])
        assert taus[k] == pytest.approx(stats.kendalltau(level[k], place).statistic)
        checked += 1
    assert checked >= 3


def test_a_single_prompt_p_value_is_scipys_one_sided_kendall_test():
    # given: 4 raters, 1 prompt of 8 conditions, one rater with ties
    rng = np.random.default_rng(5)
    level = np.argsort(np.argsort(rng.random((4, 8)) + np.arange(8) * 0.15, axis=1), axis=1)
    level[0] = np.minimum(level[0], 5)
    rankings = encode_rankings(rankings_frame(level, ["a", "b", "c", "d"], ["p"] * 4))[0]
    # when
    found = rater_taus(rankings, alpha=0.05)
    loo = leave_one_out_taus(rankings)
    # then: z = tau / sd0 is Kendall's asymptotic test against the consensus order
    for k in range(4):
        consensus = np.argsort(_loo_order(rankings, k))  # place of each condition
        expected = stats.kendalltau(
            level[k], consensus, method="asymptotic", alternative="greater"
        ).pvalue
        assert found.p_value[k] == pytest.approx(expected, rel=1e-9)
        assert found.mean_tau[k] == loo[k]
    assert found.n_prompts.tolist() == [1, 1, 1, 1]


def _loo_order(rankings, k):
    from quality.stats.ranking import kemeny_consensus, pairwise_wins
    from quality.stats.ranking.borda import borda_points

    others = np.delete(rankings.level, k, axis=0)
    borda = borda_points(others).sum(axis=0)
    preference = np.argsort(np.lexsort((np.arange(borda.size), -borda)))
    return kemeny_consensus(wins=pairwise_wins(others), preference=preference).order


def test_the_combined_z_sums_taus_over_their_null_sd():
    # given: 5 raters x 3 prompts of 6 conditions
    rng = np.random.default_rng(9)
    level = np.argsort(np.argsort(rng.random((15, 6)) + np.arange(6) * 0.2, axis=1), axis=1)
    rater = [f"r{k % 5}" for k in range(15)]
    prompt = [f"p{k // 5}" for k in range(15)]
    rankings = encode_rankings(rankings_frame(level, rater, prompt))[0]
    # when
    found = rater_taus(rankings, alpha=0.05)
    taus = leave_one_out_taus(rankings)
    # then: no ties, so var0 = 2(2n+5) / (9n(n-1)) per prompt (Kendall 1938)
    var0 = 2 * (2 * 6 + 5) / (9 * 6 * 5)
    for r in range(5):
        mine = taus[rankings.rater == r]
        assert found.mean_tau[r] == pytest.approx(mine.mean())
        assert found.z[r] == pytest.approx(mine.sum() / np.sqrt(3 * var0))
        assert found.p_value[r] == pytest.approx(stats.norm.sf(found.z[r]))


def test_random_raters_are_flagged_and_consistent_ones_not():
    # given: 12 raters order 8 conditions on 6 prompts close to a common order; raters
    # x0..x2 order them at random (each escapes the rule with probability alpha, so the
    # seed is fixed: with it none does)
    rng = np.random.default_rng(3)
    truth = np.linspace(2.0, -2.0, 8)
    rows, raters, prompts = [], [], []
    for rater in [f"h{k}" for k in range(12)] + ["x0", "x1", "x2"]:
        for p in range(6):
            noise = rng.gumbel(size=8)
            score = noise if rater.startswith("x") else truth + noise
            rows.append(np.argsort(np.argsort(-score)))
            raters.append(rater)
            prompts.append(f"p{p}")
    rankings = encode_rankings(rankings_frame(np.array(rows), raters, prompts))[0]
    # when
    found = rater_taus(rankings, alpha=0.05)
    # then
    flagged = {rankings.raters[r] for r in np.flatnonzero(found.flagged)}
    assert flagged == {"x0", "x1", "x2"}
    assert found.testable.all()


def test_a_rater_who_could_not_reach_significance_is_not_testable():
    # given: 3 conditions, one prompt: even tau = 1 has p = 0.059 > 0.05
    level = np.array([[0, 1, 2], [0, 1, 2], [2, 1, 0]])
    rankings = encode_rankings(rankings_frame(level, ["a", "b", "c"], ["p"] * 3))[0]
    # when
    found = rater_taus(rankings, alpha=0.05)
    # then: c disagrees completely, but the rule cannot tell
    # (a's consensus of b and c: every order ties, Borda ties too, so ids: a>b>c)
    assert found.mean_tau.tolist() == pytest.approx([1.0, 1.0, -1.0])
    assert not found.testable.any() and not found.flagged.any()


def test_prompts_with_a_single_ranking_give_no_tau():
    level = np.array([[0, 1, 2], [0, 1, 2], [2, 1, 0]])
    rankings = encode_rankings(rankings_frame(level, ["a", "b", "a"], ["p", "p", "solo"]))[0]
    found = rater_taus(rankings, alpha=0.05)
    assert found.n_prompts.tolist() == [1, 1]
