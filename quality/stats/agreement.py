"""Agreement of one rater with the experts: golden PLCC and the qualification share."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def golden_agreement_plcc(*, rater_scores: ArrayLike, expert_means: ArrayLike) -> float | None:
    """Pearson linear correlation between a rater's golden answers and the expert means.

    GAIA's golden gate: a rater continues only if this exceeds 0.7. None when it is
    undefined (fewer than 3 pairs, or either side constant).
    """
    x = np.asarray(rater_scores, dtype=float)
    y = np.asarray(expert_means, dtype=float)
    if x.shape != y.shape:
        raise ValueError("rater_scores and expert_means must have the same length")
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    dx, dy = x - x.mean(), y - y.mean()
    return float(np.dot(dx, dy) / np.sqrt(np.dot(dx, dx) * np.dot(dy, dy)))


def within_tolerance(
    *,
    rater_scores: ArrayLike,
    expert_means: ArrayLike,
    expert_sigmas: ArrayLike,
    tolerance_sigma: float = 1.5,
) -> np.ndarray:
    """Per answer: |expert_mean - score| <= tolerance_sigma * sigma_expert (GAIA).

    The boundary counts as within ("within k sigma" includes k sigma), so that an item
    whose experts all agreed (sigma 0) is passed by the exact answer; PROTOCOL.md writes
    the bound with <, which would make such an item impossible to pass.
    """
    x = np.asarray(rater_scores, dtype=float)
    mean = np.asarray(expert_means, dtype=float)
    sigma = np.asarray(expert_sigmas, dtype=float)
    return np.abs(mean - x) <= tolerance_sigma * sigma


def qualification_share(within: ArrayLike) -> float:
    """Share of answers within tolerance, from their ``within_tolerance`` flags; 0 for
    no answers."""
    flags = np.asarray(within, dtype=bool)
    return float(np.mean(flags)) if flags.size else 0.0


def qualification_passed(share: float, pass_share: float = 0.75) -> bool:
    return share >= pass_share
