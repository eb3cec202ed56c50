"""Reads for the rater flow: which step a rater is at, and what to show next."""

from __future__ import annotations

import time

from django.urls import reverse

from annotation.models import (
    Assignment,
    Dimension,
    Participation,
    Stimulus,
    TutorialPair,
)
from annotation.services.assignments import (
    assignment_current,
    assignment_last_finished,
    break_seconds_left,
)
from annotation.services.qualification import qualification_answered, qualification_items

_DIMENSIONS_CACHE: dict[int, tuple[float, list[Dimension]]] = {}
DIMENSIONS_CACHE_S = 30.0


def dimensions_of(study_id: int) -> list[Dimension]:
    """A study's dimensions in rating order, cached in-process for a few seconds: they are
    read on every answer and do not change while a study runs."""
    now = time.monotonic()
    cached = _DIMENSIONS_CACHE.get(study_id)
    if cached is None or cached[0] < now:
        dimensions = list(Dimension.objects.filter(study_id=study_id).order_by("order"))
        _DIMENSIONS_CACHE[study_id] = cached = (now + DIMENSIONS_CACHE_S, dimensions)
    return cached[1]


def media_urls(stimulus: Stimulus) -> dict:
    return {
        "id": str(stimulus.public_id),
        "video_url": reverse("media-video", args=[stimulus.public_id]),
        "poster_url": reverse("media-poster", args=[stimulus.public_id]) if stimulus.poster else "",
    }


def item_payload(stimulus: Stimulus) -> dict:
    return {
        **media_urls(stimulus),
        "prompt": stimulus.prompt,
        "action": stimulus.action,
        "width": stimulus.width,
        "height": stimulus.height,
    }


def rater_step(participation: Participation, assignment: Assignment | None) -> str:
    """The one place that decides where a rater is in the journey."""
    Q = Participation.Qualification
    if participation.is_excluded:
        return "not_eligible"
    if participation.consent_at is None:
        return "consent"
    if participation.tutorial_done_at is None:
        return "tutorial"
    if participation.qualification_state == Q.FAILED:
        return "screened_out"
    if participation.qualification_state != Q.PASSED:
        return "qualification"
    if assignment is not None:
        return "break" if break_seconds_left(assignment) else "rating"
    last = assignment_last_finished(participation=participation)
    if last is not None and last.eligible_for_next is False:
        return "not_eligible"
    return "rating"  # the next session starts when the rater asks for the next item


def completion_payload(participation: Participation, step: str) -> dict | None:
    study = participation.study
    if step == "screened_out":
        return {"code": participation.completion_code, "redirect_url": study.screenout_url}
    if step in ("done", "not_eligible"):
        return {"code": participation.completion_code, "redirect_url": study.completion_url}
    return None


def assignment_payload(assignment: Assignment | None) -> dict | None:
    if assignment is None:
        return None
    return {
        "id": assignment.pk,
        "position": assignment.position,
        "length": len(assignment.order),
        "state": assignment.state,
        "break_seconds_left": break_seconds_left(assignment),
    }


def tutorial_payload(*, study_id: int) -> list[dict]:
    pairs = TutorialPair.objects.filter(study_id=study_id).select_related(
        "dimension", "generated", "real"
    )
    result = []
    for pair in pairs:
        expert = {
            e.dimension.key: e.mean
            for e in pair.generated.expert_scores.select_related("dimension")
        }
        result.append(
            {
                "dimension": pair.dimension.key,
                "label": pair.label,
                "caption": pair.caption,
                "explanation": pair.explanation,
                "generated": media_urls(pair.generated),
                "real": media_urls(pair.real),
                "expert": expert,
            }
        )
    return result


def qualification_next(
    participation: Participation,
) -> tuple[Stimulus | None, Stimulus | None, int, int]:
    items = qualification_items(participation=participation)
    answered = qualification_answered(participation=participation)
    remaining = [pk for pk in items if pk not in answered]
    stimuli = Stimulus.objects.in_bulk(remaining[:2])
    current = stimuli.get(remaining[0]) if remaining else None
    preload = stimuli.get(remaining[1]) if len(remaining) > 1 else None
    return current, preload, len(items) - len(remaining), len(items)


def session_next(assignment: Assignment) -> tuple[Stimulus | None, Stimulus | None]:
    upcoming = assignment.order[assignment.position : assignment.position + 2]
    stimuli = Stimulus.objects.in_bulk(upcoming)
    current = stimuli.get(upcoming[0]) if upcoming else None
    preload = stimuli.get(upcoming[1]) if len(upcoming) > 1 else None
    return current, preload


def stimulus_visible_to(*, user, stimulus: Stimulus) -> bool:
    """Staff see every video; a rater sees a video only while it is theirs to watch."""
    if user.is_staff:
        return True
    rater = getattr(user, "rater", None)
    if rater is None:
        return False
    if stimulus.role == Stimulus.Role.TUTORIAL:
        return Participation.objects.filter(rater=rater, study_id=stimulus.study_id).exists()
    if stimulus.role == Stimulus.Role.QUALIFICATION:
        participation = (
            Participation.objects.filter(rater=rater, study_id=stimulus.study_id)
            .select_related("study")
            .first()
        )
        return participation is not None and stimulus.pk in qualification_items(
            participation=participation
        )
    return (
        Assignment.objects.filter(
            rater=rater, session__study_id=stimulus.study_id, order__contains=[stimulus.pk]
        ).exists()
        if _json_contains_supported()
        else any(stimulus.pk in a.order for a in Assignment.objects.filter(rater=rater))
    )


def _json_contains_supported() -> bool:
    from django.db import connection

    return connection.features.supports_json_field_contains


def current_assignment(participation: Participation) -> Assignment | None:
    return assignment_current(participation=participation)
