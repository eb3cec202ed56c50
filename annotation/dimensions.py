"""A study's dimensions, read on every answer: cached in-process for a few seconds (they do
not change while a study runs)."""

from __future__ import annotations

import time

from annotation.models import Dimension

_CACHE: dict[int, tuple[float, list[Dimension]]] = {}
CACHE_S = 30.0


def dimensions_of(study_id: int) -> list[Dimension]:
    """The study's dimensions in rating order (GAIA's syllogism), or its questions."""
    now = time.monotonic()
    cached = _CACHE.get(study_id)
    if cached is None or cached[0] < now:
        dimensions = list(Dimension.objects.filter(study_id=study_id).order_by("order"))
        _CACHE[study_id] = cached = (now + CACHE_S, dimensions)
    return cached[1]


def dimensions_forget(study_id: int) -> None:
    """Drop the cached dimensions of a study (after its dimensions changed)."""
    _CACHE.pop(study_id, None)
