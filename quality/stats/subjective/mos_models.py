"""Closed-form models: MOS, z-scored MOS, BT.500 screening, P.913 bias removal.

Every function takes ``scores`` of shape (videos, raters) with NaN for a
missing rating and mirrors the definitions of Netflix SUREAL 0.9
(``sureal.subjective_model``): the same estimators, the same order of the
preprocessing steps and the same handling of missing ratings, so results agree
with it to floating-point rounding.
"""

from __future__ import annotations

import numpy as np

from quality.stats.subjective.result import SubjectiveModelResult

# BT.500-14 Annex 1 §2.3.1: a rater is rejected when more than 5 % of their
# ratings fall outside the range and those outliers are not one-sided (< 0.3).
SCREENING_OUTLIER_FRACTION = 0.05
SCREENING_ASYMMETRY = 0.3
# Kurtosis in [2, 4] means "normal enough": the range is mean +- 2 sigma, else
# mean +- sqrt(20) sigma.
SCREENING_NORMAL_KURTOSIS = (2.0, 4.0)


class _Masked:
    """The score matrix with NaN replaced by 0 and its presence mask.

    Sums of the zero-filled matrix along an axis equal numpy's nan-functions
    bit for bit (np.nansum also fills with 0 and sums the full rows), which is
    why this layout is kept C-contiguous (videos, raters).
    """

    def __init__(self, scores: np.ndarray) -> None:
        scores = np.ascontiguousarray(scores, dtype=np.float64)
        if scores.ndim != 2:
            raise ValueError("scores must be a (videos, raters) matrix")
        self.present = ~np.isnan(scores)
        self.dense = bool(self.present.all())
        self.filled = np.where(self.present, scores, 0.0)
        self.count_per_video = self.present.sum(axis=1)
        self.count_per_rater = self.present.sum(axis=0)

    def zero_missing(self, values: np.ndarray) -> np.ndarray:
        """Set the missing cells of a (videos, raters) array to 0, in place."""
        if not self.dense:
            np.copyto(values, 0.0, where=~self.present)
        return values

    def mean(self, values: np.ndarray, *, axis: int) -> np.ndarray:
        """np.nanmean of ``values`` (already zero at missing cells)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return values.sum(axis=axis) / self._count(axis)

    def std(self, values: np.ndarray, *, axis: int, ddof: int) -> np.ndarray:
        """np.nanstd: two-pass, sum of squared deviations over present cells / (n - ddof)."""
        count = self._count(axis)
        mean = self.mean(values, axis=axis)
        deviation = self.zero_missing(values - np.expand_dims(mean, axis))
        dof = count - ddof
        with np.errstate(invalid="ignore", divide="ignore"):
            variance = (deviation * deviation).sum(axis=axis) / dof
        variance[dof <= 0] = np.nan
        return np.sqrt(variance)

    def _count(self, axis: int) -> np.ndarray:
        return self.count_per_rater if axis == 0 else self.count_per_video


def _mos_result(
    model: str, scores: _Masked, columns: np.ndarray | None = None, **extra
) -> SubjectiveModelResult:
    """MOS = mean over raters; std error = sample std (ddof 1) / sqrt(n)."""
    masked = scores if columns is None else _Masked(_restore_nan(scores)[:, columns])
    mos = masked.mean(masked.filled, axis=1)
    std = masked.std(masked.filled, axis=1, ddof=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mos_std = std / np.sqrt(masked.count_per_video)
    return SubjectiveModelResult(
        model=model, quality_scores=mos, quality_scores_std=mos_std, **extra
    )


def _restore_nan(scores: _Masked) -> np.ndarray:
    return np.where(scores.present, scores.filled, np.nan)


def zscore_per_rater(*, scores: np.ndarray) -> np.ndarray:
    """z_ij = (x_ij - mean_j) / std_j over each rater's ratings (sample std, ddof 1)."""
    masked = _Masked(scores)
    mean = masked.mean(masked.filled, axis=0)
    std = masked.std(masked.filled, axis=0, ddof=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (_restore_nan(masked) - mean) / std


def remove_rater_bias(*, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ITU-T P.913 (2021) §12.4 bias removal; returns (unbiased scores, bias per rater).

    b_j = mean over the videos j rated of (x_ij - MOS_i), with MOS_i the plain
    mean over raters; the unbiased score is x_ij - b_j.
    """
    masked = _Masked(scores)
    mos = masked.mean(masked.filled, axis=1)
    residual = masked.zero_missing(masked.filled - mos[:, None])
    bias = masked.mean(residual, axis=0)
    return _restore_nan(masked) - bias, bias


def bt500_screening(*, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ITU-R BT.500-14 Annex 1 §2.3.1 observer screening (kurtosis-based).

    Per video i (over the raters who rated it): mean mu_i, std sigma_i (ddof 0)
    and kurtosis beta2_i = m4 / m2^2. If 2 <= beta2_i <= 4 the range is
    mu_i +- 2 sigma_i, else mu_i +- sqrt(20) sigma_i. P_j / Q_j count rater j's
    ratings at or above / at or below the range edges. Rater j is rejected when
    (P_j + Q_j) / N_videos > 0.05 and |P_j - Q_j| / (P_j + Q_j) < 0.3; if every
    rater would be rejected, none is (SUREAL's rule).

    Returns (rejected mask, outlier fraction, asymmetry) per rater.
    """
    masked = _Masked(scores)
    n_videos, n_raters = masked.filled.shape
    above = np.zeros(n_raters)
    below = np.zeros(n_raters)
    # Rows are grouped by their number of ratings and compacted, so that each
    # video's mean and moments are summed over exactly the same vector, in the
    # same order, as a per-video 1-d computation: tie decisions at the range
    # edges and at kurtosis 2 or 4 (common with integer scores) then match.
    for count in np.unique(masked.count_per_video):
        if count == 0:
            continue
        rows = np.flatnonzero(masked.count_per_video == count)
        present = masked.present[rows]
        values = masked.filled[rows][present].reshape(len(rows), count)
        columns = np.nonzero(present)[1].reshape(len(rows), count)
        mean = values.mean(axis=1, keepdims=True)
        deviation = values - mean
        m2 = (deviation**2).mean(axis=1, keepdims=True)
        m4 = ((deviation**2) ** 2).mean(axis=1, keepdims=True)
        sigma = np.sqrt(m2)
        with np.errstate(invalid="ignore", divide="ignore"):
            # scipy.stats.kurtosis(fisher=False) is NaN for (near-)constant data.
            zero = m2 <= (np.finfo(np.float64).eps * mean) ** 2
            kurtosis = np.where(zero, np.nan, m4 / m2**2.0)
        low, high = SCREENING_NORMAL_KURTOSIS
        width = np.where((low <= kurtosis) & (kurtosis <= high), 2.0, np.sqrt(20))
        above += np.bincount(
            columns.ravel(), weights=(values >= mean + width * sigma).ravel(), minlength=n_raters
        )
        below += np.bincount(
            columns.ravel(), weights=(values <= mean - width * sigma).ravel(), minlength=n_raters
        )
    outlier_fraction = (above + below) / n_videos
    with np.errstate(invalid="ignore", divide="ignore"):
        asymmetry = np.abs((above - below) / (above + below))
    rejected = (outlier_fraction > SCREENING_OUTLIER_FRACTION) & (asymmetry < SCREENING_ASYMMETRY)
    if rejected.all():
        rejected[:] = False
    return rejected, outlier_fraction, asymmetry


def fit_mos(*, scores: np.ndarray) -> SubjectiveModelResult:
    """Plain mean opinion score (ITU-T P.910 / P.913): MOS_i = mean_j x_ij (SUREAL "MOS")."""
    return _mos_result("mos", _Masked(scores))


def fit_zscore_mos(*, scores: np.ndarray) -> SubjectiveModelResult:
    """MOS of per-rater z-scores (SUREAL "ZS_MOS"): scores lose their 1-5 scale."""
    return _mos_result("zscore_mos", _Masked(zscore_per_rater(scores=scores)))


def _screened_mos(model: str, scores: np.ndarray, **extra) -> SubjectiveModelResult:
    rejected, fraction, asymmetry = bt500_screening(scores=scores)
    return _mos_result(
        model,
        _Masked(scores),
        columns=np.flatnonzero(~rejected),
        observer_rejected=rejected,
        screening_outlier_fraction=fraction,
        screening_asymmetry=asymmetry,
        **extra,
    )


def fit_bt500(*, scores: np.ndarray) -> SubjectiveModelResult:
    """ITU-R BT.500-14 Annex 1 §2.3.1: screen raters, then MOS of the kept ones.

    Mirrors SUREAL "BT500" (SubjrejMosModel).
    """
    return _screened_mos("bt500", scores)


def fit_p913(*, scores: np.ndarray) -> SubjectiveModelResult:
    """ITU-T P.913 §12.4: remove each rater's bias, BT.500-screen the unbiased
    scores, then MOS of the kept raters (SUREAL "P913", BiasremvSubjrejMosModel).

    observer_bias covers every rater, rejected ones included.
    """
    unbiased, bias = remove_rater_bias(scores=scores)
    return _screened_mos("p913", unbiased, observer_bias=bias)
