"""The stopping rule: its verdicts, and coverage at a data-dependent stop (simulation)."""

import math

import numpy as np
import pytest

from quality.stats.adaptive.confidence_sequence import AnytimeConfidenceSequence
from quality.stats.adaptive.group_sequential import GroupSequentialPlan
from quality.stats.adaptive.interval import Interval
from quality.stats.adaptive.repeated_t import RepeatedTInterval
from quality.stats.adaptive.simulate import (
    RaterModelSource,
    clipped_normal_mean,
    coverage_at_stop,
    run_study,
)
from quality.stats.adaptive.stopping import (
    CAP,
    COLLECTING,
    PLAN_COMPLETE,
    PRECISE,
    TOO_FEW,
    StoppingRule,
    decide,
    make_plan,
    stop_many,
)

RULE = StoppingRule(target_half_width=5.0, min_ratings=5, max_ratings=40)


def interval(n, half, *, final=False):
    return Interval(n=n, mean=50.0, lower=50.0 - half, upper=50.0 + half, final=final)


@pytest.mark.parametrize(
    ("intervals", "stop", "reason"),
    [
        ({"a": interval(4, 1), "b": interval(4, 1)}, False, TOO_FEW),
        ({"a": interval(6, 4.9), "b": interval(6, 5.0)}, True, PRECISE),
        ({"a": interval(6, 4.9), "b": interval(6, 5.1)}, False, COLLECTING),
        ({"a": interval(12, 9.0, final=True), "b": interval(12, 3)}, True, PLAN_COMPLETE),
        ({"a": interval(40, 30.0), "b": interval(40, 30)}, True, CAP),
        ({"a": interval(39, 30.0), "b": interval(40, 30)}, False, COLLECTING),
    ],
)
def test_a_video_stops_when_every_dimension_is_narrow_enough(intervals, stop, reason):
    # when
    decision = decide(rule=RULE, intervals=intervals)
    # then
    assert (decision.stop, decision.reason) == (stop, reason)
    assert decision.n == min(i.n for i in intervals.values())


def test_the_decision_names_the_widest_dimension():
    decision = decide(rule=RULE, intervals={"a": interval(9, 2), "b": interval(9, 7.5)})
    assert (decision.widest_dimension, decision.widest_half_width) == ("b", 7.5)


def test_the_vectorised_rule_agrees_with_decide():
    # given: random (n, half-width, final) for 2 dimensions x 300 videos
    rng = np.random.default_rng(5)
    n = np.repeat(rng.integers(0, 45, size=(1, 300)), 2, axis=0)
    half = rng.uniform(0, 10, size=(2, 300))
    final = rng.random((2, 300)) < 0.1
    # when
    many = stop_many(rule=RULE, n=n, half_width=half, final=final)
    # then
    one_by_one = [
        decide(
            rule=RULE,
            intervals={
                str(d): interval(int(n[d, v]), half[d, v], final=final[d, v]) for d in (0, 1)
            },
        ).stop
        for v in range(300)
    ]
    assert many.tolist() == one_by_one


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"target_half_width": 0}, "target_half_width"),
        ({"min_ratings": 0}, "min_ratings"),
        ({"min_ratings": 10, "max_ratings": 9}, "min_ratings"),
    ],
)
def test_bad_rules_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        StoppingRule(**kwargs)


def test_make_plan_builds_both_plans_and_refuses_others():
    assert isinstance(make_plan(kind="anytime", low=1, high=5), AnytimeConfidenceSequence)
    plan = make_plan(kind="group_sequential", looks=(5, 9), spending="pocock")
    assert isinstance(plan, GroupSequentialPlan) and plan.looks == (5, 9)
    with pytest.raises(ValueError, match="unknown plan"):
        make_plan(kind="bayes")


# Skewed bounded scores: 100 * Beta(0.7, 3), true mean 100 * 0.7 / 3.7, sd about 18.
SKEWED_MEAN = 100 * 0.7 / 3.7


def skewed(rng, count):
    return 100 * rng.beta(0.7, 3.0, size=count)


def test_the_naive_t_rule_undercovers_and_the_confidence_sequence_does_not():
    # given: stop once the interval's half-width <= 8 points, looking after every rating
    rule = StoppingRule(target_half_width=8.0, min_ratings=5, max_ratings=300)
    replications = 2000
    nominal = 0.95
    # when
    naive = coverage_at_stop(
        plan=RepeatedTInterval(alpha=0.05),
        rule=rule,
        draw=skewed,
        true_mean=SKEWED_MEAN,
        replications=replications,
        rng=np.random.default_rng(3),
    )
    anytime = coverage_at_stop(
        plan=AnytimeConfidenceSequence(alpha=0.05, grid_size=301),
        rule=rule,
        draw=skewed,
        true_mean=SKEWED_MEAN,
        replications=replications,
        rng=np.random.default_rng(3),
    )
    # then: the naive rule is short by far more than Monte Carlo error, the CS is not short
    se = math.sqrt(nominal * (1 - nominal) / replications)
    assert naive.coverage < nominal - 6 * se
    assert anytime.coverage >= nominal - 2 * se
    assert anytime.mean_ratings > naive.mean_ratings  # validity is paid in ratings


def test_the_group_sequential_rule_keeps_coverage_on_normal_scores():
    # given: the plan's own assumption holds (normal scores, far from the scale's ends)
    plan = GroupSequentialPlan(looks=(8, 12, 16, 20, 30), alpha=0.05, spending="pocock")
    rule = StoppingRule(target_half_width=7.0, min_ratings=5, max_ratings=30)
    # when
    result = coverage_at_stop(
        plan=plan,
        rule=rule,
        draw=lambda rng, count: rng.normal(50, 15, size=count),
        true_mean=50.0,
        replications=4000,
        rng=np.random.default_rng(8),
    )
    # then
    assert result.coverage >= 0.95 - 2 * result.standard_error
    assert result.mean_ratings < 30  # it did stop early


def test_the_clipped_normal_mean_matches_simulation():
    rng = np.random.default_rng(1)
    draws = np.clip(rng.normal(85, 20, size=2_000_000), 0, 100)
    expected = clipped_normal_mean(mean=85.0, sd=20.0, low=0, high=100)
    assert float(expected) == pytest.approx(draws.mean(), abs=0.03)


def test_a_simulated_study_stops_every_video_within_the_rule():
    # given: 60 videos, 3 dimensions, a 5-point target on a 0-100 slider
    rng = np.random.default_rng(0)
    source = RaterModelSource(
        quality=rng.uniform(20, 80, size=(3, 60)),
        ambiguity=rng.uniform(5, 15, size=(3, 60)),
        bias_sd=4.0,
        inconsistency=np.array([5.0, 8.0, 12.0]),
    )
    rule = StoppingRule(target_half_width=12.0, min_ratings=5, max_ratings=35)
    # when
    run = run_study(source=source, plan=RepeatedTInterval(), rule=rule, rng=rng, session_size=7)
    # then: every video stopped at the cap or with every dimension narrow enough
    half = (run.upper - run.lower) / 2
    narrow = (half <= 12.0).all(axis=0)
    assert np.all((run.n[0] == 35) | (narrow & (run.n[0] >= 5)))
    assert np.all(run.n == run.n[0])  # one rating scores every dimension
    assert run.ratings_used == run.video.size == run.scores.shape[1]
    assert np.array_equal(np.bincount(run.video, minlength=60), run.n[0])
