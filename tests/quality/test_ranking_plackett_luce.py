"""Plackett-Luce strengths against choix (the oracle), ties against a likelihood written
here, the existence check and the prior."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize

from quality.stats.ranking import (
    choice_data,
    fit_plackett_luce,
    mle_exists,
    plackett_luce,
    rater_bootstrap_weights,
)

choix = pytest.importorskip("choix")


def sample_rankings(rng, strengths: np.ndarray, m: int) -> np.ndarray:
    """m Plackett-Luce rankings (Gumbel trick) as tie levels (0 = best)."""
    n = strengths.size
    orders = np.argsort(-(strengths + rng.gumbel(size=(m, n))), axis=1)
    return np.argsort(orders, axis=1)


def choix_strengths(level: np.ndarray, repeat: np.ndarray | None = None) -> np.ndarray:
    data = [tuple(np.argsort(row).tolist()) for row in level]
    if repeat is not None:
        data = [d for d, times in zip(data, repeat, strict=True) for _ in range(int(times))]
    params = choix.ilsr_rankings(level.shape[1], data, alpha=0.0, tol=1e-13, max_iter=10_000)
    return params - params.mean()


def fit_one_rater_each(level: np.ndarray, **options) -> np.ndarray:
    data = choice_data(level=level, rater=np.arange(len(level)), n_raters=len(level))
    return fit_plackett_luce(data, weights=np.ones((1, len(level))), **options).strength[0]


@pytest.mark.parametrize(("n", "m"), [(2, 9), (3, 15), (6, 30), (12, 200)])
def test_strengths_equal_choix_ilsr(n, m):
    # given
    rng = np.random.default_rng(n)
    level = sample_rankings(rng, rng.normal(0, 1, n), m)
    # when
    ours = fit_one_rater_each(level)
    # then
    np.testing.assert_allclose(ours, choix_strengths(level), atol=1e-6, rtol=0)
    assert abs(ours.mean()) < 1e-12


def test_strengths_equal_choix_opt_rankings_without_regularisation():
    rng = np.random.default_rng(5)
    level = sample_rankings(rng, np.array([1.0, 0.3, 0.0, -0.8]), 25)
    data = [tuple(np.argsort(row).tolist()) for row in level]
    params = choix.opt_rankings(4, data, alpha=0.0, tol=1e-12)
    np.testing.assert_allclose(fit_one_rater_each(level), params - params.mean(), atol=1e-6)


def test_bootstrap_replicates_equal_choix_on_the_same_rater_draws():
    # given: 8 raters with 3 rankings each; 5 bootstrap draws of the raters
    rng = np.random.default_rng(11)
    level = sample_rankings(rng, np.linspace(1, -1, 5), 24)
    rater = np.repeat(np.arange(8), 3)
    weights = rater_bootstrap_weights(n_raters=8, replicates=5, rng=rng)
    # when
    fit = fit_plackett_luce(choice_data(level=level, rater=rater, n_raters=8), weights=weights)
    # then: each replicate is choix on the drawn raters' rankings, a rater's all together
    for b in range(5):
        expected = choix_strengths(level, repeat=weights[b, rater])
        np.testing.assert_allclose(fit.strength[b], expected, atol=1e-6, rtol=0)
    assert not fit.prior_used.any()


def test_bootstrap_weights_draw_every_rater_count_with_replacement():
    weights = rater_bootstrap_weights(n_raters=7, replicates=2000, rng=np.random.default_rng(0))
    assert weights.shape == (2000, 7)
    assert (weights.sum(axis=1) == 7).all()
    # each count is Binomial(7, 1/7): mean 1, P(0) = (6/7)^7
    assert weights.mean() == pytest.approx(1.0, abs=0.02)
    assert (weights == 0).mean() == pytest.approx((6 / 7) ** 7, abs=0.02)


def test_a_tie_counts_as_both_members_chosen_from_the_same_set():
    # given: a>b twice, b>a once, a=b once. Breslow: the tie contributes
    # g_a g_b / (g_a + g_b)^2, so the likelihood is p^3 (1-p)^2 with p = g_a / (g_a + g_b)
    level = np.array([[0, 1], [0, 1], [1, 0], [0, 0]])
    # when
    strength = fit_one_rater_each(level)
    # then: p = 3/5, log(g_a / g_b) = log(3/2)
    np.testing.assert_allclose(strength, [np.log(1.5) / 2, -np.log(1.5) / 2], atol=1e-9)


def breslow_negative_log_likelihood(theta: np.ndarray, level: np.ndarray) -> float:
    """Written independently: stage by stage, each tied member chosen from what is left."""
    total = 0.0
    for ranking in level:
        groups = sorted(set(ranking.tolist()))
        for g in groups:
            chosen = np.flatnonzero(ranking == g)
            left = np.flatnonzero(ranking >= g)
            if len(left) == 1:
                continue
            total += theta[chosen].sum() - len(chosen) * np.log(np.exp(theta[left]).sum())
    return -total


def test_strengths_with_ties_maximise_the_breslow_likelihood():
    # given: rankings of 4 conditions with ties here and there
    rng = np.random.default_rng(4)
    level = np.minimum(sample_rankings(rng, np.array([1.0, 0.5, 0.0, -0.5]), 30), 2)
    level[::4, 1] = level[::4, 0]
    # when
    ours = fit_one_rater_each(level)
    # then: a general-purpose optimiser on the likelihood finds the same point
    found = optimize.minimize(
        breslow_negative_log_likelihood, np.zeros(4), args=(level,), method="BFGS", tol=1e-12
    )
    np.testing.assert_allclose(ours, found.x - found.x.mean(), atol=1e-5)
    assert breslow_negative_log_likelihood(ours, level) <= found.fun + 1e-9


def test_existence_needs_a_strongly_connected_comparison_graph():
    # given: a always first (no way back to a), and a mixed set
    always_first = np.array([[0, 1, 2], [0, 2, 1]])
    mixed = np.array([[0, 1, 2], [2, 0, 1], [1, 2, 0]])
    # then
    for level, exists in ((always_first, False), (mixed, True)):
        data = choice_data(level=level, rater=np.arange(len(level)), n_raters=len(level))
        assert mle_exists(data, weights=np.ones((1, len(level)))).tolist() == [exists]


def test_a_tie_links_its_members_both_ways():
    # given: a=b>c twice (a and b reach each other and c, but c reaches neither), and
    # c>a=b once (closes the loop)
    level = np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0]])
    data = choice_data(level=level, rater=np.arange(3), n_raters=3)
    # when: without, then with the third ranking
    exists = mle_exists(data, weights=np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]))
    # then
    assert exists.tolist() == [False, True]


def test_the_prior_keeps_an_always_first_condition_finite_and_first():
    # given: a always first, b and c mixed
    level = np.array([[0, 1, 2], [0, 2, 1], [0, 1, 2]])
    # when
    with_prior = fit_one_rater_each(level, prior_weight=0.5)
    without = fit_one_rater_each(level, prior_weight=0.0)
    # then
    assert np.isfinite(with_prior).all()
    assert with_prior[0] > with_prior[1] > with_prior[2]
    assert np.isnan(without).all()


def test_the_prior_is_not_used_where_the_estimate_exists():
    rng = np.random.default_rng(9)
    level = sample_rankings(rng, np.array([0.5, 0.0, -0.5]), 20)
    data = choice_data(level=level, rater=np.arange(20), n_raters=20)
    fit = fit_plackett_luce(data, weights=np.ones((1, 20)), prior_weight=3.0)
    assert not fit.prior_used[0]
    np.testing.assert_allclose(fit.strength[0], choix_strengths(level), atol=1e-6)


def test_replicates_fitted_in_chunks_give_the_same_strengths(monkeypatch):
    # given: a few raters, so that some replicates need the prior and some not
    rng = np.random.default_rng(13)
    level = sample_rankings(rng, np.linspace(3, -3, 5), 8)
    rater = np.repeat(np.arange(4), 2)
    data = choice_data(level=level, rater=rater, n_raters=4)
    weights = rater_bootstrap_weights(n_raters=4, replicates=40, rng=rng)
    whole = fit_plackett_luce(data, weights=weights)
    # when: about one replicate per chunk
    monkeypatch.setattr(plackett_luce, "_CHUNK_VALUES", data.sets.shape[0])
    chunked = fit_plackett_luce(data, weights=weights)
    # then
    assert 0 < whole.prior_used.sum() < 40
    np.testing.assert_allclose(chunked.strength, whole.strength, atol=1e-12)
    assert chunked.converged.all() and whole.converged.all()


def test_a_fit_stopped_before_the_tolerance_is_not_converged():
    rng = np.random.default_rng(14)
    level = sample_rankings(rng, np.linspace(1, -1, 5), 30)
    data = choice_data(level=level, rater=np.arange(30), n_raters=30)
    fit = fit_plackett_luce(data, weights=np.ones((1, 30)), max_iterations=2)
    assert fit.iterations == 2 and not fit.converged[0]
    assert np.isfinite(fit.strength).all()
