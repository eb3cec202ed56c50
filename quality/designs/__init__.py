"""The analysis side of every study design, keyed like annotation.designs."""

from __future__ import annotations

from quality.designs.base import Analysis, Computed
from quality.designs.preference import PREFERENCE_ANALYSIS
from quality.designs.propose_verify import PROPOSE_VERIFY_ANALYSIS
from quality.designs.questionnaire import QUESTIONNAIRE_ANALYSIS
from quality.designs.ranking import RANKING_ANALYSIS
from quality.designs.slider import SLIDER_ANALYSIS

ANALYSES: dict[str, Analysis] = {
    analysis.key: analysis
    for analysis in (
        SLIDER_ANALYSIS,
        PREFERENCE_ANALYSIS,
        RANKING_ANALYSIS,
        QUESTIONNAIRE_ANALYSIS,
        PROPOSE_VERIFY_ANALYSIS,
    )
}


def analysis_of(study) -> Analysis:
    return ANALYSES[study.design]


__all__ = ["ANALYSES", "Analysis", "Computed", "analysis_of"]
