"""When to stop serving a video: every dimension's interval is narrow enough.

The rule, per video, after each rating (Wald 1947's sequential idea with the guarantee
carried by the plan's interval, not by the rule): stop once every dimension's interval
half-width is <= ``target_half_width``, but never before ``min_ratings`` ratings and
never past ``max_ratings``. The coverage guarantee under this data-dependent stop comes
from the plan:

- ``anytime``: the betting confidence sequence (``confidence_sequence.py``) holds at every
  n at once, so any stopping rule keeps coverage >= 1 - alpha, without assumptions beyond
  i.i.d. scores within the scale's bounds;
- ``group_sequential``: repeated t-intervals at a few planned looks (``group_sequential.py``)
  hold at all looks at once under approximate normality of the running mean; its interval
  changes only at a look, and after its last look it is ``final``, which stops the video.
- ``two_stage``: Stein's two-stage interval (``two_stage.py``): the first ``first_stage``
  ratings fix the sample size a video needs; exact for normal scores, no penalty for the
  stop because the data choose the size only through the first stage's SD.

Each dimension's coverage is at its own alpha; for all three dimensions of a video at
once, use alpha / 3 (Bonferroni) when that is the claim to make.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from quality.stats.adaptive.confidence_sequence import DEFAULT_GRID_SIZE, AnytimeConfidenceSequence
from quality.stats.adaptive.group_sequential import GroupSequentialPlan
from quality.stats.adaptive.interval import CollectionPlan, Interval
from quality.stats.adaptive.two_stage import TwoStagePlan

PLANS = ("anytime", "group_sequential", "two_stage")

# Why a video stopped (or not), as StopDecision.reason.
TOO_FEW = "too_few"  # fewer than min_ratings
COLLECTING = "collecting"  # some dimension still too wide
PRECISE = "precise"  # every dimension narrow enough
PLAN_COMPLETE = "plan_complete"  # the plan cannot narrow an interval any more
CAP = "cap"  # max_ratings reached


@dataclass(frozen=True)
class StoppingRule:
    """Stop at half-width <= target on every dimension, after a minimum, before a cap."""

    target_half_width: float = 5.0
    min_ratings: int = 5
    max_ratings: int = 100

    def __post_init__(self) -> None:
        if not self.target_half_width > 0:
            raise ValueError("target_half_width must be positive")
        if not 1 <= self.min_ratings <= self.max_ratings:
            raise ValueError("need 1 <= min_ratings <= max_ratings")


@dataclass(frozen=True)
class StopDecision:
    """The verdict for one video: ``stop`` and why (``reason``, one of the module's
    TOO_FEW, COLLECTING, PRECISE, PLAN_COMPLETE, CAP), with the ratings counted (the
    fewest over the dimensions) and the widest dimension's half-width."""

    stop: bool
    reason: str
    n: int
    widest_dimension: str | None
    widest_half_width: float


def decide(*, rule: StoppingRule, intervals: Mapping[str, Interval]) -> StopDecision:
    """Stop or go on for one video, from each dimension's current interval."""
    if not intervals:
        raise ValueError("need the interval of at least one dimension")
    n = min(interval.n for interval in intervals.values())
    widest = max(intervals, key=lambda name: intervals[name].half_width)
    half = intervals[widest].half_width
    if n >= rule.max_ratings:
        reason = CAP
    elif n < rule.min_ratings:
        reason = TOO_FEW
    elif half <= rule.target_half_width:
        reason = PRECISE
    elif any(interval.final for interval in intervals.values()):
        reason = PLAN_COMPLETE
    else:
        reason = COLLECTING
    return StopDecision(
        stop=reason in (CAP, PRECISE, PLAN_COMPLETE),
        reason=reason,
        n=n,
        widest_dimension=widest,
        widest_half_width=half,
    )


def stop_many(
    *, rule: StoppingRule, n: np.ndarray, half_width: np.ndarray, final: np.ndarray
) -> np.ndarray:
    """``decide``'s ``stop`` for many videos at once: arrays of shape (dimensions, videos)."""
    count = n.min(axis=0)
    precise = (half_width <= rule.target_half_width).all(axis=0)
    return (count >= rule.max_ratings) | ((count >= rule.min_ratings) & (precise | final.any(0)))


def make_plan(
    *,
    kind: str,
    alpha: float = 0.05,
    low: float = 0.0,
    high: float = 100.0,
    looks: tuple[int, ...] = (10, 20, 35),
    spending: str = "obrien_fleming",
    grid_size: int = DEFAULT_GRID_SIZE,
    first_stage: int = 15,
) -> CollectionPlan:
    """One of ``PLANS``: ``anytime`` (betting confidence sequence, ``grid_size``),
    ``group_sequential`` (``looks``, ``spending``) or ``two_stage`` (Stein's,
    ``first_stage``); the other arguments are unused."""
    if kind == "anytime":
        return AnytimeConfidenceSequence(alpha=alpha, low=low, high=high, grid_size=grid_size)
    if kind == "group_sequential":
        return GroupSequentialPlan(looks=looks, alpha=alpha, low=low, high=high, spending=spending)
    if kind == "two_stage":
        return TwoStagePlan(first_stage=first_stage, alpha=alpha, low=low, high=high)
    raise ValueError(f"unknown plan {kind!r}; one of {PLANS}")
