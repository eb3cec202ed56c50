"""Answering (or skipping) the current item of a rater's open session, with its row locked.

An answer is taken only in the server's order, off a rest break, in an active session;
the session's last answer (or skip) finishes it: the design's golden gate, the payment.
Design-blind: an item's values are checked and stored by the study's design
(annotation/designs); the rest (order, position, breaks, the gate's verdict, the
payment, the envelope and its repeats) is the same for every design. The common slider
answer has a faster way in, annotation.services.slider_fast_path.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.utils import timezone

from annotation.designs import design_of, values_digest
from annotation.errors import Conflict, NotFound, OnBreak, PermissionDenied, SessionPaused
from annotation.models import (
    Assignment,
    Item,
    Participation,
    Payment,
    PlaybackReport,
    Study,
)
from annotation.selectors import assignment_last_finished, break_seconds_left, item_layout
from annotation.services.adaptive import adaptive_review_due
from annotation.services.answers import (
    Envelope,
    ValuesOf,
    answer_repeated,
    layout_ids,
    out_of_order,
    playback_report_make,
)
from annotation.services.line_click import line_click_guard
from annotation.services.rest_breaks import answered_moment, break_after

logger = logging.getLogger(__name__)


def payment_due(*, assignment: Assignment, study: Study) -> Payment:
    """The finished session's payment, pending the admin's decision (once per session)."""
    payment, _ = Payment.objects.get_or_create(
        assignment=assignment,
        defaults={"amount": study.payment_per_session, "currency": study.payment_currency},
    )
    return payment


def _finish(assignment: Assignment, study: Study) -> None:
    """The session is over: the design's golden gate decides whether the rater may go on,
    and the session's payment is due."""
    gate = design_of(study).golden_gate(study=study, assignment=assignment)
    assignment.golden_agreement = gate.agreement
    assignment.eligible_for_next = gate.passed
    assignment.state = Assignment.State.FINISHED
    assignment.finished_at = timezone.now()
    payment_due(assignment=assignment, study=study)
    adaptive_review_due(study=study)  # the session's ratings count from its commit on
    logger.info(
        "assignment %s finished: golden agreement %s, eligible %s",
        assignment.pk,
        gate.agreement,
        gate.passed,
    )


def _open_assignment_locked(participation: Participation) -> Assignment | None:
    """The rater's open session in the study (active or paused), its row locked."""
    return (
        Assignment.objects.select_for_update()
        .filter(
            rater_id=participation.rater_id,
            session__study_id=participation.study_id,
            state__in=[Assignment.State.ACTIVE, Assignment.State.PAUSED],
        )
        .first()
    )


def _refuse_on_break(assignment: Assignment, *, now=None) -> None:
    """OnBreak while the rater's rest break runs: no answer, and no skip, is taken."""
    now = now or timezone.now()
    if assignment.break_until and assignment.break_until > now:
        left = break_seconds_left(assignment)
        raise OnBreak(
            f"rest break: ratings are accepted again in {left} s",
            extra={"break_seconds_left": left},
        )


def session_answer_submit(
    *, participation: Participation, envelope: Envelope, item: Item | None, values_of: ValuesOf
) -> tuple[bool, Assignment | None]:
    """Store one answer to the current item of the rater's session and move them on.

    Returns (stored_now, the assignment after it). The assignment row is locked, so two
    deliveries of the same answer are serialised and the second one is a repeat. The
    values are checked once the item is known to be in the rater's session (ValuesOf):
    an item that is not is refused alike whatever the values; one that is, for bad
    values, before whatever else is wrong with the answer (a break, its place).
    """
    now = timezone.now()
    study = participation.study
    design = design_of(study)
    with transaction.atomic():
        assignment = _open_assignment_locked(participation)
        if answer_repeated(
            envelope=envelope, participation=participation, item=item, values_of=values_of
        ):
            return False, assignment
        if assignment is None:
            if assignment_last_finished(participation=participation) is not None:
                raise Conflict("this session has ended", extra={"error": "finished"})
            raise PermissionDenied("you have no session open in this study")
        if item is None or item.pk not in assignment.order:
            raise NotFound(f"this {design.item_noun} is not part of your session")
        values = values_of(item)
        digest = values_digest(values.canonical())
        if assignment.state == Assignment.State.PAUSED:
            raise SessionPaused("your session was paused by the study's team")
        _refuse_on_break(assignment, now=now)
        if assignment.order.index(item.pk) < assignment.position:
            raise Conflict(f"this {design.item_noun} was already answered")
        expected = assignment.order[assignment.position]
        if item.pk != expected:
            raise out_of_order(expected, position=assignment.position, noun=design.item_noun)
        layout = item_layout(item, assignment.order_seed)
        answer = envelope.answer(
            item=item,
            participation=participation,
            assignment=assignment,
            layout=layout_ids(layout),
            values_digest=digest,
        )
        answer.save()
        design.store_values(answer=answer, item=item, layout=layout, values=values)
        answered_at = answered_moment(
            envelope.answered_at,
            previous=assignment.last_answered_at or assignment.started_at,
            now=now,
        )
        assignment.position += 1
        assignment.last_activity_at = now
        assignment.last_answered_at = answered_at
        assignment.stalls_total += envelope.stalls
        changed = ["position", "last_activity_at", "last_answered_at", "stalls_total"]
        if assignment.position >= len(assignment.order):
            _finish(assignment, study)
            changed += ["state", "finished_at", "golden_agreement", "eligible_for_next"]
        # a break the session's last answer starts runs on into the next session
        answered = assignment.answered_before + assignment.position
        if break_until := break_after(answered, study, now=answered_at):
            assignment.break_until = break_until
            assignment.breaks_taken += 1
            changed += ["break_until", "breaks_taken"]
        if design.fast_path and line_click_guard(assignment, study):
            changed += ["flagged_line_clicker", "flag_reason"]
        assignment.save(update_fields=changed)
    return True, assignment


def skips_allowed(items: int) -> int:
    """How many videos of a session (or of a test attempt) of ``items`` may be skipped as
    unplayable: 3, or one in 20 of a long session. A rater whose browser cannot play more
    has a problem the team should hear of, not a way round the videos."""
    return max(3, items // 20)


def session_item_skip(*, participation: Participation, item: Item, detail: str) -> bool:
    """Take the session's current item out of the rater's order: their browser cannot play
    its video (``playback_problem_report``). True when skipped now, False for a repeat of
    a skip already made. The session ends, as after its last answer, when that was its
    last item. Raises as an answer to the item would (no session, paused, not the current
    item), or Conflict when the session has had its share of skips."""
    noun = design_of(participation.study).item_noun
    with transaction.atomic():
        assignment = _open_assignment_locked(participation)
        if assignment is None:
            raise PermissionDenied("you have no session open in this study")
        if assignment.state == Assignment.State.PAUSED:
            raise SessionPaused("your session was paused by the study's team")
        if item.pk not in assignment.order:
            if PlaybackReport.objects.filter(assignment=assignment, item=item).exists():
                return False
            raise NotFound(f"this {noun} is not part of your session")
        _refuse_on_break(assignment)
        at = assignment.order.index(item.pk)
        if at < assignment.position:
            raise Conflict(f"this {noun} was already answered")
        if at != assignment.position:
            raise out_of_order(
                assignment.order[assignment.position], position=assignment.position, noun=noun
            )
        skipped = PlaybackReport.objects.filter(assignment=assignment).count()
        if skipped >= skips_allowed(len(assignment.order) + skipped):
            raise Conflict(
                f"{skipped} videos of this session could not be played already: please "
                "tell the study's team (your answers so far are kept)",
                extra={"error": "too_many_skipped"},
            )
        assignment.order = [pk for pk in assignment.order if pk != item.pk]
        changed = ["order"]
        if assignment.position >= len(assignment.order):
            _finish(assignment, participation.study)
            changed += ["state", "finished_at", "golden_agreement", "eligible_for_next"]
        assignment.save(update_fields=changed)
        playback_report_make(
            participation=participation, item=item, assignment=assignment, detail=detail
        )
    logger.warning("rater %s skipped %s in %s: cannot play it (%s)",
                   participation.rater_id, item, assignment, detail or "no detail")  # fmt: skip
    return True


def sessions_drop_items(*, study: Study, items: set[int]) -> int:
    """Take deleted items (``stimulus_delete``: none of them answered) out of every rater's
    frozen order in the study, as a skip takes an unplayable one out; an open session
    left with nothing to answer ends (its gate, its payment). Returns how many orders
    changed. Call inside the deletion's transaction."""
    changed = 0
    assignments = Assignment.objects.select_for_update().filter(session__study=study)
    for assignment in assignments.order_by("pk"):
        if not items.intersection(assignment.order):
            continue
        assignment.order = [pk for pk in assignment.order if pk not in items]
        fields = ["order"]
        still_open = assignment.state in (Assignment.State.ACTIVE, Assignment.State.PAUSED)
        if still_open and assignment.position >= len(assignment.order):
            _finish(assignment, study)
            fields += ["state", "finished_at", "golden_agreement", "eligible_for_next"]
        assignment.save(update_fields=fields)
        changed += 1
    return changed
