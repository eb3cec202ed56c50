"""Agreement between rankings: Kendall's W, Kendall's tau-b and Spearman's rho.

Rankings are rows of tie-group levels (0 = best) or of scores; ties are allowed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from quality.stats.ranking.borda import average_places


@dataclass(frozen=True)
class Concordance:
    """Kendall's W over ``n_rankings`` rankings of ``n_conditions`` conditions, its
    chi-square statistic m(n-1)W on n-1 degrees of freedom and that test's p-value."""

    w: float
    chi2: float
    df: int
    p_value: float
    n_rankings: int
    n_conditions: int


def kendall_w(level: np.ndarray) -> Concordance:
    """Kendall's coefficient of concordance W of m rankings of n conditions, with ties.

    Kendall & Babington Smith (1939), "The problem of m rankings", Ann. Math. Statist. 10;
    tie correction as in Kendall (1948) and Siegel (1956, Sec. 9): with R_i the sum of
    condition i's mid-rank places, S = sum_i (R_i - m(n+1)/2)^2 and T_j = sum over ranking
    j's tied groups of (t^3 - t),

        W = 12 S / (m^2 (n^3 - n) - m sum_j T_j).

    Test of no agreement: m(n-1)W ~ chi-square(n-1) (Friedman 1937; the tie-corrected
    Friedman statistic equals it). W is NaN with fewer than 2 rankings or when every
    ranking ties everything.
    """
    level = np.asarray(level)
    m, n = level.shape
    rank_sums = average_places(level).sum(axis=0)
    s = float(((rank_sums - m * (n + 1) / 2.0) ** 2).sum())
    group_sizes = (level[:, None, :] == level[:, :, None]).sum(axis=2)  # t per member
    # A group of t members contributes t^3 - t once: (t^2 - 1) from each member.
    ties = float((group_sizes.astype(np.float64) ** 2 - 1.0).sum())
    denominator = m * m * (n**3 - n) - m * ties
    if m < 2 or denominator <= 0:
        return Concordance(np.nan, np.nan, n - 1, np.nan, m, n)
    w = 12.0 * s / denominator
    chi2 = m * (n - 1) * w
    return Concordance(w, chi2, n - 1, float(stats.chi2.sf(chi2, n - 1)), m, n)


def _pair_signs(values: np.ndarray) -> np.ndarray:
    """(..., P) sign(values[..., i] - values[..., j]) over the pairs i < j."""
    n = values.shape[-1]
    i, j = np.triu_indices(n, k=1)
    return np.sign(values[..., i] - values[..., j])


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b between the rows of x and of y (same shape, ``(..., n)``; values of
    the same direction, e.g. both levels or both scores).

    tau_b = (C - D) / sqrt((n0 - n1)(n0 - n2)) with C - D the sum over pairs of
    sign(dx) sign(dy), n0 = n(n-1)/2 and n1, n2 the pairs tied in x, in y (Kendall 1945,
    "The treatment of ties in ranking problems", Biometrika 33). NaN where x or y ties
    everything.
    """
    sx, sy = _pair_signs(np.asarray(x, float)), _pair_signs(np.asarray(y, float))
    score = (sx * sy).sum(axis=-1)
    untied = np.sqrt((sx != 0).sum(axis=-1) * (sy != 0).sum(axis=-1).astype(np.float64))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(untied > 0, score / untied, np.nan)


def tau_b_null_variance(level: np.ndarray) -> np.ndarray:
    """Variance of tau-b between each ranking (rows of tie levels) and an independent
    ranking WITHOUT ties, under the hypothesis of no association.

    var(S) = [n(n-1)(2n+5) - sum_t t(t-1)(2t+5)] / 18 over the ranking's tied groups
    (Kendall 1948, Rank Correlation Methods, Ch. 4, with ties in one ranking only; the
    variance ``scipy.stats.kendalltau`` uses for its asymptotic p-value), and
    tau_b = S / sqrt((n0 - n1) n0). NaN where the ranking ties everything.
    """
    level = np.asarray(level)
    n = level.shape[-1]
    sizes = (level[..., None, :] == level[..., :, None]).sum(axis=-1).astype(np.float64)
    # Each member of a group of t adds (t-1)(2t+5) and n1 += (t-1)/2: summed, t(t-1)(2t+5)
    # and t(t-1)/2 per group.
    ties_var = ((sizes - 1) * (2 * sizes + 5)).sum(axis=-1)
    tied_pairs = ((sizes - 1) / 2).sum(axis=-1)
    n0 = n * (n - 1) / 2
    var_s = (n * (n - 1) * (2 * n + 5) - ties_var) / 18.0
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n0 - tied_pairs > 0, var_s / ((n0 - tied_pairs) * n0), np.nan)


def mid_ranks(values: np.ndarray) -> np.ndarray:
    """Mid-ranks (1 = smallest) of the last axis, ties averaged."""
    values = np.asarray(values, float)
    below = (values[..., None, :] < values[..., :, None]).sum(axis=-1)
    equal = (values[..., None, :] == values[..., :, None]).sum(axis=-1)
    return below + (equal + 1) / 2.0


def spearman_rho(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rho: Pearson's r of the mid-ranks of x and y (Spearman 1904, "The proof
    and measurement of association between two things"); NaN if either is constant."""
    rx, ry = mid_ranks(x), mid_ranks(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    scale = float(np.sqrt((rx * rx).sum() * (ry * ry).sum()))
    return float((rx * ry).sum() / scale) if scale > 0 else float("nan")
