"""The one result type every subjective model returns."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Two-sided 95 % normal quantile, with the 6 digits SUREAL uses.
Z_95 = 1.95996


@dataclass(frozen=True, eq=False)
class SubjectiveModelResult:
    """Per-video quality estimates and per-rater parameters of one model.

    Arrays are indexed like the input matrix: ``quality_scores[i]`` is video
    row ``i``, ``observer_*[j]`` is rater column ``j``. A field a model does
    not estimate is None.

    - quality_scores / quality_scores_std: estimate of each video's quality and
      its standard error (MOS models: sample std / sqrt(n); MLE models: the
      inverse square root of the Fisher information).
    - observer_bias (b_j), observer_inconsistency (v_j) and their standard errors.
    - observer_rejected: BT.500 screening verdict per rater, with the two
      statistics it is based on: screening_outlier_fraction = (P_j + Q_j) / N_videos
      and screening_asymmetry = |P_j - Q_j| / (P_j + Q_j) (NaN when P_j + Q_j = 0).
    - iterations: solver iterations (0 for closed-form models).
    """

    model: str
    quality_scores: np.ndarray
    quality_scores_std: np.ndarray | None = None
    observer_bias: np.ndarray | None = None
    observer_bias_std: np.ndarray | None = None
    observer_inconsistency: np.ndarray | None = None
    observer_inconsistency_std: np.ndarray | None = None
    observer_rejected: np.ndarray | None = None
    screening_outlier_fraction: np.ndarray | None = None
    screening_asymmetry: np.ndarray | None = None
    iterations: int = 0

    @property
    def quality_scores_ci95(self) -> np.ndarray | None:
        """Half-width of the 95 % confidence interval: 1.95996 * std."""
        return None if self.quality_scores_std is None else Z_95 * self.quality_scores_std

    @property
    def rejected_observers(self) -> tuple[int, ...]:
        """Column indices of the raters the screening rejected (empty if none)."""
        if self.observer_rejected is None:
            return ()
        return tuple(int(j) for j in np.flatnonzero(self.observer_rejected))

    def rejection_reasons(self, *, rater_ids: tuple[str, ...] | None = None) -> dict[str, str]:
        """Human-readable reason per rejected rater, keyed by id (or column index)."""
        reasons: dict[str, str] = {}
        for j in self.rejected_observers:
            key = rater_ids[j] if rater_ids is not None else str(j)
            reasons[key] = (
                f"BT.500 screening: {self.screening_outlier_fraction[j]:.1%} of the videos "
                f"rated outside the accepted range (> 5%), asymmetry "
                f"|P-Q|/(P+Q) = {self.screening_asymmetry[j]:.2f} (< 0.3)"
            )
        return reasons
