"""Models of rater bias and inconsistency, solved iteratively.

Both fit the generative model of Li & Bampis (2017) and Li et al. (2020), "A
simple model for subject behavior in subjective experiments" (HVEI 2020):

    X_ij = psi_i + Delta_ij,   Delta_ij ~ N(b_j, v_j^2)

with psi_i the true quality of video i, b_j rater j's bias and v_j their
inconsistency. Both mirror Netflix SUREAL 0.9 exactly (same initialisation,
update order, step sizes and stopping rules), on dense (videos, raters) arrays
with a presence mask instead of SUREAL's per-iteration tiling.
"""

from __future__ import annotations

import numpy as np

from quality.stats.subjective.mos_models import _Masked
from quality.stats.subjective.result import SubjectiveModelResult

# ITU-T P.910 Annex E / SUREAL SubjectMLEModelProjectionSolver constants.
P910_MAX_ITERATIONS = 1000
P910_DELTA_THRESHOLD = 1e-8
P910_WEIGHT_EPSILON = 1e-8  # keeps 1 / v_j^2 finite for a perfectly consistent rater

# SUREAL MaximumLikelihoodEstimationModel constants (simplified gradient).
MLE_MAX_ITERATIONS = 10000
MLE_DELTA_THRESHOLD = 1e-8
MLE_REFRESH_RATE = 0.1  # damped Newton-Raphson: new = 0.9 old + 0.1 Newton step


class _Sums:
    """Per-rater and per-video sums of the residuals r_ij = x_ij - psi_i - b_j.

    Sums that are linear in the scores are matrix-vector products with the
    zero-filled matrix and the presence mask; sums of squared residuals are
    taken on the residuals themselves (not by expanding the square), because
    the MLE can drive a rater's inconsistency towards 0, where only the direct
    sum keeps its accuracy.
    """

    def __init__(self, scores: np.ndarray) -> None:
        masked = _Masked(scores)
        self.present = masked.present.astype(np.float64)
        self.filled = masked.filled
        self.count_per_video = masked.count_per_video
        self.count_per_rater = masked.count_per_rater
        self.video_totals = self.filled.sum(axis=1)
        self.rater_totals = self.filled.sum(axis=0)

    def mos(self) -> np.ndarray:
        return self.video_totals / self.count_per_video

    def bias_given(self, quality: np.ndarray) -> np.ndarray:
        """b_j = mean over rater j's videos of (x_ij - psi_i)."""
        return (self.rater_totals - quality @ self.present) / self.count_per_rater

    def residuals(self, quality: np.ndarray, bias: np.ndarray) -> np.ndarray:
        """r_ij on present cells, 0 elsewhere."""
        fitted = np.add.outer(quality, bias)
        fitted *= self.present
        return np.subtract(self.filled, fitted, out=fitted)

    def per_rater(self, quality: np.ndarray, bias: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(sum_i r_ij, sum_i r_ij^2) over the present cells of each rater j."""
        residual = self.residuals(quality, bias)
        return residual.sum(axis=0), np.einsum("ij,ij->j", residual, residual)

    def per_video(self, quality: np.ndarray, bias: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(sum_j r_ij, sum_j r_ij^2) over the present cells of each video i."""
        residual = self.residuals(quality, bias)
        return residual.sum(axis=1), np.einsum("ij,ij->i", residual, residual)


def _population_std(sums: tuple[np.ndarray, np.ndarray], count: np.ndarray) -> np.ndarray:
    """std (ddof 0) from (sum r, sum r^2): sqrt(max(0, sum r^2 / n - mean^2))."""
    total, square = sums
    mean = total / count
    return np.sqrt(np.maximum(square / count - mean * mean, 0.0))


def _shift_bias_to_zero_mean(
    quality: np.ndarray, bias: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    # The model is invariant to psi + c, b - c; SUREAL pins mean(b) = 0.
    mean_bias = np.mean(bias)
    return quality + mean_bias, bias - mean_bias


def _inverse_sqrt(information: np.ndarray) -> np.ndarray:
    """Standard error from Fisher information: 1 / sqrt(max(0, I))."""
    with np.errstate(divide="ignore"):
        return 1.0 / np.sqrt(np.maximum(0.0, information))


def fit_p910_annex_e(*, scores: np.ndarray) -> SubjectiveModelResult:
    """ITU-T P.910 (10/2023) Annex E: MLE of psi, b, v by alternating projection.

    Start: psi_i = MOS_i, b_j = mean_i (x_ij - psi_i). Repeat:
      v_j = std_i (x_ij - psi_i - b_j)  (ddof 0; v_i likewise per video)
      psi_i = sum_j w_j (x_ij - b_j) / sum_j w_j,  w_j = 1 / (v_j^2 + 1e-8)
      b_j = mean_i (x_ij - psi_i)
    until ||psi - psi_prev|| < 1e-8 or 1000 iterations; then mean(b) is moved
    into psi. Standard errors (SUREAL "P910", SubjectMLEModelProjectionSolver2):
    std(psi_i) = 1/sqrt(sum_j 1/v_i^2) with the per-video residual std v_i,
    std(b_j) = 1/sqrt(sum_i 1/v_j^2), std(v_j) from the observed information
    sum_i [1/v_j^2 - 3 r_ij^2 / v_j^4].
    """
    sums = _Sums(scores)
    present = sums.present
    quality = sums.mos()
    bias = sums.bias_given(quality)
    iterations = 0
    with np.errstate(divide="ignore", invalid="ignore"):
        while True:
            previous_quality, previous_bias = quality, bias
            rater_std = _population_std(sums.per_rater(quality, bias), sums.count_per_rater)
            weights = 1.0 / (rater_std**2 + P910_WEIGHT_EPSILON)
            quality = (sums.filled @ weights - present @ (bias * weights)) / (present @ weights)
            bias = sums.bias_given(quality)
            iterations += 1
            if np.linalg.norm(previous_quality - quality) < P910_DELTA_THRESHOLD:
                break
            if iterations >= P910_MAX_ITERATIONS:
                break
        # SUREAL's per-video residual std comes from the last iteration's start point.
        video_std = _population_std(
            sums.per_video(previous_quality, previous_bias), sums.count_per_video
        )
        rater_var = rater_std**2
        quality_std = _inverse_sqrt(sums.count_per_video / video_std**2)
        bias_std = _inverse_sqrt(sums.count_per_rater / rater_var)
        _, squares = sums.per_rater(quality, bias)
        information = -(
            sums.count_per_rater / rater_var + squares * (-3 * rater_std**4) / rater_var**4
        )
        inconsistency_std = _inverse_sqrt(information)
    quality, bias = _shift_bias_to_zero_mean(quality, bias)
    return SubjectiveModelResult(
        model="p910_annex_e",
        quality_scores=quality,
        quality_scores_std=quality_std,
        observer_bias=bias,
        observer_bias_std=bias_std,
        observer_inconsistency=rater_std,
        observer_inconsistency_std=inconsistency_std,
        iterations=iterations,
    )


def fit_mle(*, scores: np.ndarray) -> SubjectiveModelResult:
    """MLE of psi, b, v by damped Newton-Raphson (SUREAL "MLE_CO", content oblivious).

    Log-likelihood L = sum_ij [-log v_j - (x_ij - psi_i - b_j)^2 / (2 v_j^2)] + c.
    Start: psi = MOS, b = 0, v_j = std_i (x_ij - MOS_i) (ddof 0). Each
    iteration updates, in this order, each with new = 0.9 old + 0.1 target:
      b_j target = sum_i (x_ij - psi_i) / v_j^2 / sum_i 1 / v_j^2
      v_j target = v_j - (dL/dv_j) / (d2L/dv_j2),  then v_j = max(v_j, 0)
      psi_i target = sum_j (x_ij - b_j) / v_j^2 / sum_j 1 / v_j^2
    until ||psi - psi_prev|| < 1e-8 or 10000 iterations; then mean(b) is moved
    into psi. Standard errors are 1/sqrt of the diagonal Fisher information
    from the last iteration. Li et al. (2020); ITU-T P.910 Annex E fits the
    same model by alternating projection (see fit_p910_annex_e).
    """
    sums = _Sums(scores)
    present = sums.present
    count = sums.count_per_rater
    quality = sums.mos()
    bias = np.zeros(present.shape[1])
    inconsistency = _population_std(sums.per_rater(quality, bias), count)
    keep = 1.0 - MLE_REFRESH_RATE
    iterations = 0
    with np.errstate(divide="ignore", invalid="ignore"):
        while True:
            previous = quality
            variance = inconsistency**2
            information_bias = count / variance
            target = (sums.rater_totals - quality @ present) / variance / information_bias
            bias = bias * keep + target * MLE_REFRESH_RATE
            # dL/dv_j and d2L/dv_j2 need only sum_i r_ij^2 (with the new b, old psi).
            _, squares = sums.per_rater(quality, bias)
            gradient = -count * inconsistency / variance + inconsistency * squares / variance**2
            curvature = (
                count * (variance / variance**2) + squares * (-3 * inconsistency**4) / variance**4
            )
            target = inconsistency - gradient / curvature
            inconsistency = np.maximum(inconsistency * keep + target * MLE_REFRESH_RATE, 0.0)
            variance = inconsistency**2
            information_quality = present @ (1.0 / variance)
            target = (sums.filled @ (1.0 / variance) - present @ (bias / variance)) / (
                information_quality
            )
            quality = quality * keep + target * MLE_REFRESH_RATE
            iterations += 1
            if np.linalg.norm(previous - quality) < MLE_DELTA_THRESHOLD:
                break
            if iterations >= MLE_MAX_ITERATIONS:
                break
    quality, bias = _shift_bias_to_zero_mean(quality, bias)
    return SubjectiveModelResult(
        model="mle",
        quality_scores=quality,
        quality_scores_std=_inverse_sqrt(information_quality),
        observer_bias=bias,
        observer_bias_std=_inverse_sqrt(information_bias),
        observer_inconsistency=inconsistency,
        observer_inconsistency_std=_inverse_sqrt(-curvature),
        iterations=iterations,
    )
