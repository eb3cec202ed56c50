"""What an admin does to a running study: pause, exclude, reopen, approve payments.

An exclusion (of a rater, or of one of their sessions) takes the rater's ratings out of
every number the study publishes (quality.selectors.study_exclusions) and records who
decided it, when and why; reopening puts them back.

Lock order: a rater's participation in a study, then their assignments in it (as
participation_exclude and assignment_start_next take them). A service that locks both
takes them in this order, so that two of them on one rater (an exclusion and a reopen
at the same moment) wait for each other instead of deadlocking.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.utils import timezone

from annotation.errors import Conflict, ValidationFailed
from annotation.models import Assignment, BatchAudit, Participation, Payment

logger = logging.getLogger(__name__)


def _reason(reason: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise ValidationFailed("a reason is required")
    return reason[:2000]


def _locked_participation(assignment: Assignment) -> Participation | None:
    """The assignment's participation, locked (the lock order above): found by the
    assignment's rater and session, which never change, so they need no lock to be read."""
    return (
        Participation.objects.select_for_update(of=("self",))
        .filter(rater_id=assignment.rater_id, study__sessions=assignment.session_id)
        .first()
    )


@transaction.atomic
def assignment_pause(*, assignment: Assignment, reason: str, by) -> Assignment:
    assignment = Assignment.objects.select_for_update().get(pk=assignment.pk)
    if assignment.state != Assignment.State.ACTIVE:
        raise Conflict(f"only a running assignment can be paused (it is {assignment.state})")
    assignment.state = Assignment.State.PAUSED
    assignment.admin_note = _reason(reason)
    assignment.save(update_fields=["state", "admin_note"])
    logger.info("admin %s paused assignment %s: %s", by.pk, assignment.pk, reason)
    return assignment


@transaction.atomic
def assignment_reopen(*, assignment: Assignment, reason: str, by) -> Assignment:
    """A paused or excluded assignment continues where it stopped.

    Reopening the assignment of an excluded rater lifts the rater's exclusion from the
    study: an exclusion is what stops them, so the session could not continue otherwise.
    Their other excluded assignments stay excluded until reopened one by one. A rater who
    withdrew (annotation.services.withdrawal) decided for themselves, and a batch an
    expert rejected in its audit (annotation.services.audits) was decided there, its
    payment rejected and its videos given to other raters: both refused.
    """
    participation = _locked_participation(assignment)
    assignment = Assignment.objects.select_for_update().get(pk=assignment.pk)
    if assignment.state not in (Assignment.State.PAUSED, Assignment.State.EXCLUDED):
        raise Conflict(
            f"only a paused or excluded assignment can be reopened (it is {assignment.state})"
        )
    reason = _reason(reason)
    if participation is not None and participation.withdrawn_at is not None:
        raise Conflict("the rater withdrew from the study: their sessions cannot be reopened")
    rejected = BatchAudit.objects.filter(
        assignment=assignment, verdict=BatchAudit.Verdict.REJECTED
    ).first()
    if rejected is not None:
        logger.warning(
            "admin %s tried to reopen assignment %s, rejected in its audit %s",
            by.pk,
            assignment.pk,
            rejected.pk,
        )
        raise Conflict(
            "this batch was rejected in its audit: its answers stay out of every result, "
            "its payment is rejected and its videos went to other raters, so it cannot be "
            "reopened here"
        )
    # A session excluded after it was finished is finished again: its ratings count.
    finished = assignment.finished_at is not None and assignment.position >= len(assignment.order)
    if not finished:
        _refuse_a_second_open_session(assignment, by=by)
    if participation is not None and participation.is_excluded:
        logger.info(
            "admin %s lifted the exclusion of rater %s from study %s (it was: %s) "
            "by reopening assignment %s: %s",
            by.pk,
            participation.rater_id,
            participation.study_id,
            participation.excluded_reason,
            assignment.pk,
            reason,
        )
        participation.is_excluded = False
        participation.excluded_reason = ""
        participation.excluded_by = None
        participation.excluded_at = None
        participation.save(
            update_fields=["is_excluded", "excluded_reason", "excluded_by", "excluded_at"]
        )
    assignment.state = Assignment.State.FINISHED if finished else Assignment.State.ACTIVE
    assignment.admin_note = reason
    assignment.excluded_by = None
    assignment.excluded_at = None
    assignment.save(update_fields=["state", "admin_note", "excluded_by", "excluded_at"])
    logger.info("admin %s reopened assignment %s: %s", by.pk, assignment.pk, reason)
    return assignment


def _refuse_a_second_open_session(assignment: Assignment, *, by) -> None:
    """Conflict when the rater has another session open (active or paused) in the study:
    a rater works on one session at a time (``assignment_current``), so reopening this
    one beside it would switch them back to it mid-session, the answer their page holds
    refused."""
    other = (
        Assignment.objects.filter(
            rater_id=assignment.rater_id,
            session__study_id=assignment.session.study_id,
            state__in=[Assignment.State.ACTIVE, Assignment.State.PAUSED],
        )
        .exclude(pk=assignment.pk)
        .first()
    )
    if other is not None:
        logger.warning(
            "admin %s tried to reopen assignment %s while the rater's assignment %s is %s",
            by.pk,
            assignment.pk,
            other.pk,
            other.state,
        )
        raise Conflict(
            f"the rater has moved on to session {other.session_id}, which is {other.state}: "
            "a rater works on one session at a time, so reopen this one once that one is "
            "finished (or exclude that one first)"
        )


@transaction.atomic
def assignment_exclude(*, assignment: Assignment, reason: str, by) -> Assignment:
    """Exclude one session of a rater: it stops if it was going on, and its ratings leave
    every analysis (quality.selectors), with this reason on record. The rater's other
    sessions are untouched; assignment_reopen undoes it."""
    _locked_participation(assignment)  # first, though unchanged: the lock order above
    assignment = Assignment.objects.select_for_update().get(pk=assignment.pk)
    if assignment.state == Assignment.State.EXCLUDED:
        raise Conflict("this session is already excluded")
    assignment.state = Assignment.State.EXCLUDED
    assignment.admin_note = _reason(reason)
    assignment.excluded_by = by
    assignment.excluded_at = timezone.now()
    assignment.save(update_fields=["state", "admin_note", "excluded_by", "excluded_at"])
    logger.info("admin %s excluded assignment %s: %s", by.pk, assignment.pk, reason)
    return assignment


@transaction.atomic
def participation_exclude(*, participation: Participation, reason: str, by) -> Participation:
    """Exclude a rater from a study: no further ratings; their open assignments stop."""
    # The participation, then (by the update) the assignments: the lock order above.
    participation = Participation.objects.select_for_update().get(pk=participation.pk)
    if participation.is_excluded:  # a replay, or a second admin: the first record stands
        raise Conflict(
            f"this rater is already excluded from the study: {participation.excluded_reason}"
        )
    now = timezone.now()
    participation.is_excluded = True
    participation.excluded_reason = _reason(reason)
    participation.excluded_by = by
    participation.excluded_at = now
    participation.save(
        update_fields=["is_excluded", "excluded_reason", "excluded_by", "excluded_at"]
    )
    Assignment.objects.filter(
        rater_id=participation.rater_id,
        session__study_id=participation.study_id,
        state__in=[Assignment.State.ACTIVE, Assignment.State.PAUSED],
    ).update(
        state=Assignment.State.EXCLUDED,
        admin_note=participation.excluded_reason,
        excluded_by=by,
        excluded_at=now,
    )
    logger.info("admin %s excluded %s: %s", by.pk, participation, reason)
    return participation


def payments_decide(*, payment_ids, approve: bool, by) -> tuple[int, int]:
    """Decide the pending payments among ``payment_ids`` at once (the admin's bulk
    actions): one update, which passes over a payment decided meanwhile. Returns
    (decided now, left as they were: decided already)."""
    ids = list(payment_ids)
    status = Payment.Status.APPROVED if approve else Payment.Status.REJECTED
    decided = Payment.objects.filter(pk__in=ids, status=Payment.Status.PENDING).update(
        status=status, decided_at=timezone.now()
    )
    logger.info("admin %s %s %d payment(s) of %d chosen", by.pk, status, decided, len(ids))
    return decided, len(ids) - decided


@transaction.atomic
def payment_decide(*, payment: Payment, approve: bool, note: str = "", by) -> Payment:
    payment = Payment.objects.select_for_update().get(pk=payment.pk)
    if payment.status != Payment.Status.PENDING:
        raise Conflict(f"this payment was already {payment.status}")
    payment.status = Payment.Status.APPROVED if approve else Payment.Status.REJECTED
    payment.decided_at = timezone.now()
    payment.note = note[:2000]
    payment.save(update_fields=["status", "decided_at", "note"])
    logger.info("admin %s %s payment %s", by.pk, payment.status, payment.pk)
    return payment
