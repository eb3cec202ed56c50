"""Kendall's W against worked textbook examples and scipy's Friedman test; tau-b and rho
against scipy.stats."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from quality.stats.ranking import kendall_tau_b, kendall_w, spearman_rho, tau_b_null_variance


def levels_from_scores(scores: list[list[float]]) -> np.ndarray:
    """Tie levels (0 = best = lowest score) of each row of scores."""
    return np.array([np.unique(row, return_inverse=True)[1] for row in scores])


def test_kendall_w_with_ties_matches_siegel_worked_example():
    # given: Siegel (1956), Nonparametric Statistics for the Behavioral Sciences, the
    # Kendall W example with tied ranks, as reproduced by the NAG Library's G08DAF example
    # (3 comparisons of 10 objects): W = 0.828, significance 0.008
    scores = [
        [1.0, 4.5, 2.0, 4.5, 3.0, 7.5, 6.0, 9.0, 7.5, 10.0],
        [2.5, 1.0, 2.5, 4.5, 4.5, 8.0, 9.0, 6.5, 10.0, 6.5],
        [2.0, 1.0, 4.5, 4.5, 4.5, 4.5, 8.0, 8.0, 8.0, 10.0],
    ]
    # when
    found = kendall_w(levels_from_scores(scores))
    # then
    assert round(found.w, 3) == 0.828
    assert round(found.p_value, 3) == 0.008
    assert found.df == 9 and found.n_rankings == 3 and found.n_conditions == 10
    assert found.chi2 == pytest.approx(3 * 9 * found.w)


def test_kendall_w_without_ties_matches_proofwiki_example():
    # given: ProofWiki, "Kendall's Coefficient of Concordance/Examples/Arbitrary Example 1":
    # 4 judges rank competitors X, Y, Z: (1,3,2), (1,2,3), (2,3,1), (3,1,2); W = 1/16
    ranks = np.array([[1, 3, 2], [1, 2, 3], [2, 3, 1], [3, 1, 2]])
    # when
    found = kendall_w(ranks - 1)
    # then
    assert found.w == pytest.approx(1 / 16, abs=1e-15)


def test_chi_square_is_the_tie_corrected_friedman_statistic():
    # given: 7 rankings of 6 conditions with many ties
    rng = np.random.default_rng(2)
    level = rng.integers(0, 4, size=(7, 6))
    # when
    found = kendall_w(level)
    # then: scipy's Friedman test (conditions as treatments, rankings as blocks)
    friedman = stats.friedmanchisquare(*level.T)
    assert found.chi2 == pytest.approx(friedman.statistic, rel=1e-12)
    assert found.p_value == pytest.approx(friedman.pvalue, rel=1e-10)


def test_perfect_agreement_gives_one_and_a_single_ranking_nan():
    assert kendall_w(np.array([[0, 1, 2, 3]] * 5)).w == pytest.approx(1.0)
    assert np.isnan(kendall_w(np.array([[0, 1, 2, 3]])).w)
    assert np.isnan(kendall_w(np.zeros((4, 3), dtype=int)).w)  # everything tied


def test_tau_b_and_rho_equal_scipy_with_ties():
    rng = np.random.default_rng(6)
    for _ in range(30):
        # given
        n = int(rng.integers(3, 13))
        x, y = rng.integers(0, n // 2 + 2, size=(2, n)).astype(float)
        if np.ptp(x) == 0 or np.ptp(y) == 0:
            continue
        # when / then
        assert kendall_tau_b(x, y) == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)
        assert spearman_rho(x, y) == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)


def test_tau_b_rows_at_once():
    rng = np.random.default_rng(7)
    x, y = rng.integers(0, 5, size=(2, 20, 8))
    batch = kendall_tau_b(x, y)
    assert batch.shape == (20,)
    for k in range(20):
        assert batch[k] == pytest.approx(stats.kendalltau(x[k], y[k]).statistic, abs=1e-12)


def test_null_variance_is_the_one_behind_scipys_asymptotic_p_value():
    # given: a ranking with ties against a strict one
    rng = np.random.default_rng(12)
    for _ in range(20):
        level = rng.integers(0, 5, size=9)
        strict = rng.permutation(9)
        # when
        tau = kendall_tau_b(level, strict)
        variance = tau_b_null_variance(level[None])[0]
        # then
        expected = stats.kendalltau(level, strict, method="asymptotic").pvalue
        assert 2 * stats.norm.sf(abs(tau) / np.sqrt(variance)) == pytest.approx(expected)
