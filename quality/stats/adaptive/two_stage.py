"""Stein's two-stage plan: a fixed-width interval whose sample size the first ratings set.

Stein (1945, "A two-sample test for a linear hypothesis whose power is independent of the
variance", Ann. Math. Stat. 16(3)): take a first stage of n0 ratings and their sample
standard deviation s0; the video then needs

    N = max(n0, ceil((t_{1-alpha/2, n0-1} s0 / d)^2))

ratings for the interval mean_N -+ d. For normal scores mean_N and s0 are independent
(N depends on the data only through s0), so (mean_N - mu) sqrt(N) / s0 is Student t with
n0 - 1 degrees of freedom whatever N turns out to be, and

    P(|mean_N - mu| <= t_{1-alpha/2, n0-1} s0 / sqrt(N)) = 1 - alpha   exactly,

with no look at the data after the first stage, hence no optional-stopping penalty: the
price is that s0 is estimated on n0 ratings only (a larger t quantile than a fixed
design's). As a collection plan the interval after n >= n0 ratings is

    mean_n -+ t_{1-alpha/2, n0-1} s0 / sqrt(n)

(s0 frozen at the first stage), so the stopping rule's "half-width <= target" stops the
video at exactly Stein's N; ratings that arrive after it (sessions already in flight) come
from a number the data did not choose, and the same pivot holds. Before n0 ratings the
plan says nothing (the whole scale).

Assumptions, as for every t-interval: ratings of a video are i.i.d. and their mean close
enough to normal. Bounded, discrete scores can give s0 = 0 on the first stage (every rater
gave the same score), which would stop at once with a zero-width interval; ``sd_floor``
(in scale points) bounds s0 from below for such scales. The coverage under this study's
own score distributions is measured in bench/adaptive.py beside the other plans.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from quality.stats.adaptive.interval import Interval, check_scale, check_score
from quality.stats.adaptive.moments import Moments


@dataclass(frozen=True, eq=False)
class StageState:
    """The running moments and the first stage's standard deviation (NaN before it)."""

    moments: Moments
    first_sd: np.ndarray


@dataclass(frozen=True)
class TwoStagePlan:
    """Stein's two-stage interval as a collection plan (see ``interval.py``)."""

    first_stage: int = 10
    alpha: float = 0.05
    low: float = 0.0
    high: float = 100.0
    sd_floor: float = 0.0

    def __post_init__(self) -> None:
        check_scale(alpha=self.alpha, low=self.low, high=self.high)
        if self.first_stage < 2:
            raise ValueError("the first stage needs at least 2 ratings")
        if self.sd_floor < 0:
            raise ValueError("sd_floor cannot be negative")

    @property
    def quantile(self) -> float:
        return float(special.stdtrit(self.first_stage - 1, 1.0 - self.alpha / 2.0))

    def start(self) -> StageState:
        return self.start_many(shape=())

    def update(self, state: StageState, *, score: float) -> StageState:
        moments = state.moments.add(np.asarray(check_score(score, low=self.low, high=self.high)))
        first_sd = np.where(moments.n == self.first_stage, moments.std(), state.first_sd)
        return StageState(moments=moments, first_sd=first_sd)

    def interval(self, state: StageState) -> Interval:
        n, mean, lower, upper = self.bounds(state)
        return Interval(n=int(n), mean=float(mean), lower=float(lower), upper=float(upper))

    def replay(self, *, scores) -> StageState:
        state = self.start()
        for score in np.asarray(scores, dtype=np.float64).ravel():
            state = self.update(state, score=score)
        return state

    def start_many(self, *, shape: tuple[int, ...]) -> StageState:
        return StageState(moments=Moments.empty(shape), first_sd=np.full(shape, np.nan))

    def update_rows(self, state: StageState, *, rows: np.ndarray, scores: np.ndarray) -> None:
        state.moments.add_rows(rows=rows, x=np.asarray(scores, dtype=np.float64))
        done = rows[state.moments.n[rows] == self.first_stage]
        state.first_sd[done] = state.moments.std()[done]

    def bounds(self, state: StageState) -> tuple[np.ndarray, ...]:
        """(n, mean, lower, upper); the whole scale before the first stage is complete."""
        moments = state.moments
        n = moments.n
        staged = n >= self.first_stage
        sd = np.maximum(np.where(staged, state.first_sd, 0.0), self.sd_floor)
        with np.errstate(invalid="ignore", divide="ignore"):
            half = np.where(staged, self.quantile * sd / np.sqrt(np.maximum(n, 1)), np.inf)
        mean = np.where(n > 0, moments.mean, np.nan)
        lower = np.where(staged, np.clip(moments.mean - half, self.low, self.high), self.low)
        upper = np.where(staged, np.clip(moments.mean + half, self.low, self.high), self.high)
        return n, mean, lower, upper
