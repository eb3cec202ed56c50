"""Stein's two-stage plan: it stops at Stein's N (computed here from scipy's t quantile),
its interval covers the mean at the nominal rate under normal scores whatever N the first
stage chose, and its batch form equals its one-video form."""

import math

import numpy as np
import pytest
from scipy import stats

from quality.stats.adaptive.simulate import coverage_at_stop
from quality.stats.adaptive.stopping import StoppingRule, decide, make_plan
from quality.stats.adaptive.two_stage import TwoStagePlan


def stop_at(plan: TwoStagePlan, rule: StoppingRule, scores: np.ndarray) -> int:
    state = plan.start()
    for n, score in enumerate(scores, start=1):
        state = plan.update(state, score=score)
        if decide(rule=rule, intervals={"d": plan.interval(state)}).stop:
            return n
    raise AssertionError("never stopped")


@pytest.mark.parametrize(("first_stage", "spread"), [(10, 12.0), (15, 25.0), (5, 4.0)])
def test_a_video_stops_at_steins_sample_size(first_stage, spread):
    # given: scores of one video; Stein's N from the first stage's SD (scipy's quantile)
    rng = np.random.default_rng(first_stage)
    scores = np.clip(rng.normal(50, spread, 400), 0, 100)
    target = 6.0
    s0 = scores[:first_stage].std(ddof=1)
    quantile = stats.t.ppf(0.975, first_stage - 1)
    stein = max(first_stage, math.ceil((quantile * s0 / target) ** 2))
    plan = TwoStagePlan(first_stage=first_stage)
    rule = StoppingRule(target_half_width=target, min_ratings=first_stage, max_ratings=400)
    # when / then
    assert stop_at(plan, rule, scores) == stein
    # and the interval then is the mean of all N scores -+ t s0 / sqrt(N)
    interval = plan.interval(plan.replay(scores=scores[:stein]))
    assert interval.mean == pytest.approx(scores[:stein].mean())
    assert interval.half_width == pytest.approx(quantile * s0 / math.sqrt(stein))


def test_before_the_first_stage_it_says_nothing():
    plan = TwoStagePlan(first_stage=4, low=1, high=5)
    interval = plan.interval(plan.replay(scores=[3, 3, 4]))
    assert (interval.n, interval.lower, interval.upper) == (3, 1, 5)


@pytest.mark.parametrize("sd", [5.0, 20.0])
def test_the_interval_at_the_stop_covers_the_mean_at_the_nominal_rate(sd):
    # given: normal scores (a scale wide enough never to clip), a target that makes N
    # vary widely with the first stage's SD
    plan = TwoStagePlan(first_stage=8, alpha=0.1, low=-1e6, high=1e6)
    rule = StoppingRule(target_half_width=sd / 3, min_ratings=8, max_ratings=10_000)
    # when: 40,000 replications stopped by the rule
    result = coverage_at_stop(
        plan=plan,
        rule=rule,
        draw=lambda rng, count: rng.normal(50.0, sd, count),
        true_mean=50.0,
        replications=40_000,
        rng=np.random.default_rng(3),
    )
    # then: 90 % within Monte Carlo error (Stein's coverage is exact for normal scores)
    assert abs(result.coverage - 0.90) < 3.5 * result.standard_error
    # and N was the data's: E[(t s0 / d)^2] = 9 t^2 = 32.3 (t = 1.895), plus rounding up
    assert 32.3 < result.mean_ratings < 33.5


def test_the_batch_form_equals_one_video_at_a_time():
    # given: 4 videos, 30 rounds in which each video gets a rating or not
    rng = np.random.default_rng(5)
    scores = rng.uniform(0, 100, (4, 30))
    given = rng.random((4, 30)) < 0.8
    plan = TwoStagePlan(first_stage=6, sd_floor=2.0)
    # when: fed in batches
    state = plan.start_many(shape=(4,))
    for r in range(30):
        rows = np.flatnonzero(given[:, r])
        plan.update_rows(state, rows=rows, scores=scores[rows, r])
    n, mean, lower, upper = plan.bounds(state)
    # then: each video's interval is the one-video form's on its own scores
    for video in range(4):
        one = plan.interval(plan.replay(scores=scores[video, given[video]]))
        assert (one.n, one.mean, one.lower, one.upper) == pytest.approx(
            (n[video], mean[video], lower[video], upper[video])
        )


def test_a_first_stage_of_equal_scores_is_bounded_by_the_floor():
    plan = TwoStagePlan(first_stage=5, low=1, high=5, sd_floor=0.5)
    interval = plan.interval(plan.replay(scores=[4, 4, 4, 4, 4]))
    assert interval.half_width == pytest.approx(stats.t.ppf(0.975, 4) * 0.5 / math.sqrt(5))


def test_the_plan_is_made_by_name_and_refuses_bad_settings():
    plan = make_plan(kind="two_stage", first_stage=12)
    assert isinstance(plan, TwoStagePlan) and plan.first_stage == 12
    with pytest.raises(ValueError, match="first stage"):
        TwoStagePlan(first_stage=1)
    with pytest.raises(ValueError, match="sd_floor"):
        TwoStagePlan(sd_floor=-1)
