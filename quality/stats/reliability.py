"""Krippendorff's alpha (inter-annotator agreement, GAIA Sec. 3.3: 0.6771 / 0.6243 / 0.6311).

alpha = 1 - D_o / D_e (Krippendorff, "Computing Krippendorff's Alpha-Reliability", 2011).
For the interval metric delta(c, k) = (c - k)^2 the coincidence matrix is not needed: with
m_u the number of values in unit u (only units with m_u >= 2 are pairable), n = sum m_u
over pairable units, and for a unit the ordered-pair sum
sum_{i != j} (x_i - x_j)^2 = 2 (m_u sum x^2 - (sum x)^2) = 2 m_u SSW_u
(SSW_u: squared deviations from the unit mean),

    D_o = (1 / n) sum_u 2 m_u SSW_u / (m_u - 1)
    D_e = (1 / (n (n - 1))) sum_{i != j over all pairable values} (x_i - x_j)^2
        = 2 SST / (n - 1)            (SST: squared deviations from the grand mean)

so alpha = 1 - (n - 1) sum_u [m_u SSW_u / (m_u - 1)] / (n SST). Computed with two
bincount passes (means, then squared deviations) rather than raw power sums, so large
scores do not cancel. Every rating is a value: a rater who rated a unit twice adds two
values, as in Krippendorff's general (multi-valued) definition.
Other levels (nominal, ordinal, ratio) go to the ``krippendorff`` package.
"""

from __future__ import annotations

import math

import numpy as np


def krippendorff_alpha_interval(*, units: np.ndarray, values: np.ndarray) -> float:
    """Interval alpha of values grouped by unit codes (non-negative ints); NaN if undefined.

    Undefined: no unit with two values, or no variation among the pairable values.
    """
    units = np.asarray(units, dtype=np.int64)
    values = np.asarray(values, dtype=np.float64)
    if units.size == 0:
        return math.nan
    m = np.bincount(units)
    pairable = m[units] >= 2
    units, values = units[pairable], values[pairable]
    n = values.size
    if n == 0:
        return math.nan
    sums = np.bincount(units, weights=values, minlength=m.size)
    unit_mean = sums / np.maximum(m, 1)
    ssw = np.bincount(units, weights=(values - unit_mean[units]) ** 2, minlength=m.size)
    sst = float(np.sum((values - values.mean()) ** 2))
    if sst == 0.0:
        return math.nan
    used = m >= 2
    within = float(np.sum(m[used] * ssw[used] / (m[used] - 1)))
    return 1.0 - (n - 1) * within / (n * sst)


def krippendorff_alpha(
    *,
    raters: np.ndarray,
    units: np.ndarray,
    values: np.ndarray,
    level: str = "interval",
) -> float:
    """Alpha at any level of measurement from long arrays (rater, unit codes, value).

    Interval uses the closed form above; the other levels build the (raters x units)
    reliability matrix for ``krippendorff.alpha``, which needs one value per (rater,
    unit): a repeated pair raises ValueError. NaN where alpha is undefined.
    """
    if level == "interval":
        return krippendorff_alpha_interval(units=units, values=values)
    import krippendorff

    raters = np.asarray(raters, dtype=np.int64)
    units = np.asarray(units, dtype=np.int64)
    n_raters, n_units = int(raters.max()) + 1, int(units.max()) + 1
    flat = raters * n_units + units
    if np.unique(flat).size != flat.size:
        raise ValueError("a rater gave more than one value to a unit")
    data = np.full((n_raters, n_units), np.nan)
    data.ravel()[flat] = values
    try:
        return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))
    except ValueError:
        return math.nan
