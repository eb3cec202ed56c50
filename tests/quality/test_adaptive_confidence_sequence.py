"""The betting confidence sequence (Waudby-Smith & Ramdas 2023) against a brute-force
evaluation of the paper's capital process written here (plain loops, exact bisection in
m, no grid), and its anytime coverage by simulation."""

import math

import numpy as np
import pytest

from quality.stats.adaptive.confidence_sequence import AnytimeConfidenceSequence, sequence

ALPHA = 0.05


def paper_log_capitals(y: list[float], m: float, *, alpha: float, c: float = 0.5):
    """log K+_t(m), log K-_t(m) for t = 1..n, straight from the paper's definitions."""
    total = squares = 0.0
    log_plus = log_minus = 0.0
    plus, minus = [], []
    for t, value in enumerate(y, start=1):
        variance_before = (0.25 + squares) / t
        bet = math.sqrt(2 * math.log(2 / alpha) / (variance_before * t * math.log(1 + t)))
        bet_plus = bet if m == 0 else min(bet, c / m)
        bet_minus = bet if m == 1 else min(bet, c / (1 - m))
        log_plus += math.log(1 + bet_plus * (value - m))
        log_minus += math.log(1 - bet_minus * (value - m))
        plus.append(log_plus)
        minus.append(log_minus)
        total += value
        squares += (value - (0.5 + total) / (t + 1)) ** 2
    return plus, minus


def exact_interval(y: list[float], t: int, *, alpha: float) -> tuple[float, float]:
    """(L_t, U_t) of the hedged CS at time t (1-based), by bisection in m to 1e-9."""
    threshold = math.log(2 / alpha)  # theta K >= 1/alpha with theta = 1/2

    def rejected_below(m):
        return paper_log_capitals(y[:t], m, alpha=alpha)[0][-1] >= threshold

    def rejected_above(m):
        return paper_log_capitals(y[:t], m, alpha=alpha)[1][-1] >= threshold

    bounds = []
    for rejected, start in ((rejected_below, 0.0), (rejected_above, 1.0)):
        if not rejected(start):
            bounds.append(start)
            continue
        inside, outside = (1.0 - start), start  # rejected at `outside`, kept at `inside`
        while abs(inside - outside) > 1e-9:
            middle = (inside + outside) / 2
            if rejected(middle):
                outside = middle
            else:
                inside = middle
        bounds.append(outside)
    return bounds[0], bounds[1]


@pytest.mark.parametrize("seed", [0, 1])
def test_the_sequence_contains_the_exact_interval_and_is_at_most_one_grid_step_wider(seed):
    # given: skewed scores on a 0-100 slider
    rng = np.random.default_rng(seed)
    scores = np.round(100 * rng.beta(0.8, 2.5, size=30), 1)
    plan = AnytimeConfidenceSequence(alpha=ALPHA, grid_size=501)
    y = list(scores / 100)
    # when
    result = plan.sequence(scores)
    # then: exact running intersection within [ours, ours + one grid step] at each end
    exact = [exact_interval(y, t, alpha=ALPHA) for t in range(1, 31)]
    exact_lower = np.maximum.accumulate([100 * lo for lo, _ in exact])
    exact_upper = np.minimum.accumulate([100 * hi for _, hi in exact])
    step = plan.grid_step
    assert np.all(result.lower <= exact_lower + 1e-9)
    assert np.all(exact_lower <= result.lower + step + 1e-9)
    assert np.all(result.upper >= exact_upper - 1e-9)
    assert np.all(exact_upper >= result.upper - step - 1e-9)
    np.testing.assert_allclose(result.mean, np.cumsum(scores) / np.arange(1, 31))
    np.testing.assert_array_equal(result.n, np.arange(1, 31))
    assert result.upper[-1] - result.lower[-1] < 60  # it did learn something


def test_one_score_at_a_time_gives_the_whole_sequence():
    # given
    rng = np.random.default_rng(4)
    scores = rng.uniform(1, 5, size=25)
    plan = AnytimeConfidenceSequence(alpha=0.1, low=1, high=5, grid_size=301)
    # when
    batch = plan.sequence(scores)
    state = plan.start()
    steps = []
    for score in scores:
        state = plan.update(state, score=score)
        steps.append(plan.interval(state))
    # then
    assert [s.n for s in steps] == list(range(1, 26))
    np.testing.assert_allclose([s.lower for s in steps], batch.lower, atol=1e-12)
    np.testing.assert_allclose([s.upper for s in steps], batch.upper, atol=1e-12)
    np.testing.assert_allclose([s.mean for s in steps], batch.mean, atol=1e-12)
    assert plan.interval(plan.replay(scores=scores)) == steps[-1]


def test_the_module_function_is_the_plan_with_its_settings():
    scores = [20.0, 80.0, 55.0, 61.0]
    ours = sequence(scores, alpha=0.2, low=0, high=100, grid_size=201)
    plan = AnytimeConfidenceSequence(alpha=0.2, grid_size=201).sequence(scores)
    np.testing.assert_array_equal(ours.lower, plan.lower)
    np.testing.assert_array_equal(ours.upper, plan.upper)


def test_before_any_score_the_interval_is_the_whole_scale():
    plan = AnytimeConfidenceSequence(low=-3, high=3)
    interval = plan.interval(plan.start())
    assert (interval.n, interval.lower, interval.upper) == (0, -3.0, 3.0)
    assert math.isnan(interval.mean)


def test_the_mean_stays_inside_at_every_time_at_once_for_the_worst_bounded_law():
    # given: scores only at the two ends (the largest variance a bounded law can have),
    # 600 studies of 150 ratings, looked at after every rating
    rng = np.random.default_rng(11)
    plan = AnytimeConfidenceSequence(alpha=ALPHA, grid_size=201)
    studies, length, p = 600, 150, 0.3
    state = plan.start_many(shape=(studies,))
    ever_missed = np.zeros(studies, dtype=bool)
    rows = np.arange(studies)
    # when
    for _ in range(length):
        plan.update_rows(state, rows=rows, scores=100.0 * (rng.random(studies) < p))
        _, _, lower, upper = plan.bounds(state)
        ever_missed |= (lower > 100 * p) | (upper < 100 * p)
    # then: P(the mean ever leaves) <= alpha, within 3 Monte Carlo standard errors
    se = math.sqrt(ALPHA * (1 - ALPHA) / studies)
    assert ever_missed.mean() <= ALPHA + 3 * se


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"alpha": 0.0}, "alpha"),
        ({"alpha": 1.0}, "alpha"),
        ({"low": 5.0, "high": 5.0}, "low < high"),
        ({"grid_size": 2}, "grid_size"),
        ({"truncation": 1.0}, "truncation"),
    ],
)
def test_bad_settings_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        AnytimeConfidenceSequence(**kwargs)


@pytest.mark.parametrize("bad", [-0.1, 100.5, float("nan"), float("inf")])
def test_a_score_outside_the_scale_is_refused(bad):
    plan = AnytimeConfidenceSequence()
    with pytest.raises(ValueError, match="outside the scale"):
        plan.update(plan.start(), score=bad)
    with pytest.raises(ValueError, match="outside the scale"):
        plan.sequence([50.0, bad])
