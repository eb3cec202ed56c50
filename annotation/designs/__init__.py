"""The study designs (DESIGNS.md): each is a ``Design`` entry in its own module; the
journey reaches a design only through ``design_of(study)``."""

from __future__ import annotations

from annotation.designs.base import Design, Gate, QualificationScore, values_digest
from annotation.designs.preference import PREFERENCE
from annotation.designs.propose import PROPOSE_VERIFY
from annotation.designs.questionnaire import QUESTIONNAIRE
from annotation.designs.ranking import RANKING
from annotation.designs.slider import SLIDER

DESIGNS: dict[str, Design] = {
    design.key: design for design in (SLIDER, PREFERENCE, RANKING, QUESTIONNAIRE, PROPOSE_VERIFY)
}


def design_choices() -> list[tuple[str, str]]:
    return [(key, design.label) for key, design in DESIGNS.items()]


def design_of(study) -> Design:
    """The design of a study (or of anything with a `design` key)."""
    return DESIGNS[study.design]


__all__ = [
    "DESIGNS",
    "Design",
    "Gate",
    "QualificationScore",
    "design_choices",
    "design_of",
    "values_digest",
]
