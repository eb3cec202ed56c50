"""A study's dimensions, read on every answer: cached in-process for a few seconds (they do
not change while a study runs)."""

from __future__ import annotations

from annotation.models import Dimension
from annotation.study_cache import StudyCache

_CACHE = StudyCache(
    lambda study_id: list(Dimension.objects.filter(study_id=study_id).order_by("order"))
)


def dimensions_of(study_id: int) -> list[Dimension]:
    """The study's dimensions in rating order (GAIA's syllogism), or its questions."""
    return _CACHE.get(study_id)


def dimensions_forget(study_id: int) -> None:
    """Drop the cached dimensions of a study (after its dimensions changed)."""
    _CACHE.forget(study_id)
