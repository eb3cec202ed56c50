"""Correlation between the dimensions' MOS (GAIA Tab. 4: Spearman's rho and Kendall's tau).

For each pair of dimensions (in study order), over the videos that have a MOS in both:
Spearman's rho (Pearson's r of average ranks) and Kendall's tau-b (ties corrected, what
``scipy.stats.kendalltau`` computes by default). NaN where undefined (fewer than 2
videos, or a constant MOS). Both are computed here with numpy (scipy.stats alone costs
the command line most of a second to import).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

from quality.stats.ranks import spearman


def _tie_pairs(sorted_codes: np.ndarray) -> int:
    """Sum of t (t - 1) / 2 over the runs of equal values of a sorted array."""
    if sorted_codes.size == 0:
        return 0
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    t = np.diff(np.r_[starts, sorted_codes.size])
    return int(np.sum(t * (t - 1) // 2))


def _strict_inversions(values: np.ndarray) -> int:
    """Pairs i < j with values[i] > values[j], for integer codes 0..k-1.

    Bottom-up merge sort: at width w, each element of a right block counts the elements
    of its left block that are greater (one searchsorted over all blocks at once, the
    blocks kept apart by adding block number * k to the codes), then the blocks merge.
    """
    n = values.size
    k = int(values.max()) + 1 if n else 1
    position = np.arange(n)
    current = values.astype(np.int64)
    inversions = 0
    width = 1
    while width < n:
        pair = position // (2 * width)
        is_right = (position // width) % 2 == 1
        left_keys = (pair * k + current)[~is_right]  # globally sorted: blocks in order
        left_pair = pair[~is_right]
        right_keys = (pair * k + current)[is_right]
        right_pair = pair[is_right]
        left_start = np.searchsorted(left_pair, right_pair, side="left")
        left_end = np.searchsorted(left_pair, right_pair, side="right")
        not_greater = np.searchsorted(left_keys, right_keys, side="right") - left_start
        inversions += int(np.sum(left_end - left_start - not_greater))
        current = np.sort(pair * k + current) - pair * k
        width *= 2
    return inversions


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's tau-b (Kendall 1945; Knight's O(n log n) counting, 1966):

    tau_b = (n0 - n1 - n2 + n3 - 2 D) / sqrt((n0 - n1)(n0 - n2)), n0 = n (n - 1) / 2,
    n1 / n2 / n3 the pairs tied in x / in y / in both, D the discordant pairs (the strict
    inversions of y once the pairs are sorted by x, then y). NaN when x or y is constant.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = x.size
    if n < 2:
        return math.nan
    _, x_code = np.unique(x, return_inverse=True)
    _, y_code = np.unique(y, return_inverse=True)
    order = np.lexsort((y_code, x_code))
    x_code, y_code = x_code[order], y_code[order]
    n0 = n * (n - 1) // 2
    n1 = _tie_pairs(x_code)
    n2 = _tie_pairs(np.sort(y_code))
    n3 = _tie_pairs(x_code * (int(y_code.max()) + 1) + y_code)
    if n0 in (n1, n2):
        return math.nan
    discordant = _strict_inversions(y_code)
    tau = (n0 - n1 - n2 + n3 - 2 * discordant) / math.sqrt(n0 - n1) / math.sqrt(n0 - n2)
    return min(1.0, max(-1.0, tau))


@dataclass(frozen=True)
class DimensionCorrelation:
    dimension_a: str
    dimension_b: str
    n_videos: int
    spearman: float
    kendall: float


def dimension_correlation(
    *, mos: pd.DataFrame, dimensions: list, column: str = "mos"
) -> list[DimensionCorrelation]:
    """Spearman and Kendall between every pair of dimensions' ``column`` over common videos."""
    wide = mos.pivot(index="video_id", columns="dimension", values=column)
    result = []
    for a, b in combinations(list(dimensions), 2):
        if a not in wide.columns or b not in wide.columns:
            continue
        pair = wide[[a, b]].dropna().to_numpy()
        x, y = pair[:, 0], pair[:, 1]
        rho = kendall = math.nan
        if x.size >= 2 and np.ptp(x) > 0 and np.ptp(y) > 0:
            rho = spearman(x, y)
            kendall = kendall_tau_b(x, y)
        result.append(
            DimensionCorrelation(
                dimension_a=str(a),
                dimension_b=str(b),
                n_videos=int(x.size),
                spearman=rho,
                kendall=kendall,
            )
        )
    return result
