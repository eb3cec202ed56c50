"""The files of deleted videos: removed from storage once the deletion is committed.

A video's rendition and poster are its own (named after the stimulus); its source file
may be shared (the segments of one long video in a propose-then-verify study name one
file), so a source is removed only when no stimulus left names it. Removal waits for the
commit (a deletion rolled back keeps its files) and a file that cannot be removed is
logged, never raised: the videos are gone either way, and a file left behind costs disk
space, not data.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import QuerySet

from annotation.models import Stimulus

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class StoredFiles:
    sources: frozenset[str]
    own: frozenset[str]  # renditions and posters


def files_of(stimuli: QuerySet[Stimulus]) -> StoredFiles:
    """The names in storage of the videos' files (read before they are deleted)."""
    rows = list(stimuli.values_list("source_file", "rendition", "poster"))
    return StoredFiles(
        sources=frozenset(source for source, _, _ in rows if source),
        own=frozenset(name for _, *made in rows for name in made if name),
    )


def remove_when_committed(files: StoredFiles) -> None:
    """Remove the files once the current transaction commits (at once outside one)."""
    transaction.on_commit(lambda: _remove(files))


def _remove(files: StoredFiles) -> None:
    named = set(
        Stimulus.objects.filter(source_file__in=files.sources).values_list("source_file", flat=True)
    )
    doomed = sorted(files.own | (files.sources - named))
    for name in doomed:
        try:
            default_storage.delete(name)
        except OSError as exc:
            logger.warning("could not remove %s of a deleted video: %s", name, exc)
    logger.info(
        "removed %d file(s) of deleted videos (%d source(s) kept, still named by others)",
        len(doomed),
        len(files.sources & named),
    )
