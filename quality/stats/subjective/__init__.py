"""Subjective models beyond the plain MOS, checked against Netflix SUREAL 0.9.

Input: a (videos, raters) score matrix with NaN for missing ratings, e.g. from
``pivot_scores`` / ``read_scores_csv``. Output: ``SubjectiveModelResult``.
"""

from quality.stats.subjective.mle_models import fit_mle, fit_p910_annex_e
from quality.stats.subjective.mos_models import (
    bt500_screening,
    fit_bt500,
    fit_mos,
    fit_p913,
    fit_zscore_mos,
    remove_rater_bias,
    zscore_per_rater,
)
from quality.stats.subjective.registry import (
    SUBJECTIVE_MODELS,
    SUREAL_MODEL_TYPES,
    fit_subjective_model,
)
from quality.stats.subjective.result import SubjectiveModelResult
from quality.stats.subjective.table import ScoreMatrix, pivot_scores, read_scores_csv

__all__ = [
    "SUBJECTIVE_MODELS",
    "SUREAL_MODEL_TYPES",
    "ScoreMatrix",
    "SubjectiveModelResult",
    "bt500_screening",
    "fit_bt500",
    "fit_mle",
    "fit_mos",
    "fit_p910_annex_e",
    "fit_p913",
    "fit_subjective_model",
    "fit_zscore_mos",
    "pivot_scores",
    "read_scores_csv",
    "remove_rater_bias",
    "zscore_per_rater",
]
