"""Name -> model registry: the one place the CLI and the tasks look models up."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from quality.stats.subjective.mle_models import fit_mle, fit_p910_annex_e
from quality.stats.subjective.mos_models import fit_bt500, fit_mos, fit_p913, fit_zscore_mos
from quality.stats.subjective.result import SubjectiveModelResult

SubjectiveModelFunction = Callable[..., SubjectiveModelResult]

# name -> (function, the SUREAL 0.9 TYPE it reproduces). Sources:
#   mos           plain MOS (ITU-T P.910 / P.913)
#   zscore_mos    MOS of per-rater z-scores
#   bt500         ITU-R BT.500-14 Annex 1 §2.3.1 kurtosis-based screening, then MOS
#   p913          ITU-T P.913 §12.4 bias removal, BT.500 screening, then MOS
#   p910_annex_e  ITU-T P.910 (2023) Annex E, alternating projection
#   mle           Li et al. 2020 MLE of quality, rater bias and inconsistency
SUBJECTIVE_MODELS: dict[str, SubjectiveModelFunction] = {
    "mos": fit_mos,
    "zscore_mos": fit_zscore_mos,
    "bt500": fit_bt500,
    "p913": fit_p913,
    "p910_annex_e": fit_p910_annex_e,
    "mle": fit_mle,
}

SUREAL_MODEL_TYPES: dict[str, str] = {
    "mos": "MOS",
    "zscore_mos": "ZS_MOS",
    "bt500": "BT500",
    "p913": "P913",
    "p910_annex_e": "P910",
    "mle": "MLE_CO",
}


def fit_subjective_model(*, name: str, scores: np.ndarray) -> SubjectiveModelResult:
    """Fit the model ``name`` (a key of SUBJECTIVE_MODELS) to a (videos, raters)
    score matrix with NaN for missing ratings."""
    try:
        model = SUBJECTIVE_MODELS[name]
    except KeyError:
        known = ", ".join(SUBJECTIVE_MODELS)
        raise ValueError(f"unknown subjective model {name!r}; known: {known}") from None
    return model(scores=np.asarray(scores, dtype=np.float64))
