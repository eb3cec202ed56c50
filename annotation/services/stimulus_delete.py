"""Deleting videos (the admin's Stimuli, Delete: a video raters cannot play is replaced by
deleting it and uploading it again).

An item shows its videos; an item left without one of them would break every session it
is in (a rater served it could not be shown anything). So a video goes together with the
items made of it, and their places in sessions and in the orders raters were given (a
session or a qualification attempt left with nothing to answer ends, as after a skipped
video). Nothing a rater answered is lost: while any of those items has an answer, the
video stays (its answers name it). The deleted videos' files leave storage once the
deletion is committed (annotation.services.stimulus_files).
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.db.models import QuerySet

from annotation.errors import Conflict
from annotation.models import Answer, Item, Stimulus, Study
from annotation.services.qualification import attempts_drop_items
from annotation.services.session_answers import sessions_drop_items
from annotation.services.stimulus_files import files_of, remove_when_committed

logger = logging.getLogger(__name__)


def items_of(stimuli: QuerySet[Stimulus]) -> QuerySet[Item]:
    """The items made of any of the videos (golden pairs and rankings hold several)."""
    made = Item.objects.filter(members__stimulus__in=stimuli).values("pk")
    return Item.objects.filter(pk__in=made)


def answered_items(stimuli: QuerySet[Stimulus]) -> QuerySet[Item]:
    """The items made of the videos that have answers: those keep their videos."""
    return items_of(stimuli).filter(pk__in=Answer.objects.values("item_id"))


def stimuli_delete(*, stimuli: QuerySet[Stimulus]) -> tuple[int, int]:
    """Delete the videos and the items made of them (with their places in sessions);
    returns (videos, items) deleted. Raises Conflict, deleting nothing, while any of
    those items has an answer."""
    with transaction.atomic():
        videos = list(stimuli.select_for_update().values_list("pk", flat=True))
        chosen = Stimulus.objects.filter(pk__in=videos)
        answered = answered_items(chosen).count()
        if answered:
            raise Conflict(
                f"{answered} item(s) made of these videos have answers, which name them: "
                "they stay (nothing a rater answered is lost)"
            )
        doomed = items_of(chosen)
        by_study: dict[int, set[int]] = {}
        for pk, study_id in doomed.values_list("pk", "study_id"):
            by_study.setdefault(study_id, set()).add(pk)
        for study in Study.objects.filter(pk__in=by_study).order_by("pk"):
            sessions_drop_items(study=study, items=by_study[study.pk])
            attempts_drop_items(study=study, items=by_study[study.pk])
        files = files_of(chosen)
        items = doomed.delete()[1].get(Item._meta.label, 0)
        removed = chosen.delete()[1].get(Stimulus._meta.label, 0)
        remove_when_committed(files)
    logger.info("deleted %d video(s) %s and the %d item(s) made of them", removed, videos, items)
    return removed, items
