"""The rater bootstrap: replicates resample raters, not single judgments.

A rater's judgments are not independent of each other (one rater's taste, one rater's
side bias), so a replicate draws R raters with replacement from the R raters and keeps
all judgments of each draw (Efron & Tibshirani 1993, resampling the independent units).
A replicate is then a multinomial weight vector over raters (how often each was drawn),
and every replicate's pair counts are one matrix product: (B x R) @ (R x 3 pairs).
Intervals are percentile intervals (Efron & Tibshirani 1993, Sec. 13.3).
"""

from __future__ import annotations

import numpy as np


def rater_weights(*, n_raters: int, replicates: int, seed: int) -> np.ndarray:
    """(replicates, n_raters): how many times each rater is drawn in each replicate."""
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n_raters, np.full(n_raters, 1.0 / n_raters), size=replicates)
    return draws.astype(np.float64)


def replicate_counts(*, weights: np.ndarray, per_rater: np.ndarray) -> np.ndarray:
    """(replicates, 3 * pairs) counts of each replicate from the per-rater counts."""
    return weights @ per_rater


def percentile_interval(values: np.ndarray, *, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Per column of ``values`` (replicates, k): the (1 - c)/2 and (1 + c)/2 percentiles
    (linear interpolation) over the rows without NaN; NaN where no row is left."""
    return _quantiles(values, confidence=confidence, method="linear")


def descending_ranks(scores: np.ndarray) -> np.ndarray:
    """Per row: 1 + the number of strictly larger scores (1 = best; ties share the
    better rank); a row with NaN gets NaN ranks."""
    scores = np.atleast_2d(scores)
    larger = (scores[:, None, :] > scores[:, :, None]).sum(axis=2)
    ranks = (1 + larger).astype(np.float64)
    ranks[np.isnan(scores).any(axis=1)] = np.nan
    return ranks


def rank_interval(ranks: np.ndarray, *, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of bootstrap ranks, as observed ranks (inverted-CDF
    percentiles, so the bounds are whole ranks)."""
    return _quantiles(ranks, confidence=confidence, method="inverted_cdf")


def _quantiles(values, *, confidence, method):
    values = np.asarray(values, dtype=np.float64)
    kept = values[~np.isnan(values).any(axis=1)]
    if kept.shape[0] == 0:
        empty = np.full(values.shape[1], np.nan)
        return empty, empty.copy()
    # Rounded so that 0.95 gives exactly 0.025 (not 0.025000000000000022): with
    # inverted-CDF percentiles and B * tail whole, the last bit picks the order statistic.
    tail = round((1.0 - confidence) / 2, 12)
    # An infinite replicate (the tie parameter where every judgment is a tie) leaves the
    # interpolated bound undefined: NaN, quietly (null in the JSON, as the estimate is).
    with np.errstate(invalid="ignore"):
        low, high = np.quantile(kept, [tail, 1.0 - tail], axis=0, method=method)
    return low, high
