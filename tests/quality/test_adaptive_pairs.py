"""Thurstone scale with ties and active pair choice: the MAP fit against a direct numerical
optimisation, the information gain against a Monte Carlo estimate of the mutual
information, and the rater constraints of a batch."""

import math
from collections import Counter

import numpy as np
import pytest
from scipy import optimize, stats

from quality.stats.adaptive.pairs import (
    CRITERIA,
    all_pairs,
    choose_pairs,
    expected_fisher_information,
    information_gain,
    variance_reduction,
    with_pending,
)
from quality.stats.adaptive.scaling import fit_scale, outcome_probabilities


def simulated_judgments(seed=0, size=8, repeats=5, tau=0.4):
    rng = np.random.default_rng(seed)
    scale = rng.uniform(0, 3, size)
    first, second = np.triu_indices(size, 1)
    left, right = np.tile(first, repeats), np.tile(second, repeats)
    flip = rng.random(left.size) < 0.5
    left, right = np.where(flip, right, left), np.where(flip, left, right)
    p = outcome_probabilities(scale[left] - scale[right], tau)
    u = rng.random(left.size)
    outcome = np.where(u < p[:, 0], 1, np.where(u < p[:, 0] + p[:, 1], 0, -1))
    return scale, left, right, outcome


def test_the_fit_is_the_maximum_a_posteriori_of_the_glenn_david_model():
    # given
    _, left, right, outcome = simulated_judgments()
    size = 8

    def negative_log_posterior(params):  # straight from the model, with scipy's normal
        s, tau = params[:-1], params[-1]
        d = s[left] - s[right]
        p = np.where(
            outcome > 0,
            stats.norm.cdf(d - tau),
            np.where(
                outcome < 0,
                stats.norm.cdf(-d - tau),
                stats.norm.cdf(d + tau) - stats.norm.cdf(d - tau),
            ),
        )
        return -np.log(p).sum() + 0.5 * s @ s / 9.0

    # when
    ours = fit_scale(n_conditions=size, left=left, right=right, outcome=outcome, prior_sd=3.0)
    direct = optimize.minimize(
        negative_log_posterior,
        np.r_[np.zeros(size), 0.5],
        method="L-BFGS-B",
        bounds=[(None, None)] * size + [(1e-3, 5)],
        options={"ftol": 1e-15, "gtol": 1e-10, "maxiter": 5000},
    )
    # then
    np.testing.assert_allclose(ours.mean, direct.x[:-1], atol=1e-4)
    assert ours.tie_band == pytest.approx(direct.x[-1], abs=1e-4)
    hessian = optimize.approx_fprime(
        ours.mean,
        lambda s: optimize.approx_fprime(
            s, lambda t: negative_log_posterior(np.r_[t, ours.tie_band]), 1e-6
        ),
        1e-4,
    )
    np.testing.assert_allclose(np.linalg.inv(ours.covariance), hessian, atol=2e-3, rtol=1e-3)


@pytest.mark.parametrize(("mean", "variance", "tau"), [(0.0, 1.0, 0.3), (1.2, 0.5, 0.6)])
def test_information_gain_is_the_mutual_information_of_outcome_and_difference(mean, variance, tau):
    # given: Monte Carlo I(y; d) = E[log p(y | d) - log p(y)] with d ~ N(mean, variance)
    rng = np.random.default_rng(0)
    d = rng.normal(mean, math.sqrt(variance), 400_000)
    p = outcome_probabilities(d, tau)
    y = (rng.random(d.size)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    marginal = p.mean(axis=0)
    monte_carlo = np.mean(np.log(p[np.arange(d.size), y]) - np.log(marginal[y]))
    # when
    ours = information_gain(
        mean_difference=np.array([mean]), variance=np.array([variance]), tie_band=tau
    )[0]
    # then
    assert ours == pytest.approx(monte_carlo, abs=0.004)


def test_a_batch_respects_the_repeat_limit_and_balances_left_and_right():
    # given: 6 conditions (15 pairs), 4 raters, each already shown pair (0, 1) once
    _, left, right, outcome = simulated_judgments(size=6, repeats=2)
    posterior = fit_scale(n_conditions=6, left=left, right=right, outcome=outcome)
    history = [(r, 0, 1) for r in range(4)]
    # when: each rater asks for 20 pairs with at most one showing of each pair
    chosen = choose_pairs(
        posterior=posterior, requests={r: 20 for r in range(4)}, history=history, seed=3
    )
    # then: 14 new pairs each (15 minus the one seen), none repeated, (0, 1) not again
    for rater in range(4):
        mine = [(c.left, c.right) for c in chosen if c.rater == rater]
        unordered = Counter(tuple(sorted(pair)) for pair in mine)
        assert len(mine) == 14 and max(unordered.values()) == 1
        assert (0, 1) not in unordered
        # every condition shown on the left and on the right about equally often
        sides = Counter()
        for a, b in [(0, 1), *mine]:
            sides[a] += 1
            sides[b] -= 1
        assert max(abs(v) for v in sides.values()) <= 1


@pytest.mark.parametrize("criterion", CRITERIA)
def test_a_batch_spreads_over_conditions_instead_of_repeating_the_best_pair(criterion):
    # given: no judgment yet, 10 raters asking for 2 pairs each
    posterior = fit_scale(n_conditions=12, left=[], right=[], outcome=[])
    # when
    chosen = choose_pairs(
        posterior=posterior, requests={r: 2 for r in range(10)}, seed=1, criterion=criterion
    )
    # then: 20 distinct pairs, every condition in at least one
    pairs = {tuple(sorted((c.left, c.right))) for c in chosen}
    assert len(chosen) == 20 and len(pairs) == 20
    assert {i for pair in pairs for i in pair} == set(range(12))


def test_bad_judgments_are_refused():
    with pytest.raises(ValueError, match="itself"):
        fit_scale(n_conditions=3, left=[0], right=[0], outcome=[1])
    with pytest.raises(ValueError, match="outcome"):
        fit_scale(n_conditions=3, left=[0], right=[1], outcome=[2])
    with pytest.raises(ValueError, match="out of range"):
        fit_scale(n_conditions=3, left=[0], right=[3], outcome=[1])


def test_pending_pairs_add_their_expected_information_to_the_precision():
    # given: a fitted posterior and two pairs in flight, (0, 1) twice and (2, 3)
    _, left, right, outcome = simulated_judgments(size=5, repeats=2)
    posterior = fit_scale(n_conditions=5, left=left, right=right, outcome=outcome)
    pending = [(0, 1), (2, 3), (0, 1)]
    # when
    ours = with_pending(posterior, pending)
    # then: the precision gains w a a^T per pair (the Laplace update, by inverses), with
    # w the expected Fisher information at the variance left by the pairs before it
    precision = np.linalg.inv(posterior.covariance)
    for i, j in pending:
        a = np.zeros(5)
        a[i], a[j] = 1.0, -1.0
        variance = a @ np.linalg.inv(precision) @ a
        w = expected_fisher_information(
            mean_difference=np.array([posterior.mean[i] - posterior.mean[j]]),
            variance=np.array([variance]),
            tie_band=posterior.tie_band,
        )[0]
        precision = precision + w * np.outer(a, a)
    np.testing.assert_allclose(ours.covariance, np.linalg.inv(precision), atol=1e-10)
    np.testing.assert_array_equal(ours.mean, posterior.mean)
    assert ours.covariance[0, 0] < posterior.covariance[0, 0]


def test_variance_reduction_is_the_drop_of_the_posteriors_trace_by_inverses():
    # given: a fitted posterior of 6 conditions
    _, left, right, outcome = simulated_judgments(size=6, repeats=2)
    posterior = fit_scale(n_conditions=6, left=left, right=right, outcome=outcome)
    first, second = all_pairs(6)
    # when
    ours = variance_reduction(
        mean=posterior.mean,
        covariance=posterior.covariance,
        first=first,
        second=second,
        tie_band=posterior.tie_band,
    )
    # then: tr(Sigma) - tr((Sigma^-1 + w a a^T)^-1), the precision gaining the judgment's
    # expected Fisher information, computed by matrix inverses
    precision = np.linalg.inv(posterior.covariance)
    for k, (i, j) in enumerate(zip(first, second, strict=True)):
        a = np.zeros(6)
        a[i], a[j] = 1.0, -1.0
        w = expected_fisher_information(
            mean_difference=np.array([posterior.mean[i] - posterior.mean[j]]),
            variance=np.array([a @ posterior.covariance @ a]),
            tie_band=posterior.tie_band,
        )[0]
        after = np.linalg.inv(precision + w * np.outer(a, a))
        assert ours[k] == pytest.approx(np.trace(posterior.covariance) - np.trace(after), rel=1e-9)
    # and: every judgment is expected to take some variance away
    assert ours.min() > 0


def test_an_unknown_criterion_is_refused():
    posterior = fit_scale(n_conditions=3, left=[], right=[], outcome=[])
    with pytest.raises(ValueError, match="criterion must be one of variance, information"):
        choose_pairs(posterior=posterior, requests={"r": 1}, criterion="entropy")
