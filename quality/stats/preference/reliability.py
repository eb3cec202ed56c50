"""Krippendorff's alpha for side-by-side judgments (nominal level).

A unit is one trial: (question, content, unordered pair); a judgment's value is the
condition it preferred, or "equal". Left/right are mapped to conditions first, so two
raters who saw the pair in opposite placements and preferred the same video agree.

Nominal alpha from the coincidence matrix (Krippendorff, "Computing Krippendorff's
Alpha-Reliability", 2011): with n_uc the number of values c in unit u, m_u = sum_c n_uc,
only units with m_u >= 2 pairable, n = sum m_u, n_c = sum_u n_uc and
o_cc = sum_u n_uc (n_uc - 1) / (m_u - 1),

    alpha = 1 - (n - 1) (n - sum_c o_cc) / (n^2 - sum_c n_c^2).

Every judgment is a value, so a rater who judged a trial twice adds two values (the
multi-valued definition).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from quality.stats.preference.judgments import A_PREFERRED, B_PREFERRED, JudgmentTable


def nominal_alpha(*, units: np.ndarray, values: np.ndarray) -> float:
    """Nominal alpha of ``values`` (non-negative int codes) grouped by ``units`` (int
    codes); NaN when undefined (no unit with two values, or a single value overall)."""
    units = np.asarray(units, dtype=np.int64)
    values = np.asarray(values, dtype=np.int64)
    if units.size == 0:
        return math.nan
    unit, _ = pd.factorize(units)
    value, _ = pd.factorize(values)
    n_values = int(value.max()) + 1
    m = np.bincount(unit)
    pairable = m[unit] >= 2
    if not pairable.any():
        return math.nan
    unit, value = unit[pairable], value[pairable]
    cell_count = np.bincount(unit * n_values + value)
    cells = np.flatnonzero(cell_count)
    n_uc = cell_count[cells].astype(np.float64)
    m_u = m[cells // n_values].astype(np.float64)
    n = float(unit.size)
    observed_same = float(np.sum(n_uc * (n_uc - 1) / (m_u - 1)))
    n_c = np.bincount(value, minlength=n_values).astype(np.float64)
    expected = n * n - float(np.sum(n_c * n_c))
    if expected == 0:
        return math.nan
    return 1.0 - (n - 1) * (n - observed_same) / expected


def preference_alpha(*, table: JudgmentTable) -> dict[str, float]:
    """Nominal alpha per question (module docstring), keyed by question id."""
    n_conditions = table.conditions.size
    preferred = np.where(
        table.outcome == A_PREFERRED,
        table.condition_a,
        np.where(table.outcome == B_PREFERRED, table.condition_b, n_conditions),
    )
    trial = (table.content * n_conditions + table.condition_a) * n_conditions + table.condition_b
    alphas = {}
    for q in np.unique(table.question):
        rows = table.question == q
        alphas[str(table.questions[q])] = nominal_alpha(units=trial[rows], values=preferred[rows])
    return alphas
