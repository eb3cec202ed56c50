"""Per-study values read on every answer (dimensions, questions, a vocabulary), cached
in-process for a few seconds: they do not change while a study runs (each is frozen once
the study has answers), and whoever changes one before that calls ``forget``."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")

CACHE_S = 30.0


class StudyCache(Generic[T]):
    """``get(study_id)``: ``load(study_id)``, kept for ``seconds``; ``forget(study_id)``
    drops it, so the next ``get`` loads it again."""

    def __init__(self, load: Callable[[int], T], *, seconds: float = CACHE_S) -> None:
        self._load = load
        self._seconds = seconds
        self._entries: dict[int, tuple[float, T]] = {}

    def get(self, study_id: int) -> T:
        now = time.monotonic()
        cached = self._entries.get(study_id)
        if cached is None or cached[0] < now:
            cached = (now + self._seconds, self._load(study_id))
            self._entries[study_id] = cached
        return cached[1]

    def forget(self, study_id: int) -> None:
        self._entries.pop(study_id, None)
