"""Running count, mean and sum of squared deviations (Welford 1962), one video or many.

Welford, B. P. (1962), "Note on a method for calculating corrected sums of squares and
products", Technometrics 4(3): after x_n, mean_n = mean_{n-1} + (x_n - mean_{n-1}) / n and
M2_n = M2_{n-1} + (x_n - mean_{n-1}) (x_n - mean_n); the sample variance is M2 / (n - 1).
Updating this way avoids the cancellation of sum(x^2) - n mean^2 on long sequences.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class Moments:
    """n, mean and M2 with any batch shape (``()`` for one video); mean is 0 at n = 0."""

    n: np.ndarray
    mean: np.ndarray
    m2: np.ndarray

    @classmethod
    def empty(cls, shape: tuple[int, ...] = ()) -> Moments:
        return cls(n=np.zeros(shape, dtype=np.int64), mean=np.zeros(shape), m2=np.zeros(shape))

    def add(self, x: np.ndarray) -> Moments:
        n = self.n + 1
        delta = x - self.mean
        mean = self.mean + delta / n
        return Moments(n=n, mean=mean, m2=self.m2 + delta * (x - mean))

    def add_rows(self, *, rows: np.ndarray, x: np.ndarray) -> None:
        """One more value in each of ``rows`` (distinct) of a 1-d batch, in place."""
        new = Moments(n=self.n[rows], mean=self.mean[rows], m2=self.m2[rows]).add(x)
        self.n[rows], self.mean[rows], self.m2[rows] = new.n, new.mean, new.m2

    def std(self) -> np.ndarray:
        """Sample standard deviation (ddof 1); NaN where n < 2."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.n > 1, np.sqrt(self.m2 / np.maximum(self.n - 1, 1)), np.nan)
