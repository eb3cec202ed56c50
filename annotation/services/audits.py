"""Expert audits of finished questionnaire batches (VGA-Bench, PROTOCOL.md 3.2): "a
sampled audit that finds annotation errors rejects the whole batch, which is labelled
again".

A batch is one rater's finished session. Its audit samples n of its regular videos
(the study's acceptance plan n, c; quality.stats.labels.acceptance draws the sample and
gives the plan's operating characteristic), once: every expert who opens the batch sees
the same sample. The expert marks each sampled video right or wrong with a note; the
batch is accepted when at most c are wrong. A rejected batch keeps its answers, marked
excluded with the audit's reason (out of every aggregate, quality.selectors), its
session goes back to the queue (a rejected batch does not count among the session's
raters, annotation.services.session_start), and its payment is rejected with the reason.

Concurrency: opening and deciding lock the batch's participation then its assignment
(the lock order of annotation.services.admin_actions), so two experts deciding at once
are serialised and the second is told the batch was decided; a late repeat of the
rater's answer is serialised with the decision on the same assignment row.
"""

from __future__ import annotations

import logging
import secrets

from django.db import transaction
from django.utils import timezone

from annotation.counting import counts_q
from annotation.designs import design_of
from annotation.designs.base import refuse_nul
from annotation.designs.questionnaire_study import settings_of
from annotation.errors import Conflict, NotFound, ValidationFailed
from annotation.models import Assignment, BatchAudit, Item, Payment, SessionItem
from annotation.services.admin_actions import _locked_participation, assignment_exclude
from quality.stats.labels.acceptance import audit_sample, operating_characteristic

logger = logging.getLogger(__name__)

# The defect rates whose acceptance probability the audit page shows.
OC_DEFECT_RATES = (0.01, 0.02, 0.05, 0.10, 0.20)
NOTE_LIMIT = 2000
# a rejection's reason, which the session's and the payment's notes quote after a prefix
REASON_LIMIT = NOTE_LIMIT - 100


def plan_characteristic(*, sample_size: int, acceptance_number: int) -> list[dict]:
    """P(accept) at 1, 2, 5, 10 and 20 % defective videos, for the audit page."""
    accept = operating_characteristic(
        sample_size=sample_size,
        acceptance_number=acceptance_number,
        defect_rates=OC_DEFECT_RATES,
    )
    return [{"defects": p, "accept": a} for p, a in zip(OC_DEFECT_RATES, accept, strict=True)]


def _batch_items(assignment: Assignment) -> list[Item]:
    """The batch's regular videos (golden ones are the gate's, not the audit's)."""
    golden = SessionItem.objects.filter(session_id=assignment.session_id, is_golden=True)
    return list(
        Item.objects.filter(pk__in=assignment.order)
        .exclude(pk__in=golden.values("item_id"))
        .order_by("pk")
    )


def _locked(assignment: Assignment) -> Assignment:
    _locked_participation(assignment)
    return (
        Assignment.objects.select_for_update()
        .select_related("session__study")
        .get(pk=assignment.pk)
    )


@transaction.atomic
def audit_open(*, assignment: Assignment, by) -> BatchAudit:
    """The batch's audit, its sample drawn on the first opening (the same for every
    expert after). Only a finished batch of a study whose design is audited (a
    questionnaire) can be audited."""
    assignment = _locked(assignment)
    study = assignment.session.study
    if not design_of(study).audited:
        raise NotFound(f"batches of a {study.design} study are not audited")
    existing = BatchAudit.objects.filter(assignment=assignment).first()
    if existing is not None:
        return existing
    if assignment.state != Assignment.State.FINISHED:
        raise Conflict(f"only a finished batch can be audited (this one is {assignment.state})")
    plan = settings_of(study)
    seed = secrets.randbits(62)
    items = {str(item.public_id): item.pk for item in _batch_items(assignment)}
    chosen = audit_sample(item_ids=list(items), sample_size=plan.audit_sample_size, seed=seed)
    audit = BatchAudit.objects.create(
        assignment=assignment,
        auditor=by,
        seed=seed,
        sample_size=plan.audit_sample_size,
        acceptance_number=plan.audit_acceptance_number,
        sample=[items[public_id] for public_id in chosen],
    )
    logger.info("%s opened the audit of batch %s: %d videos", by, assignment.pk, len(chosen))
    return audit


def _findings(audit: BatchAudit, findings: dict) -> list[dict]:
    """Every sampled video's verdict, keyed by item id: {"wrong": bool, "note": str}."""
    if not isinstance(findings, dict):
        raise ValidationFailed("'findings' must give each sampled video's verdict")
    checked = []
    for item_id in audit.sample:
        entry = findings.get(str(item_id), findings.get(item_id))
        if not isinstance(entry, dict) or not isinstance(entry.get("wrong"), bool):
            raise ValidationFailed("every sampled video needs a verdict: right or wrong")
        note = entry.get("note") or ""
        if not isinstance(note, str) or len(note) > NOTE_LIMIT:
            raise ValidationFailed(f"a note is a text of at most {NOTE_LIMIT} characters")
        refuse_nul(note, what="a note")
        checked.append({"item": item_id, "wrong": entry["wrong"], "note": note.strip()})
    extra = {str(key) for key in findings} - {str(item_id) for item_id in audit.sample}
    if extra:
        raise ValidationFailed("a finding names a video that is not in the audit's sample")
    return checked


@transaction.atomic
def audit_decide(*, audit: BatchAudit, findings: dict, reason: str = "", by) -> BatchAudit:
    """Record the expert's findings and the plan's verdict: accepted when at most c of
    the n sampled videos are wrong; rejected otherwise (see the module docstring)."""
    assignment = _locked(audit.assignment)
    audit = BatchAudit.objects.select_for_update().get(pk=audit.pk)
    if audit.verdict:
        raise Conflict(
            f"this batch was already audited: {audit.verdict} by {audit.auditor} "
            f"at {audit.decided_at:%Y-%m-%d %H:%M}",
            extra={"verdict": audit.verdict},
        )
    if assignment.state != Assignment.State.FINISHED:
        raise Conflict(
            f"this batch is {assignment.get_state_display().lower()} now"
            + (f": {assignment.admin_note}" if assignment.admin_note else ""),
            extra={"state": assignment.state},
        )
    checked = _findings(audit, findings)
    refuse_nul(reason or "", what="the reason")
    wrong = sum(entry["wrong"] for entry in checked)
    accepted = wrong <= audit.acceptance_number
    reason = (reason or "").strip()
    if len(reason) > REASON_LIMIT:  # before: cut short without a word
        raise ValidationFailed(f"a reason is a text of at most {REASON_LIMIT} characters")
    if not accepted and not reason:
        reason = (
            f"{wrong} of {len(checked)} sampled videos wrong "
            f"(plan: accept with at most {audit.acceptance_number})"
        )
    audit.findings = checked
    audit.wrong = wrong
    audit.verdict = BatchAudit.Verdict.ACCEPTED if accepted else BatchAudit.Verdict.REJECTED
    audit.reason = reason
    audit.auditor = by
    audit.decided_at = timezone.now()
    audit.save(update_fields=["findings", "wrong", "verdict", "reason", "auditor", "decided_at"])
    if not accepted:
        _reject(assignment, reason=f"batch rejected in its audit: {reason}", by=by)
    logger.info("%s audited batch %s: %s (%d wrong)", by, assignment.pk, audit.verdict, wrong)
    return audit


def _reject(assignment: Assignment, *, reason: str, by) -> None:
    """Inside the decision's transaction: the batch excluded as an admin excludes a
    session, and its payment rejected with the reason."""
    assignment_exclude(assignment=assignment, reason=reason, by=by)
    payment = Payment.objects.select_for_update().filter(assignment=assignment).first()
    if payment is None:
        return
    if payment.paid_out_at is not None:  # kept: the record shows both, for the team
        logger.warning(
            "batch %s rejected after its payment was paid out (%s)",
            assignment.pk,
            payment.paid_out_at.isoformat(),
        )
    elif payment.status == Payment.Status.APPROVED:
        logger.warning("batch %s rejected after its payment was approved", assignment.pk)
    payment.status = Payment.Status.REJECTED
    payment.decided_at = timezone.now()
    payment.note = reason[:NOTE_LIMIT]
    payment.save(update_fields=["status", "decided_at", "note"])


def _undecided(study):
    return Assignment.objects.filter(session__study=study, state=Assignment.State.FINISHED).exclude(
        audit__verdict__in=[BatchAudit.Verdict.ACCEPTED, BatchAudit.Verdict.REJECTED]
    )


def audit_queue(*, study) -> list[Assignment]:
    """The study's finished batches with no decided audit that still count
    (annotation.counting), oldest first. A batch that failed its golden gate (where the
    study does not keep those) or whose rater was excluded from the study is out of every
    result already: an expert's time is not spent on it (audit_passed_over counts them)."""
    return list(
        _undecided(study)
        .filter(counts_q(study))
        .select_related("rater", "session", "audit", "audit__auditor")
        .order_by("finished_at", "pk")
    )


def audit_passed_over(*, study) -> int:
    """The finished batches without a decided audit that the queue leaves out, as they no
    longer count (their payments are decided in the Payments admin as any other)."""
    return _undecided(study).exclude(counts_q(study)).count()
