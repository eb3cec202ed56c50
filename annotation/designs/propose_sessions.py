"""Who takes which propose-then-verify session (annotation.designs.propose): a session
holds one stage's segments, each stage wants its own number of raters per segment
(proposers, verifiers), and a rater never verifies a segment they proposed labels for."""

from __future__ import annotations

from django.db.models import Count, Q

from annotation.counting import holds_place_q
from annotation.designs.propose_study import PROPOSE, VERIFY, settings_of
from annotation.models import Answer, Session, SessionItem, StageLink


def _stage_limits(study) -> dict[str, int]:
    chosen = settings_of(study)
    return {PROPOSE: chosen.proposers_per_item, VERIFY: chosen.verifiers_per_item}


def raters_per_session(*, study, session=None) -> int:
    """The raters a session takes: its stage's proposers or verifiers per segment (AVA:
    3 each); without a session, the larger (sessions are first chosen by that, then
    counted again under their lock against their own stage's number)."""
    limits = _stage_limits(study)
    if session is None:
        return max(limits.values())
    regular = SessionItem.objects.filter(session=session, is_golden=False)
    stage = regular.values_list("item__dimension__key", flat=True).first()
    return limits.get(stage, max(limits.values()))


def _full_sessions(study):
    """Sessions of the stage with fewer raters per segment that have them all (counting
    only sessions that count, annotation.counting); none when both stages take as many."""
    limits = _stage_limits(study)
    stage = min(limits, key=limits.get)
    if limits[stage] == max(limits.values()):
        return Session.objects.none().values("pk")
    live = Count("assignments", filter=holds_place_q(study, "assignments__"))
    of_stage = SessionItem.objects.filter(is_golden=False, item__dimension__key=stage)
    return (
        Session.objects.filter(study=study, pk__in=of_stage.values("session_id"))
        .annotate(raters=live)
        .filter(raters__gte=limits[stage])
        .values("pk")
    )


def barred_sessions(*, participation):
    """The sessions a rater may not take: those verifying segments they proposed for,
    and those of a stage whose raters per segment are all there (the stages may want
    different numbers, one session cap serves both)."""
    proposed = Answer.objects.filter(
        participation=participation, item__dimension__key=PROPOSE, assignment__isnull=False
    ).values("item_id")
    verify_items = StageLink.objects.filter(
        propose_item__in=proposed, verify_item__isnull=False
    ).values("verify_item_id")
    own = SessionItem.objects.filter(item__in=verify_items, is_golden=False).values("session_id")
    full = _full_sessions(participation.study)
    return Session.objects.filter(Q(pk__in=own) | Q(pk__in=full)).values("pk")
