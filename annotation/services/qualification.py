"""The qualification test: items in a per-rater seeded order, answers, server-side scoring.

Design-blind: a qualification answer is an Answer envelope with its attempt, its values
stored by the study's design like any answer's; the design scores a finished attempt.
"""

from __future__ import annotations

import logging
import random

from django.db import transaction
from django.db.models import QuerySet

from annotation.designs import design_of, values_digest
from annotation.errors import Conflict, NotFound, PermissionDenied, ValidationFailed
from annotation.models import Answer, Item, Participation, PlaybackReport, Stimulus
from annotation.selectors import item_layout, items_by_pk, qualification_drawn, window_span
from annotation.services.answers import (
    Envelope,
    ValuesOf,
    answer_repeated,
    layout_ids,
    out_of_order,
    playback_report_make,
)
from annotation.services.session_answers import skips_allowed

logger = logging.getLogger(__name__)

_NOT_READY = (Stimulus.Status.PENDING, Stimulus.Status.PROCESSING)


def study_has_test(study) -> bool:
    """Whether the tutorial leads to a qualification test: a size above 0 and
    qualification videos that have not failed (those still being processed count: the
    rater waits for them). Its items are made when the first rater reaches the test;
    videos that make none let the rater through then (``qualification_items``)."""
    if not study.qualification_size:
        return False
    videos = Stimulus.objects.filter(study=study, role=Stimulus.Role.QUALIFICATION)
    return videos.exclude(status=Stimulus.Status.FAILED).exists()


def qualification_seed(participation: Participation) -> str:
    """The per-rater seed of the attempt's order and of each item's layout."""
    return f"{participation.qualification_order_seed}:{participation.qualification_attempts}"


def qualification_items(*, participation: Participation) -> list[int]:
    """Item ids of this attempt, in the rater's order (seeded, reproducible).

    Drawn once per attempt, when enough qualification items are ready, and kept
    (`Participation.qualification_set`): items added or made ready during the attempt do
    not change it, so an answer to an item the rater was shown is never refused as not
    part of the test. Empty (the test is not ready yet) while fewer items are ready than
    the test takes of those the study has (processing ones included, failed ones not).
    Where no test can be made (the study's qualification videos make no item, or every
    one drawn failed before the first answer) the rater is let through (_no_test_left)."""
    study = participation.study
    drawn = qualification_drawn(participation)
    if drawn:
        started = qualification_answers(participation=participation).exists()
        if not started and not _usable(study).filter(pk__in=drawn).exists():
            _no_test_left(participation)  # every video of the test failed since it was drawn
        return drawn
    try:
        design_of(study).build_items(study=study)
    except ValidationFailed as refused:  # the sessions' items: the admin's to mend
        logger.warning("study %s: items not built: %s", study.slug, refused.message)
    items = _usable(study)
    pool = list(
        items.exclude(members__stimulus__status__in=_NOT_READY)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    wanted = min(study.qualification_size, items.count())
    if wanted == 0:
        _no_test_left(participation)
        return []
    if len(pool) < wanted:
        return []
    chosen = random.Random(qualification_seed(participation)).sample(pool, k=wanted)
    participation.qualification_set = {
        "attempt": participation.qualification_attempts,
        "items": chosen,
    }
    Participation.objects.filter(pk=participation.pk).update(
        qualification_set=participation.qualification_set
    )
    return chosen


def _usable(study) -> QuerySet[Item]:
    """The study's qualification items none of whose videos failed (nor were deleted)."""
    return (
        Item.objects.filter(study=study, role=Item.Role.QUALIFICATION, members__isnull=False)
        .exclude(members__stimulus__status=Stimulus.Status.FAILED)
        .distinct()  # an item whose videos were deleted has no members
    )


def _no_test_left(participation: Participation) -> None:
    """The test's videos all failed or are gone since the rater began: as in a study
    without a test (participation_tutorial_done), the rater is let through rather than
    kept waiting for a test that cannot come."""
    updated = Participation.objects.filter(
        pk=participation.pk, qualification_state=Participation.Qualification.IN_PROGRESS
    ).update(qualification_state=Participation.Qualification.PASSED)
    if updated:
        participation.qualification_state = Participation.Qualification.PASSED
        logger.warning("qualification of %s: no test can be made any more, let through",
                       participation)  # fmt: skip


def qualification_answers(*, participation: Participation):
    return Answer.objects.filter(
        participation=participation, attempt=participation.qualification_attempts
    )


def _remaining(participation: Participation) -> tuple[list[int], int]:
    """The attempt's items not answered yet, in the rater's order, and its length."""
    items = qualification_items(participation=participation)
    answered = set(
        qualification_answers(participation=participation).values_list("item_id", flat=True)
    )
    return [pk for pk in items if pk not in answered], len(items)


def qualification_progress(participation: Participation) -> tuple[int, int]:
    """(answered so far, the test's length)."""
    remaining, length = _remaining(participation)
    return length - len(remaining), length


def qualification_window(
    participation: Participation,
) -> tuple[list[Item], Item | None, str, int, int]:
    """The items the rater's page may hold (the study's window, never past the test's
    end: its last answer brings the verdict), the one after the current one, what
    follows the window, answered so far and the test's length."""
    remaining, length = _remaining(participation)
    stop, ends = window_span(
        position=0, length=len(remaining), size=participation.study.window_size
    )
    pks = remaining[: max(stop, 2)]
    found = items_by_pk(pks)
    upcoming = [found[pk] for pk in pks if pk in found]
    preload = upcoming[1] if len(upcoming) > 1 else None
    return upcoming[:stop], preload, ends, length - len(remaining), length


def _score_attempt(participation: Participation) -> None:
    study = participation.study
    score = design_of(study).qualification_score(
        participation=participation,
        answers=qualification_answers(participation=participation),
    )
    participation.qualification_share = score.share
    participation.qualification_detail = score.detail
    if score.passed:
        participation.qualification_state = Participation.Qualification.PASSED
    elif participation.qualification_attempts <= study.qualification_retries:
        participation.qualification_attempts += 1  # a new attempt, new order
    else:
        participation.qualification_state = Participation.Qualification.FAILED
    participation.save(
        update_fields=[
            "qualification_share",
            "qualification_detail",
            "qualification_state",
            "qualification_attempts",
        ]
    )
    logger.info(
        "qualification of %s: share %s -> %s",
        participation,
        "none" if score.share is None else f"{score.share:.3f}",
        participation.qualification_state,
    )


def attempts_drop_items(*, study, items: set[int]) -> int:
    """Take deleted items (``stimulus_delete``: none of them answered) out of the
    qualification attempts drawn in the study, as a skip takes an unplayable one out: an
    attempt left with none is no test (the rater is let through), one whose other items
    are all answered is scored. Returns how many attempts changed. Call inside the
    deletion's transaction."""
    changed = 0
    taking = Participation.objects.select_for_update().filter(
        study=study, qualification_state=Participation.Qualification.IN_PROGRESS
    )
    for participation in taking.select_related("study").order_by("pk"):
        drawn = qualification_drawn(participation)
        if not items.intersection(drawn):
            continue
        left = [pk for pk in drawn if pk not in items]
        participation.qualification_set = {
            "attempt": participation.qualification_attempts,
            "items": left,
        }
        participation.save(update_fields=["qualification_set"])
        answered = qualification_answers(participation=participation).count()
        if not left:
            _no_test_left(participation)
        elif answered >= len(left):
            _score_attempt(participation)
        changed += 1
    return changed


def _the_next(participation: Participation, items: list[int], item: Item, *, noun: str) -> set:
    """The attempt's answered item ids, once ``item`` (one of ``items``) is checked to be
    the one the rater is at: Conflict when answered, OutOfOrder when another comes first."""
    answered = set(
        qualification_answers(participation=participation).values_list("item_id", flat=True)
    )
    if item.pk in answered:
        raise Conflict(f"this {noun} was already answered")
    expected = next(pk for pk in items if pk not in answered)
    if item.pk != expected:
        raise out_of_order(expected, position=len(answered), noun=noun)
    return answered


def qualification_answer_submit(
    *, participation: Participation, envelope: Envelope, item: Item | None, values_of: ValuesOf
) -> bool:
    """Store one qualification answer; True when stored now, False for a harmless repeat.
    The values are checked once the item is known to be in the rater's attempt
    (ValuesOf), as a session's are."""
    design = design_of(participation.study)
    with transaction.atomic():
        participation = (
            Participation.objects.select_for_update()
            .select_related("study")
            .get(pk=participation.pk)
        )
        # a concurrent delivery of the same answer may have won the lock
        if answer_repeated(
            envelope=envelope, participation=participation, item=item, values_of=values_of
        ):
            return False
        if participation.qualification_state != Participation.Qualification.IN_PROGRESS:
            raise PermissionDenied("the qualification test is not open for you")
        items = qualification_items(participation=participation)
        if item is None or item.pk not in items:
            raise NotFound(f"this {design.item_noun} is not part of your qualification test")
        values = values_of(item)
        digest = values_digest(values.canonical())
        answered = _the_next(participation, items, item, noun=design.item_noun)
        layout = item_layout(item, qualification_seed(participation))
        answer = envelope.answer(
            item=item,
            participation=participation,
            attempt=participation.qualification_attempts,
            layout=layout_ids(layout),
            values_digest=digest,
        )
        answer.save()
        design.store_values(answer=answer, item=item, layout=layout, values=values)
        if len(answered) + 1 >= len(items):
            _score_attempt(participation)
    return True


def qualification_item_skip(*, participation: Participation, item: Item, detail: str) -> bool:
    """Take the test's next item out of the rater's attempt: their browser cannot play its
    video (``playback_problem_report``). True when skipped now, False for a repeat. The
    attempt is scored when its other items are answered (a test left with none is no
    test: the rater is let through, _no_test_left). Raises as an answer to the item
    would, or Conflict when the attempt has had its share of skips."""

    noun = design_of(participation.study).item_noun
    with transaction.atomic():
        participation = (
            Participation.objects.select_for_update()
            .select_related("study")
            .get(pk=participation.pk)
        )
        if participation.qualification_state != Participation.Qualification.IN_PROGRESS:
            raise PermissionDenied("the qualification test is not open for you")
        attempt = participation.qualification_attempts
        mine = PlaybackReport.objects.filter(
            participation=participation, attempt=attempt, assignment__isnull=True
        )
        items = qualification_items(participation=participation)
        if item.pk not in items:
            if mine.filter(item=item).exists():
                return False
            raise NotFound(f"this {noun} is not part of your qualification test")
        answered = _the_next(participation, items, item, noun=noun)
        skipped = mine.count()
        if skipped >= skips_allowed(len(items) + skipped):
            raise Conflict(
                f"{skipped} videos of the qualification test could not be played already: "
                "please tell the study's team",
                extra={"error": "too_many_skipped"},
            )
        left = [pk for pk in items if pk != item.pk]
        participation.qualification_set = {"attempt": attempt, "items": left}
        participation.save(update_fields=["qualification_set"])
        playback_report_make(participation=participation, item=item, attempt=attempt, detail=detail)
        if not left:
            _no_test_left(participation)
        elif len(answered) >= len(left):
            _score_attempt(participation)
    logger.warning("rater %s skipped %s in the qualification test: cannot play it (%s)",
                   participation.rater_id, item, detail or "no detail")  # fmt: skip
    return True
