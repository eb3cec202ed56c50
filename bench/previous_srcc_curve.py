"""The SRCC curve as quality.stats computed it before its grid of group sizes (for
``bench/analysis.py`` only, as a baseline): every group size n = 1 .. floor(R / 2), the
groups' sums accumulated from DENSE (rater x video) sums and counts, one rater row per n.

Same draws, formula and source as ``quality.stats.srcc_curve`` (KonIQ-10k Fig. 4, GAIA
Fig. 2), whose groups' MOS (``group_means``) and summary over the draws
(``summarise_draws``) it shares, so its points equal the project's at every n the
project evaluates. It ranks every video at every n, as it did (the project ranks only
the common ones where they are few). Its cost grows with R x videos in memory and with
R / 2 rankings of every video per draw in time.
"""

from __future__ import annotations

import numpy as np

from quality.stats.ranks import spearman_masked_inf
from quality.stats.srcc_curve import group_means, rater_permutations, summarise_draws


def dense_sums(
    *, rater: np.ndarray, video: np.ndarray, score: np.ndarray, n_raters: int, n_videos: int
) -> tuple[np.ndarray, np.ndarray]:
    """(rater x video) sum of scores and count of ratings, float64 (exact for whole scores)."""
    cell = rater * n_videos + video
    size = n_raters * n_videos
    sums = np.bincount(cell, weights=score, minlength=size).reshape(n_raters, n_videos)
    counts = np.bincount(cell, minlength=size).astype(np.float64).reshape(n_raters, n_videos)
    return sums, counts


def previous_srcc_curve(
    *,
    sums: np.ndarray,
    counts: np.ndarray,
    draws: int = 100,
    seed: int = 0,
    stream: int = 0,
    confidence: float = 0.95,
) -> dict[int, dict[str, float]]:
    """{n: {"mean", "low", "high", "draws"}} for EVERY n = 1 .. floor(R / 2) from the dense
    (rater x video) sums and counts (quality.stats before the grid of group sizes).

    ``draws`` in the result is the number of draws with a defined SRCC.
    """
    n_raters = sums.shape[0]
    top = n_raters // 2
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
            common = group_means((sum_a, count_a, mean_a), (sum_b, count_b, mean_b))
            rho[n - 1, first : first + block] = spearman_masked_inf(
                mean_a, mean_b, common.sum(axis=1), bounds
            )
    return summarise_draws(list(range(1, top + 1)), rho, confidence)
