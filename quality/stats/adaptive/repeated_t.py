"""The naive rule, kept only as the comparison the adaptive plans must beat: a plain
Student t-interval recomputed after every rating, as if the sample size had been fixed.

    mean_n -+ t_{1-alpha/2, n-1} s_n / sqrt(n)   (Student 1908; the BT.500 mean-score CI)

Each interval alone covers 1 - alpha for normal scores at a fixed n, but looking after
every rating and stopping as soon as it is narrow enough is optional stopping: the study
stops preferentially when s_n happens to be small, and for skewed bounded scores also when
the mean is off (s and the mean are correlated), so coverage at the stop falls below
1 - alpha (Armitage, McPherson & Rowe 1969 for the repeated-significance analogue). Do not
use it to stop a study.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from quality.stats.adaptive.interval import Interval, check_scale, check_score
from quality.stats.adaptive.moments import Moments


@dataclass(frozen=True)
class RepeatedTInterval:
    """The naive t-interval as a collection plan (see ``interval.py``); not valid under
    optional stopping (module docstring)."""

    alpha: float = 0.05
    low: float = 0.0
    high: float = 100.0

    def __post_init__(self) -> None:
        check_scale(alpha=self.alpha, low=self.low, high=self.high)

    def start(self) -> Moments:
        return Moments.empty(())

    def update(self, state: Moments, *, score: float) -> Moments:
        return state.add(np.asarray(check_score(score, low=self.low, high=self.high)))

    def interval(self, state: Moments) -> Interval:
        n, mean, lower, upper = self.bounds(state)
        return Interval(n=int(n), mean=float(mean), lower=float(lower), upper=float(upper))

    def replay(self, *, scores) -> Moments:
        state = self.start()
        for score in np.asarray(scores, dtype=np.float64).ravel():
            state = self.update(state, score=score)
        return state

    def start_many(self, *, shape: tuple[int, ...]) -> Moments:
        return Moments.empty(shape)

    def update_rows(self, state: Moments, *, rows: np.ndarray, scores: np.ndarray) -> None:
        state.add_rows(rows=rows, x=np.asarray(scores, dtype=np.float64))

    def bounds(self, state: Moments) -> tuple[np.ndarray, ...]:
        """(n, mean, lower, upper); the whole scale while n < 2."""
        n = state.n
        with np.errstate(invalid="ignore", divide="ignore"):
            quantile = special.stdtrit(np.maximum(n - 1, 1), 1.0 - self.alpha / 2.0)
            half = np.where(n > 1, quantile * state.std() / np.sqrt(np.maximum(n, 1)), np.inf)
        mean = np.where(n > 0, state.mean, np.nan)
        lower = np.where(n > 1, np.clip(state.mean - half, self.low, self.high), self.low)
        upper = np.where(n > 1, np.clip(state.mean + half, self.low, self.high), self.high)
        return n, mean, lower, upper
