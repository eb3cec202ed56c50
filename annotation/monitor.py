"""What the admin's live monitor shows: every assignment of a study, and study progress."""

from __future__ import annotations

from datetime import timedelta

from django.db.models import (
    BooleanField,
    Count,
    Exists,
    ExpressionWrapper,
    Max,
    Min,
    OuterRef,
    Q,
)
from django.utils import timezone

from annotation.counting import counts_q, holds_place_q
from annotation.designs import design_of
from annotation.models import (
    Answer,
    Assignment,
    BatchAudit,
    Item,
    Participation,
    Session,
    Stimulus,
    Study,
)
from annotation.selectors import break_seconds_left
from annotation.services.adaptive_summary import adaptive_summary


def _state_label(assignment: Assignment) -> str:
    if assignment.state == Assignment.State.ACTIVE and break_seconds_left(assignment):
        return "on_break"
    return assignment.state


def _answer_figures(study: Study) -> dict[int, dict]:
    """Per assignment of the study: its first and last answer's time and its answers to
    regular items, all and in the last hour. One pass over the answers grouped by
    assignment alone (grouping the assignments themselves carried every column, their
    item orders too, through the aggregate: 6 times slower at GAIA's 321,000 answers)."""
    regular = Q(item__role=Item.Role.STIMULUS)
    hour_ago = timezone.now() - timedelta(hours=1)
    rows = (
        Answer.objects.filter(item__study=study, assignment__isnull=False)
        .values("assignment_id")
        .annotate(
            first_answer=Min("received_at"),
            last_answer=Max("received_at"),
            regular=Count("pk", filter=regular),
            recent=Count("pk", filter=regular & Q(received_at__gte=hour_ago)),
        )
        .order_by()
    )
    return {row.pop("assignment_id"): row for row in rows}


def study_monitor(*, study: Study) -> dict:
    """One row per assignment plus the study's progress; a fixed number of queries."""
    assignments = list(
        Assignment.objects.filter(session__study=study)
        .select_related("rater", "session")
        .annotate(
            counts=ExpressionWrapper(counts_q(study), output_field=BooleanField()),
            holds_place=ExpressionWrapper(holds_place_q(study), output_field=BooleanField()),
            # decided in its audit: not reopened either (admin_actions)
            rejected_in_audit=Exists(
                BatchAudit.objects.filter(
                    assignment=OuterRef("pk"), verdict=BatchAudit.Verdict.REJECTED
                )
            ),
        )
        .order_by("session__index", "started_at")
    )
    figures = _answer_figures(study)
    # where the design takes a set number of raters per session, an idle one's place is
    # open to another rater (annotation.counting)
    capped = design_of(study).raters_per_session(study=study) is not None
    # A rater excluded after finishing keeps a finished assignment: the exclusion is the
    # participation's, shown on each of the rater's rows.
    excluded, withdrawn = {}, set()
    for rater_id, reason, withdrawn_at in Participation.objects.filter(
        study=study, is_excluded=True
    ).values_list("rater_id", "excluded_reason", "withdrawn_at"):
        excluded[rater_id] = reason
        if withdrawn_at is not None:  # their own decision: no reopening (admin_actions)
            withdrawn.add(rater_id)
    rows = []
    for a in assignments:
        seconds_per_stimulus = None
        first, last = (figures.get(a.pk, {}).get(k) for k in ("first_answer", "last_answer"))
        if a.position > 1 and first and last:
            span = (last - first).total_seconds()
            seconds_per_stimulus = round(span / (a.position - 1), 1)
        rows.append(
            {
                "id": a.pk,
                "rater": a.rater.pseudonym,
                "session": a.session.index,
                "position": a.position,
                "length": len(a.order),
                "state": _state_label(a),
                "break_seconds_left": break_seconds_left(a),
                "seconds_per_stimulus": seconds_per_stimulus,
                "last_activity_at": a.last_activity_at.isoformat() if a.last_activity_at else None,
                "golden_agreement": a.golden_agreement,
                "eligible_for_next": a.eligible_for_next,
                "flagged_line_clicker": a.flagged_line_clicker,
                "flag_reason": a.flag_reason,
                "stalls": a.stalls_total,
                "admin_note": a.admin_note,
                "rater_excluded": a.rater_id in excluded,
                "rater_excluded_reason": excluded.get(a.rater_id, ""),
                "rater_withdrew": a.rater_id in withdrawn,
                "rejected_in_audit": a.rejected_in_audit,
                # may still count, yet left idle so long that its place went free
                "place_released": capped and a.counts and not a.holds_place,
            }
        )
    adaptive = adaptive_summary(study=study)
    return {
        "study": study.slug,
        "assignments": rows,
        # None unless adaptive collection is on (annotation.services.adaptive)
        "adaptive": adaptive,
        "progress": _progress(
            study,
            figures,
            not_counting={a.pk for a in assignments if not a.counts},
            adaptive=adaptive,
        ),
    }


def _not_counting(study: Study) -> set[int]:
    """The study's sessions that no longer count (annotation.counting): excluded ones,
    those of raters excluded from the study and, unless kept, those that failed the
    golden gate."""
    sessions = Assignment.objects.filter(session__study=study).exclude(counts_q(study))
    return set(sessions.values_list("pk", flat=True))


def study_progress(*, study: Study) -> dict:
    """The study's progress alone (the monitor's "progress")."""
    return _progress(
        study,
        _answer_figures(study),
        not_counting=_not_counting(study),
        adaptive=adaptive_summary(study=study),
    )


def _progress(
    study: Study, figures: dict[int, dict], *, not_counting: set[int], adaptive: dict | None
) -> dict:
    """Progress in the study's items (a video for sliders, a pair for preference, ...)
    that raters can be served: none of a video that failed to transcode, and, where the
    design builds sessions ahead, only those split into a session. The answers of a
    session that no longer counts (annotation.counting: one an admin excluded, a
    questionnaire batch rejected in its audit, one of a rater excluded from the study,
    one that failed its golden gate) do not count: where the design takes a set number of
    raters per session its items go to other raters. The target is the design's raters per
    session where it has one (questionnaire: raters per video; propose-then-verify:
    proposers or verifiers per segment), else the study's target raters per stimulus.
    With adaptive collection on (``adaptive``: its monitor figures) the target is the
    cap per video and what remains is the ratings the open videos may still take, each
    up to the cap (``target_is_cap``): an upper bound, as videos settle before it."""
    design = design_of(study)
    servable = Item.objects.filter(study=study, role=Item.Role.STIMULUS).exclude(
        members__stimulus__status=Stimulus.Status.FAILED
    )
    if design.sessions_on_demand(study=study) is None:
        servable = servable.filter(session_items__isnull=False).distinct()
    stimuli = servable.count()
    counted = [f for pk, f in figures.items() if pk not in not_counting]
    answers = sum(f["regular"] for f in counted)
    recent = sum(f["recent"] for f in counted)
    sessions = Session.objects.filter(study=study).count()
    target_per_stimulus = design.raters_per_session(study=study) or study.target_raters_per_stimulus
    remaining = max(0, stimuli * target_per_stimulus - answers)
    if adaptive is not None:
        target_per_stimulus = adaptive["max_ratings"]
        remaining = max(0, adaptive["projected_ratings"] - adaptive["ratings_collected"])
    return {
        "stimuli": stimuli,
        "sessions": sessions,
        "answers": answers,
        "answers_per_stimulus": round(answers / stimuli, 2) if stimuli else 0.0,
        "target_per_stimulus": target_per_stimulus,
        "target_is_cap": adaptive is not None,
        "answers_last_hour": recent,
        "expected_finish": (
            (timezone.now() + timedelta(hours=remaining / recent)).isoformat()
            if recent and remaining
            else None
        ),
    }
