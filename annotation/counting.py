"""Which of a study's sessions (assignments) may still count, as the analysis' rules that
are known while the study runs decide (quality.stats.exclusions): the session is not
excluded (by an admin, or a questionnaire batch rejected in its audit), its rater is not
excluded from the study (nor withdrew from it), and its golden gate did not fail, unless
the study keeps failed-gate sessions. A session whose gate has not spoken yet counts.

Where a design takes a set number of raters per session (questionnaire: k raters per
batch; propose-then-verify: proposers and verifiers per segment), only sessions that
count hold a place (annotation.services.session_start): a place that stops counting goes
to another rater, so every batch and segment still gets its number of counted raters.
Nor does a session left idle hold it: one still being rated without an answer for the
study's ``idle_place_hours`` (a rater who left, as a marketplace's time-out) gives its
place to another rater, though its rater may still come back and finish it (their
answers then count too: the batch has one rater more). The monitor's progress counts
the answers of sessions that count.
"""

from __future__ import annotations

from datetime import timedelta

from django.db.models import Q
from django.utils import timezone

from annotation.models import Assignment, Participation, Study


def counts_q(study: Study, path: str = "") -> Q:
    """The condition on an assignment (reached through ``path``, e.g. ``assignments__``
    from a session, ``assignment__`` from an answer) that it may still count."""
    excluded_raters = Participation.objects.filter(study_id=study.pk, is_excluded=True)
    condition = ~Q(**{f"{path}state": Assignment.State.EXCLUDED}) & ~Q(
        **{f"{path}rater_id__in": excluded_raters.values("rater_id")}
    )
    if not study.keep_failed_gate_sessions:
        condition &= ~Q(**{f"{path}eligible_for_next": False})
    return condition


def holds_place_q(study: Study, path: str = "") -> Q:
    """The condition on an assignment that it holds a place in its session: it may still
    count and, where the study releases idle places, it is not an active session whose
    last answer (or start) is ``idle_place_hours`` old."""
    condition = counts_q(study, path)
    if study.idle_place_hours:
        cutoff = timezone.now() - timedelta(hours=study.idle_place_hours)
        idle = Q(**{f"{path}last_activity_at__lt": cutoff}) | Q(
            **{f"{path}last_activity_at__isnull": True, f"{path}started_at__lt": cutoff}
        )
        condition &= ~(Q(**{f"{path}state": Assignment.State.ACTIVE}) & idle)
    return condition
