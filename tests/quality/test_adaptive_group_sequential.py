"""Group-sequential boundaries against published values and a Brownian-motion simulation;
the plan's repeated t-intervals."""

import math

import numpy as np
import pytest
from scipy import stats

from quality.stats.adaptive.group_sequential import (
    GroupSequentialPlan,
    boundaries,
    spent_alpha,
)

FIVE_EQUAL_LOOKS = np.arange(1, 6) / 5


@pytest.mark.parametrize(
    ("spending", "published"),
    [
        # Two-sided alpha = 0.05, five equally spaced looks: the widely published values
        # of the two Lan-DeMets spending functions (as the R packages ldbounds and gsDesign
        # print them, to 4 decimals).
        ("obrien_fleming", [4.8769, 3.3569, 2.6803, 2.2898, 2.0310]),
        ("pocock", [2.4380, 2.4268, 2.4101, 2.3966, 2.3859]),
    ],
)
def test_boundaries_match_the_published_values(spending, published):
    # when
    ours = boundaries(fractions=FIVE_EQUAL_LOOKS, alpha=0.05, spending=spending)
    # then
    np.testing.assert_allclose(ours, published, atol=2e-4)


def test_a_single_look_is_the_fixed_sample_normal_quantile():
    assert boundaries(fractions=[1.0], alpha=0.05)[0] == pytest.approx(stats.norm.ppf(0.975))


@pytest.mark.parametrize("spending", ["obrien_fleming", "pocock", "power"])
def test_simulated_brownian_motion_crosses_as_much_as_was_spent(spending):
    # given: unequal looks, and 400,000 simulated standardised running means
    fractions = np.array([10, 15, 25, 35]) / 35
    c = boundaries(fractions=fractions, alpha=0.05, spending=spending)
    rng = np.random.default_rng(2)
    increments = rng.standard_normal((400_000, 4)) * np.sqrt(np.diff(fractions, prepend=0))
    z = np.cumsum(increments, axis=1) / np.sqrt(fractions)
    # when
    crossed_by = np.cumsum(np.abs(z) >= c, axis=1) > 0
    # then: P(crossed by look k) = a(f_k), within 4 Monte Carlo standard errors
    target = spent_alpha(fractions, alpha=0.05, spending=spending)
    observed = crossed_by.mean(axis=0)
    se = np.sqrt(target * (1 - target) / z.shape[0])
    assert np.all(np.abs(observed - target) <= 4 * se + 1e-6)
    assert observed[-1] == pytest.approx(0.05, abs=0.002)


def test_the_interval_changes_only_at_looks_with_the_t_multiplier():
    # given
    plan = GroupSequentialPlan(looks=(5, 8, 12), alpha=0.05, spending="pocock")
    rng = np.random.default_rng(0)
    scores = rng.uniform(20, 80, size=12)
    c = boundaries(fractions=np.array([5, 8, 12]) / 12, alpha=0.05, spending="pocock")
    # when
    state = plan.start()
    seen = []
    for score in scores:
        state = plan.update(state, score=score)
        seen.append(plan.interval(state))
    # then: whole scale before the first look, then x_k -+ t^{-1}(Phi(c_k)) s_k / sqrt(n_k)
    assert all((s.lower, s.upper) == (0.0, 100.0) for s in seen[:4])
    for k, look in enumerate((5, 8, 12)):
        head = scores[:look]
        multiplier = stats.t.ppf(stats.norm.cdf(c[k]), look - 1)
        half = multiplier * head.std(ddof=1) / math.sqrt(look)
        assert seen[look - 1].lower == pytest.approx(head.mean() - half, abs=1e-9)
        assert seen[look - 1].upper == pytest.approx(head.mean() + half, abs=1e-9)
    assert (seen[6].lower, seen[6].upper) == (seen[4].lower, seen[4].upper)
    assert [s.final for s in seen] == [False] * 11 + [True]
    assert seen[6].mean == pytest.approx(scores[:7].mean())


def test_the_interval_is_clipped_to_the_scale():
    plan = GroupSequentialPlan(looks=(3,), low=1, high=5)
    interval = plan.interval(plan.replay(scores=[5, 5, 4]))
    assert interval.upper == 5.0 and interval.lower < 4.67


@pytest.mark.parametrize(
    "looks", [(), (1, 5), (5, 5), (10, 8)], ids=["none", "first<2", "repeat", "decreasing"]
)
def test_bad_looks_are_refused(looks):
    with pytest.raises(ValueError, match="looks"):
        GroupSequentialPlan(looks=looks)


def test_an_unknown_spending_function_is_refused():
    with pytest.raises(ValueError, match="unknown spending"):
        GroupSequentialPlan(spending="haybittle")
