"""Krippendorff's alpha from per-unit value counts, and each rater's agreement with the
final labels.

alpha = 1 - D_o / D_e (Krippendorff, "Computing Krippendorff's Alpha-Reliability", 2011).
With n_uc the number of values c in unit u and m_u = sum_c n_uc, only units with
m_u >= 2 are pairable; the coincidence matrix is

    o_ck = sum_u n_uc (n_uk - [c = k]) / (m_u - 1),

n_c = sum_k o_ck its marginals and n = sum_c n_c, so that

    alpha = 1 - (n - 1) * sum_ck o_ck delta2_ck / sum_ck n_c n_k delta2_ck

with delta2_ck = [c != k] (nominal), (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2 (ordinal, the
values in their order) or (v_c - v_k)^2 (interval). NaN when undefined (no pairable unit,
or no disagreement to expect: D_e = 0). A missing value (an ``invalid`` answer) is simply
not counted. The counts form a (units x values) matrix, so this suits few values
(levels, yes / no); scores use the closed form of ``quality.stats.reliability``, and
``binary_alphas`` gives the nominal alpha of many yes / no columns at once.
"""

from __future__ import annotations

import math

import numpy as np

LEVELS = ("nominal", "ordinal", "interval")


def _squared_distances(level: str, n_c: np.ndarray, values: np.ndarray | None) -> np.ndarray:
    size = n_c.size
    if level == "nominal":
        return 1.0 - np.eye(size)
    if level == "ordinal":
        cumulative = np.r_[0.0, np.cumsum(n_c)]
        low, high = (
            np.minimum.outer(np.arange(size), np.arange(size)),
            np.maximum.outer(np.arange(size), np.arange(size)),
        )
        between = cumulative[high + 1] - cumulative[low]  # sum_{g=low..high} n_g
        return (between - (n_c[:, None] + n_c[None, :]) / 2.0) ** 2
    if level == "interval":
        if values is None:
            raise ValueError("the interval level needs the values")
        values = np.asarray(values, dtype=np.float64)
        return np.subtract.outer(values, values) ** 2
    raise ValueError(f"level must be one of {', '.join(LEVELS)}, not {level!r}")


def alpha_from_counts(*, counts: np.ndarray, level: str, values: np.ndarray | None = None) -> float:
    """Krippendorff's alpha of a (units x values) matrix of value counts (see the module
    docstring); columns in the values' order for the ordinal level, ``values`` their
    numbers for the interval level."""
    counts = np.asarray(counts, dtype=np.float64)
    m = counts.sum(axis=1)
    pairable = counts[m >= 2]
    if pairable.shape[0] == 0:
        return math.nan
    weighted = pairable / (pairable.sum(axis=1, keepdims=True) - 1.0)
    coincidence = weighted.T @ pairable - np.diag(weighted.sum(axis=0))
    n_c = coincidence.sum(axis=1)
    n = n_c.sum()
    delta2 = _squared_distances(level, n_c, values)
    expected = float(n_c @ delta2 @ n_c)
    if expected <= 0.0:
        return math.nan
    return float(1.0 - (n - 1.0) * float(np.sum(coincidence * delta2)) / expected)


def unit_value_counts(
    *, unit: np.ndarray, value: np.ndarray, n_units: int, n_values: int
) -> np.ndarray:
    """The (units x values) count matrix of ``value`` codes grouped by ``unit`` codes."""
    flat = np.bincount(unit * np.int64(n_values) + value, minlength=n_units * n_values)
    return flat.reshape(n_units, n_values)


def binary_alphas(*, chosen: np.ndarray, answered: np.ndarray) -> np.ndarray:
    """Nominal alpha of each column of yes / no data: ``chosen[u, t]`` of the
    ``answered[u]`` raters of unit u said yes to t.

    The coincidences above with two values: over pairable units (m_u >= 2), with
    c_u yes and m_u - c_u no, o_yes,no = sum_u c_u (m_u - c_u) / (m_u - 1), n_yes =
    sum_u c_u, n_no = sum_u (m_u - c_u), n = n_yes + n_no, and

        alpha = 1 - (n - 1) o_yes,no / (n_yes n_no),

    NaN where every value is the same (or no unit is pairable). All columns at once.
    """
    chosen = np.asarray(chosen, dtype=np.float64)
    answered = np.asarray(answered, dtype=np.float64)
    pairable = answered >= 2
    c, m = chosen[pairable], answered[pairable][:, None]
    disagreeing = np.sum(c * (m - c) / (m - 1.0), axis=0)
    n_yes = c.sum(axis=0)
    n_no = np.sum(m - c, axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        alpha = 1.0 - (n_yes + n_no - 1.0) * disagreeing / (n_yes * n_no)
    alpha[(n_yes == 0) | (n_no == 0)] = np.nan
    return alpha
