"""Bootstrapped SRCC between the MOS of two disjoint groups of raters (KonIQ-10k Fig. 4,
GAIA Fig. 2): how well n raters reproduce another n raters' ranking of the videos.

For one dimension with R raters and each n = 1 .. floor(R / 2): ``draws`` draws of two
disjoint groups A and B of n raters; each group's MOS of a video is the mean RAW score
of the group's ratings of it (GAIA plots MOS agreement; raw means keep a rater's scale,
which is part of what a second group would disagree on); the SRCC between the two MOS
vectors over the videos that both groups rated (at least one rating in each); then the
mean and the central ``confidence`` percentile interval of the SRCC over the draws.

Draws are nested: draw d is one random permutation p of the R raters (sorted by id;
seeded by (seed, stream), the stream being ``dimension_stream(name)``); for group size
n, A = p[0:2n:2] and B = p[1:2n:2]. For every n each draw is still a uniformly random
pair of disjoint n-groups, so each point of the curve has the distribution KonIQ
describes; the points share their randomness (common random numbers), which makes the
curve smoother, and lets the group sums for n+1 be those for n plus one rater's row: the
whole curve costs one pass over the (rater x video) sums per n, plus ranking (``ranks``).
A draw with fewer than 2 common videos or a constant MOS vector has no SRCC and is left
out of the mean and the interval.
"""

from __future__ import annotations

import math
import zlib

import numpy as np

from quality.stats.ranks import spearman_masked_inf


def dimension_stream(dimension: str) -> int:
    """The random stream of a dimension: CRC-32 of its name, so a dimension's draws do not
    depend on which other dimensions the study has or in which order they come."""
    return zlib.crc32(str(dimension).encode("utf-8"))


def rater_permutations(*, n_raters: int, draws: int, seed: int, stream: int) -> np.ndarray:
    """(draws x n_raters) random permutations; group size n uses p[:, 0:2n:2], p[:, 1:2n:2]."""
    rng = np.random.default_rng(np.random.SeedSequence(entropy=seed, spawn_key=(stream,)))
    return np.argsort(rng.random((draws, n_raters)), axis=1)


def dense_sums(
    *, rater: np.ndarray, video: np.ndarray, score: np.ndarray, n_raters: int, n_videos: int
) -> tuple[np.ndarray, np.ndarray]:
    """(rater x video) sum of scores and count of ratings, float64 (exact for whole scores)."""
    cell = rater * n_videos + video
    size = n_raters * n_videos
    sums = np.bincount(cell, weights=score, minlength=size).reshape(n_raters, n_videos)
    counts = np.bincount(cell, minlength=size).astype(np.float64).reshape(n_raters, n_videos)
    return sums, counts


def srcc_curve(
    *,
    sums: np.ndarray,
    counts: np.ndarray,
    draws: int = 100,
    seed: int = 0,
    stream: int = 0,
    max_n: int | None = None,
    confidence: float = 0.95,
) -> dict[int, dict[str, float]]:
    """{n: {"mean", "low", "high", "draws"}} from the (rater x video) sums and counts.

    ``draws`` in the result is the number of draws with a defined SRCC.
    """
    n_raters = sums.shape[0]
    top = n_raters // 2 if max_n is None else min(max_n, n_raters // 2)
    if top < 1 or draws < 1:
        return {}
    perm = rater_permutations(n_raters=n_raters, draws=draws, seed=seed, stream=stream)
    # Every group mean lies within the range of the raters' own means (speeds up ranking).
    with np.errstate(invalid="ignore", divide="ignore"):
        rater_means = (sums / counts)[counts > 0]
    bounds = (float(rater_means.min()), float(rater_means.max())) if rater_means.size else None
    rho = np.empty((top, draws))
    # A block of draws at a time, all group sizes for it: the working arrays then fit in
    # the CPU cache (about 2^16 values each), which halves the time of the whole curve.
    block = max(1, (1 << 16) // max(sums.shape[1], 1))
    for first in range(0, draws, block):
        rows = perm[first : first + block]
        sum_a = np.zeros((rows.shape[0], sums.shape[1]))
        sum_b, count_a, count_b = np.zeros_like(sum_a), np.zeros_like(sum_a), np.zeros_like(sum_a)
        mean_a, mean_b = np.empty_like(sum_a), np.empty_like(sum_a)
        for n in range(1, top + 1):
            joiner_a, joiner_b = rows[:, 2 * n - 2], rows[:, 2 * n - 1]
            sum_a += sums[joiner_a]
            count_a += counts[joiner_a]
            sum_b += sums[joiner_b]
            count_b += counts[joiner_b]
            common = (count_a > 0) & (count_b > 0)
            mean_a.fill(np.inf)
            mean_b.fill(np.inf)
            np.divide(sum_a, count_a, out=mean_a, where=common)
            np.divide(sum_b, count_b, out=mean_b, where=common)
            rho[n - 1, first : first + block] = spearman_masked_inf(
                mean_a, mean_b, common.sum(axis=1), bounds
            )
    tail = (1.0 - confidence) / 2.0 * 100.0
    curve: dict[int, dict[str, float]] = {}
    for n in range(1, top + 1):
        defined = rho[n - 1][np.isfinite(rho[n - 1])]
        if defined.size == 0:
            curve[n] = {"mean": math.nan, "low": math.nan, "high": math.nan, "draws": 0}
            continue
        low, high = np.percentile(defined, [tail, 100.0 - tail])
        curve[n] = {
            "mean": float(defined.mean()),
            "low": float(low),
            "high": float(high),
            "draws": int(defined.size),
        }
    return curve
