"""What every collection plan reports about one video's dimension: its interval now.

A *plan* (the anytime confidence sequence, the group-sequential looks, the naive repeated
t-interval kept for comparison) turns the scores of one (video, dimension) received so far
into an ``Interval``. Plans share one shape so that the stopping rule (``stopping.py``)
does not care which one produced the interval:

- ``plan.start()`` -> a state for a video with no rating yet;
- ``plan.update(state, score=...)`` -> the state after one more score (pure: the old state
  is left as it was, so a service may keep it or recompute it from the stored scores);
- ``plan.interval(state)`` -> ``Interval``;
- ``plan.replay(scores=...)`` -> the state after these scores in arrival order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol, TypeVar


@dataclass(frozen=True)
class Interval:
    """The plan's interval for the mean score of one (video, dimension) after ``n`` scores.

    ``lower``/``upper`` are on the score scale and lie within the scale's bounds (a plan
    that cannot say anything yet reports the whole scale). ``final`` is True when the plan
    can never narrow this interval further (a group-sequential plan past its last look):
    the stopping rule then stops the video whatever the width.
    """

    n: int
    mean: float
    lower: float
    upper: float
    final: bool = False

    @property
    def half_width(self) -> float:
        """(upper - lower) / 2; the interval need not be symmetric about the mean."""
        return (self.upper - self.lower) / 2.0


State = TypeVar("State")


class CollectionPlan(Protocol[State]):
    """The interface every plan offers (see the module docstring)."""

    low: float
    high: float

    def start(self) -> State: ...

    def update(self, state: State, *, score: float) -> State: ...

    def interval(self, state: State) -> Interval: ...

    def replay(self, *, scores) -> State: ...


def check_score(score: float, *, low: float, high: float) -> float:
    """``score`` as a float, or ValueError when it is not a finite number in [low, high]."""
    value = float(score)
    if not math.isfinite(value) or not low <= value <= high:
        raise ValueError(f"score {score!r} is outside the scale [{low:g}, {high:g}]")
    return value


def check_scale(*, alpha: float, low: float, high: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), not {alpha!r}")
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(f"the scale needs finite low < high, not [{low!r}, {high!r}]")
