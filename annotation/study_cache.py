"""Per-study values read on every answer (dimensions, questions, a vocabulary), cached
in-process for a few seconds once the study has answers: what answers name no longer
changes then (each is frozen once the study has answers; a dimension's wording edited in
the admin shows within CACHE_S). Before that, an admin may still replace them, from the
admin (in this process: ``forget``) or from the command line (another process, whose
``forget`` reaches no web worker: a rater's answer then named questions that were gone,
a 500 for up to CACHE_S), so each ``get`` loads them again until the first answer."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")

CACHE_S = 30.0


def _has_answers(study_id: int) -> bool:
    from annotation.models import Answer

    return Answer.objects.filter(item__study_id=study_id).exists()


class StudyCache(Generic[T]):
    """``get(study_id)``: ``load(study_id)``, kept for ``seconds`` once ``frozen(study_id)``
    (default: the study has answers), loaded again on every ``get`` before;
    ``forget(study_id)`` drops it, so the next ``get`` loads it again."""

    def __init__(
        self,
        load: Callable[[int], T],
        *,
        seconds: float = CACHE_S,
        frozen: Callable[[int], bool] = _has_answers,
    ) -> None:
        self._load = load
        self._seconds = seconds
        self._frozen = frozen
        self._entries: dict[int, tuple[float, T]] = {}
        self._frozen_ids: set[int] = set()  # frozen for good: asked once per study

    def get(self, study_id: int) -> T:
        now = time.monotonic()
        cached = self._entries.get(study_id)
        if cached is not None and cached[0] >= now:
            return cached[1]
        value = self._load(study_id)
        if study_id in self._frozen_ids or self._frozen(study_id):
            self._frozen_ids.add(study_id)
            self._entries[study_id] = (now + self._seconds, value)
        else:
            self._entries.pop(study_id, None)
        return value

    def forget(self, study_id: int) -> None:
        self._entries.pop(study_id, None)
