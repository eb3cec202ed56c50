"""Reads for the rater flow: which step a rater is at, and what to show next."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from django.urls import reverse

from annotation.models import (
    Assignment,
    Dimension,
    Participation,
    Stimulus,
    Study,
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


@dataclass(frozen=True)
class PositionItem:
    """A stimulus as the rater may see it: nothing says whether it is golden."""

    pk: int
    public_id: uuid.UUID
    prompt: str
    action: str
    width: int | None
    height: int | None
    poster: str  # the poster file's name, empty without one


@dataclass(frozen=True)
class RatingPosition:
    """Where a rater stands in a study's current session, read in one query for the two
    requests every answer costs (next item, answer)."""

    user_active: bool
    rater_id: int
    # Consent given, tutorial done, qualification passed and not excluded.
    may_rate: bool
    study_id: int
    study_running: bool
    slider_min: float
    slider_max: float
    slider_step: float
    rest_every: int
    rest_seconds: int
    line_click_share: float
    assignment_id: int | None
    assignment_active: bool
    position: int
    length: int
    break_until: datetime | None
    flagged_line_clicker: bool
    answered_before: int  # the rater's answers in the study's earlier sessions
    current: PositionItem | None
    preload: PositionItem | None

    @property
    def rating_open(self) -> bool:
        """The ordinary case: an active session with an item left to rate."""
        return (
            self.user_active
            and self.study_running
            and self.may_rate
            and self.assignment_active
            and self.current is not None
            and self.position < self.length
        )


_ITEM_COLUMNS = "{0}.id, {0}.public_id, {0}.prompt, {0}.action, {0}.width, {0}.height, {0}.poster"
# One round trip instead of the ORM's four (token, participation with study, assignment,
# stimuli); the order is indexed in the database, never sent whole.
_RATING_POSITION_SQL = f"""
SELECT u.is_active, p.rater_id,
       (NOT p.is_excluded AND p.consent_at IS NOT NULL AND p.tutorial_done_at IS NOT NULL
        AND p.qualification_state = '{Participation.Qualification.PASSED}'),
       s.id, s.state = '{Study.State.RUNNING}', s.slider_min, s.slider_max, s.slider_step,
       s.rest_every, s.rest_seconds, s.line_click_share,
       a.id, a.state = '{Assignment.State.ACTIVE}', a.position,
       jsonb_array_length(a."order"), a.break_until, a.flagged_line_clicker,
       a.answered_before,
       {_ITEM_COLUMNS.format("cur")},
       {_ITEM_COLUMNS.format("nxt")}
  FROM auth_user u
  JOIN annotation_rater r ON r.user_id = u.id
  JOIN annotation_participation p ON p.rater_id = r.id
  JOIN annotation_study s ON s.id = p.study_id
  LEFT JOIN LATERAL (
       SELECT a.id, a.state, a.position, a."order", a.break_until, a.flagged_line_clicker,
              a.answered_before
         FROM annotation_assignment a
         JOIN annotation_session se ON se.id = a.session_id
        WHERE a.rater_id = r.id AND se.study_id = s.id
          AND a.state IN ('{Assignment.State.ACTIVE}', '{Assignment.State.PAUSED}')
        ORDER BY se.index, a.started_at
        LIMIT 1) a ON TRUE
  LEFT JOIN annotation_stimulus cur ON cur.id = (a."order" ->> a.position)::bigint
  LEFT JOIN annotation_stimulus nxt ON nxt.id = (a."order" ->> (a.position + 1))::bigint
 WHERE s.slug = %s AND u.id = {{user}}
"""
_BY_USER = _RATING_POSITION_SQL.format(user="%s")
_BY_TOKEN = _RATING_POSITION_SQL.format(
    user="(SELECT t.user_id FROM authtoken_token t WHERE t.key = %s)"
)


def _position_item(row: tuple) -> PositionItem | None:
    pk, public_id, prompt, action, width, height, poster = row
    if pk is None:
        return None
    return PositionItem(pk, public_id, prompt, action, width, height, poster or "")


def rating_position(
    *, slug: str, user_id: int | None = None, token_key: str | None = None
) -> RatingPosition | None:
    """The rater's position in the study `slug`, found by user id or by API token (then
    the token lookup is part of the same query). None when the user, token or
    participation does not exist. PostgreSQL only (jsonb operators, LATERAL)."""
    sql, key = (_BY_USER, user_id) if token_key is None else (_BY_TOKEN, token_key)
    with connection.cursor() as cursor:
        cursor.execute(sql, [slug, key])
        row = cursor.fetchone()
    if row is None:
        return None
    has_assignment = row[11] is not None
    return RatingPosition(
        *row[:12],
        assignment_active=bool(row[12]),
        position=row[13] if has_assignment else 0,
        length=row[14] if has_assignment else 0,
        break_until=row[15],
        flagged_line_clicker=bool(row[16]),
        answered_before=row[17] or 0,
        current=_position_item(row[18:25]),
        preload=_position_item(row[25:32]),
    )


def media_urls(stimulus: Stimulus | PositionItem) -> dict:
    return {
        "id": str(stimulus.public_id),
        "video_url": reverse("media-video", args=[stimulus.public_id]),
        "poster_url": reverse("media-poster", args=[stimulus.public_id]) if stimulus.poster else "",
    }


def item_payload(stimulus: Stimulus | PositionItem) -> dict:
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
        if assignment.state == Assignment.State.PAUSED:
            return "paused"  # by the study's team: nothing to rate until they reopen it
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
    # A session's videos while it goes on (a pause may be lifted), not once it has ended.
    going_on = Assignment.objects.filter(
        rater=rater, state__in=(Assignment.State.ACTIVE, Assignment.State.PAUSED)
    )
    return (
        going_on.filter(session__study_id=stimulus.study_id, order__contains=[stimulus.pk]).exists()
        if _json_contains_supported()
        else any(stimulus.pk in a.order for a in going_on)
    )


def _json_contains_supported() -> bool:
    from django.db import connection

    return connection.features.supports_json_field_contains


def current_assignment(participation: Participation) -> Assignment | None:
    return assignment_current(participation=participation)
