"""Bootstrapped SRCC between the MOS of two disjoint groups of raters (KonIQ-10k Fig. 4,
GAIA Fig. 2): how well n raters reproduce another n raters' ranking of the videos.

For one dimension with R raters and each group size n of ``group_sizes(floor(R / 2))``
(every n from 1 to 30, then steps of about 10% up to floor(R / 2); so every n for up to
61 raters, GAIA's 54 included): ``draws`` draws of two disjoint groups A and B of n
raters; each group's MOS of a video is the mean RAW score of the group's ratings of it
(GAIA plots MOS agreement; raw means keep a rater's scale, which is part of what a second
group would disagree on); the SRCC between the two MOS vectors over the videos that both
groups rated (at least one rating in each); then the mean and the central ``confidence``
percentile interval of the SRCC over the draws.

Draws are nested: draw d is one random permutation p of the R raters (sorted by id;
seeded by (seed, stream), the stream being ``dimension_stream(name)``); for group size
n, A = p[0:2n:2] and B = p[1:2n:2]. For every n each draw is still a uniformly random
pair of disjoint n-groups, so each point of the curve has the distribution KonIQ
describes; the points share their randomness (common random numbers), which makes the
curve smoother, and lets the group sums at one evaluated size be those at the previous
one plus the rows of the raters who join in between (p[2m:2n], m the previous size). The
rows are the (rater x video) sums and counts of the ratings, sparse (CSR) unless the
ratings fill at least 1/8 of that matrix, so memory is O(ratings + block x videos),
never O(R x videos): a crowdsourced study of 3,000 raters who each rate a hundred of
9,180 videos needs no 3,000 x 9,180 matrix. The cost is one pass over the joiners' rows
and one ranking (``ranks``) per evaluated size and draw. Which n are evaluated does not
change the value at an n: the grid only leaves sizes out. A draw with fewer than 2
common videos or a constant MOS vector has no SRCC and is left out of the mean and the
interval.
"""

from __future__ import annotations

import math
import zlib

import numpy as np

from quality.stats.ranks import spearman_masked_inf

# Values per working array of one block of draws (2^16 float64 = 512 KiB: CPU cache).
_BLOCK_ELEMENTS = 1 << 16


def dimension_stream(dimension: str) -> int:
    """The random stream of a dimension: CRC-32 of its name, so a dimension's draws do not
    depend on which other dimensions the study has or in which order they come."""
    return zlib.crc32(str(dimension).encode("utf-8"))


def rater_permutations(*, n_raters: int, draws: int, seed: int, stream: int) -> np.ndarray:
    """(draws x n_raters) random permutations; group size n uses p[:, 0:2n:2], p[:, 1:2n:2]."""
    rng = np.random.default_rng(np.random.SeedSequence(entropy=seed, spawn_key=(stream,)))
    return np.argsort(rng.random((draws, n_raters)), axis=1)


def group_sizes(top: int, *, every_up_to: int = 30, growth: float = 1.1) -> list[int]:
    """The group sizes of the curve up to ``top``: every n from 1 to ``every_up_to``, then
    each size about ``growth`` times the last (rounded, at least one more), and ``top``.

    With the defaults: 1..30, 33, 36, 40, 44, 48, 53, 58, 64, 70, 77, 85, ... (about 70
    sizes for 1,500 instead of 1,500); a study of up to 61 raters gets every n. The curve
    flattens as n grows (KonIQ Fig. 4), so the later points are where a sparse grid loses
    least.
    """
    sizes = list(range(1, min(top, every_up_to) + 1))
    n = sizes[-1] if sizes else 0
    while n < top:
        n = min(top, max(n + 1, round(n * growth)))
        sizes.append(n)
    return sizes


class _RaterRows:
    """The (rater x video) sums and counts of the ratings, by rater.

    Sparse (CSR) unless the ratings fill at least 1/8 of the matrix: the cells of rater r
    are cell_video / cell_sum / cell_count[start[r]:start[r + 1]], and adding a row
    scatters its cells (np.add.at, about 8 times the cost per value of adding a dense
    row, measured). A matrix at least 1/8 full is kept dense (a GAIA-like study, 35 of 54
    raters per video: dense is 5 times faster to add), which costs no more than 8 cells'
    memory per rating cell either way.
    """

    def __init__(self, rater, video, score, n_raters: int, n_videos: int) -> None:
        key = np.asarray(rater, dtype=np.int64) * n_videos + np.asarray(video, dtype=np.int64)
        cells, inverse = np.unique(key, return_inverse=True)
        self.cell_video = cells % n_videos
        self.cell_sum = np.bincount(inverse, weights=np.asarray(score, dtype=np.float64))
        self.cell_count = np.bincount(inverse).astype(np.float64)
        self.n_videos = n_videos
        self.dense = cells.size * 8 >= n_raters * n_videos
        if self.dense:
            self.sums = np.zeros(n_raters * n_videos)
            self.counts = np.zeros(n_raters * n_videos)
            self.sums[cells], self.counts[cells] = self.cell_sum, self.cell_count
            self.sums.shape = self.counts.shape = (n_raters, n_videos)
        per_rater = np.bincount(cells // n_videos, minlength=n_raters)
        self.start = np.concatenate([[0], np.cumsum(per_rater)])

    def add(self, joiners: np.ndarray, sums: np.ndarray, counts: np.ndarray) -> None:
        """Add the rows of joiners[i] (a block of draws x joiners) to sums[i], counts[i],
        one joiner after the other (the order of the float additions: scores that are not
        whole give the same bits as adding row by row)."""
        if self.dense:
            for column in joiners.T:
                sums += self.sums[column]
                counts += self.counts[column]
            return
        first, last = self.start[joiners].ravel(), self.start[joiners + 1].ravel()
        length = last - first
        total = int(length.sum())
        if total == 0:
            return
        # Cell indices of every joiner, concatenated: first[j] + 0 .. length[j] - 1.
        offset = np.repeat(first - (np.cumsum(length) - length), length)
        cell = offset + np.arange(total)
        row = np.repeat(np.repeat(np.arange(joiners.shape[0]), joiners.shape[1]), length)
        target = row * self.n_videos + self.cell_video[cell]
        np.add.at(sums.reshape(-1), target, self.cell_sum[cell])
        np.add.at(counts.reshape(-1), target, self.cell_count[cell])

    def mean_bounds(self) -> tuple[float, float] | None:
        """(lowest, highest) mean of one rater's ratings of one video."""
        if self.cell_sum.size == 0:
            return None
        means = self.cell_sum / self.cell_count
        return float(means.min()), float(means.max())


def srcc_curve(
    *,
    rater: np.ndarray,
    video: np.ndarray,
    score: np.ndarray,
    n_raters: int,
    n_videos: int,
    draws: int = 100,
    seed: int = 0,
    stream: int = 0,
    max_n: int | None = None,
    confidence: float = 0.95,
) -> dict[int, dict[str, float]]:
    """{n: {"mean", "low", "high", "draws"}} for n in ``group_sizes(top)``, from one
    dimension's ratings: rater codes 0..n_raters-1, video codes 0..n_videos-1, raw scores.

    top is floor(n_raters / 2), or max_n when smaller. ``draws`` in the result is the
    number of draws with a defined SRCC.
    """
    top = n_raters // 2 if max_n is None else min(max_n, n_raters // 2)
    if top < 1 or draws < 1:
        return {}
    sizes = group_sizes(top)
    perm = rater_permutations(n_raters=n_raters, draws=draws, seed=seed, stream=stream)
    rows = _RaterRows(rater, video, score, n_raters, n_videos)
    # Every group mean lies within the range of the raters' own means (speeds up ranking).
    bounds = rows.mean_bounds()
    rho = np.empty((len(sizes), draws))
    # A block of draws at a time, all group sizes for it: the working arrays then fit in
    # the CPU cache, which halves the time of the whole curve.
    block = max(1, _BLOCK_ELEMENTS // max(n_videos, 1))
    for first in range(0, draws, block):
        part = perm[first : first + block]
        sum_a = np.zeros((part.shape[0], n_videos))
        sum_b, count_a, count_b = np.zeros_like(sum_a), np.zeros_like(sum_a), np.zeros_like(sum_a)
        mean_a, mean_b = np.empty_like(sum_a), np.empty_like(sum_a)
        previous = 0
        for i, n in enumerate(sizes):
            rows.add(part[:, 2 * previous : 2 * n : 2], sum_a, count_a)
            rows.add(part[:, 2 * previous + 1 : 2 * n : 2], sum_b, count_b)
            previous = n
            rho[i, first : first + block] = group_srccs(
                (sum_a, count_a, mean_a), (sum_b, count_b, mean_b), bounds
            )
    return summarise_draws(sizes, rho, confidence)


def group_means(group_a: tuple, group_b: tuple) -> np.ndarray:
    """Each group's MOS per draw (row) and video, into its ``out`` array, where both groups
    rated the video, +inf elsewhere; returns that (draws x videos) mask of common videos.

    Each group is (sums, counts, out): (draws x videos) sums and counts of its raters'
    raw scores, and the array to hold its MOS (sums / counts)."""
    (sum_a, count_a, mean_a), (sum_b, count_b, mean_b) = group_a, group_b
    common = (count_a > 0) & (count_b > 0)
    mean_a.fill(np.inf)
    mean_b.fill(np.inf)
    np.divide(sum_a, count_a, out=mean_a, where=common)
    np.divide(sum_b, count_b, out=mean_b, where=common)
    return common


def group_srccs(group_a: tuple, group_b: tuple, bounds) -> np.ndarray:
    """Per draw (row): the SRCC between the MOS of two groups (``group_means``) over the
    videos both rated. NaN for a draw with fewer than 2 common videos or a constant MOS.

    Where every draw's groups have at most half the videos in common (small groups of
    raters who each rate a few videos), only the common videos are ranked: each draw's
    are packed to the left of a narrower array. Ranks do not depend on the order of the
    videos, and their sums of products are whole or quarter numbers far below 2^53, so
    the SRCC is the same to the last bit.
    """
    common = group_means(group_a, group_b)
    mean_a, mean_b = group_a[2], group_b[2]
    m = common.sum(axis=1)
    width = int(m.max(initial=0))
    if width < 2:
        return np.full(common.shape[0], np.nan)
    if 2 * width <= common.shape[1]:
        row, column = np.nonzero(common)  # row by row, so each row's in video order
        place = np.arange(row.size) - np.repeat(np.cumsum(m) - m, m)
        packed_a = np.full((common.shape[0], width), np.inf)
        packed_b = np.full((common.shape[0], width), np.inf)
        packed_a[row, place] = mean_a[row, column]
        packed_b[row, place] = mean_b[row, column]
        return spearman_masked_inf(packed_a, packed_b, m, bounds)
    return spearman_masked_inf(mean_a, mean_b, m, bounds)


def summarise_draws(sizes: list[int], rho: np.ndarray, confidence: float) -> dict:
    """{n: {"mean", "low", "high", "draws"}}: for each size (row of rho, draws along the
    columns) the mean and central ``confidence`` percentile interval of the defined SRCCs
    (numpy's linear percentile), and how many were defined; NaN when none was."""
    tail = (1.0 - confidence) / 2.0 * 100.0
    curve: dict[int, dict[str, float]] = {}
    for n, values in zip(sizes, rho, strict=True):
        defined = values[np.isfinite(values)]
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
