"""Reads for the rater flow: which step a rater is at, their sessions, what to show next.

Reads only: this module imports models and the design entries, never a service (the
services import it).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from functools import reduce
from operator import or_

from django.db import connection
from django.db.models import Q
from django.utils import timezone

from annotation.designs import design_of
from annotation.models import (
    Assignment,
    Item,
    Participation,
    Stimulus,
    Study,
)


def assignment_current(*, participation: Participation) -> Assignment | None:
    """The rater's unfinished assignment in this study, if any."""
    return (
        Assignment.objects.filter(
            rater_id=participation.rater_id,
            session__study_id=participation.study_id,
            state__in=[Assignment.State.ACTIVE, Assignment.State.PAUSED],
        )
        .select_related("session__study")
        .first()
    )


def assignment_last_finished(*, participation: Participation) -> Assignment | None:
    return (
        Assignment.objects.filter(
            rater_id=participation.rater_id,
            session__study_id=participation.study_id,
            state=Assignment.State.FINISHED,
        )
        .order_by("-finished_at")
        .first()
    )


def seconds_until(moment: datetime | None) -> int:
    """Whole seconds left until `moment` (rounded up), 0 when it is past or None."""
    if moment is None:
        return 0
    left = (moment - timezone.now()).total_seconds()
    return max(0, int(left + 0.999))


def break_seconds_left(assignment: Assignment) -> int:
    return seconds_until(assignment.break_until)


@dataclass(frozen=True)
class PositionItem:
    """A one-video item as the rater may see it: nothing says whether it is golden."""

    pk: int  # the item's
    stimulus_id: int
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
    participation_id: int
    # Consent given, tutorial done, qualification passed and not excluded.
    may_rate: bool
    study_id: int
    design: str
    study_running: bool
    slider_min: float
    slider_max: float
    slider_step: float
    rest_every: int
    rest_seconds: int
    line_click_share: float
    window_size: int
    assignment_id: int | None
    assignment_active: bool
    position: int
    length: int
    break_until: datetime | None
    # When the latest answer was given, as the server counts it (or the session's start):
    # no answer's time counts as earlier (services.rest_breaks.answered_moment).
    answered_from: datetime | None
    flagged_line_clicker: bool
    answered_before: int  # the rater's answers in the study's earlier sessions
    # The items from the one to answer now: the window and (at least) the one after it.
    upcoming: tuple[PositionItem, ...]

    @property
    def current(self) -> PositionItem | None:
        return self.upcoming[0] if self.upcoming else None

    def window(self) -> tuple[list[PositionItem], str]:
        """The window's items and what follows them (see window_span)."""
        stop, ends = window_span(
            position=self.position,
            length=self.length,
            size=self.window_size,
            answered_before=self.answered_before,
            rest_every=self.rest_every,
        )
        return list(self.upcoming[: stop - self.position]), ends

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


# One round trip instead of the ORM's four (token, participation with study, assignment,
# items' videos); the order is indexed in the database, never sent whole. The video of a
# one-video item is its member in slot 0. The upcoming items are the window, and at
# least the item after the current one (the page's preload hint when the window is 1).
_RATING_POSITION_SQL = f"""
SELECT u.is_active, p.rater_id, p.id,
       (NOT p.is_excluded AND p.consent_at IS NOT NULL AND p.tutorial_done_at IS NOT NULL
        AND p.qualification_state = '{Participation.Qualification.PASSED}'),
       s.id, s.design, s.state = '{Study.State.RUNNING}', s.slider_min, s.slider_max,
       s.slider_step, s.rest_every, s.rest_seconds, s.line_click_share, s.window_size,
       a.id, a.state = '{Assignment.State.ACTIVE}', a.position,
       jsonb_array_length(a."order"), a.break_until,
       COALESCE(a.last_answered_at, a.started_at),
       a.flagged_line_clicker, a.answered_before, w.items
  FROM auth_user u
  JOIN annotation_rater r ON r.user_id = u.id
  JOIN annotation_participation p ON p.rater_id = r.id
  JOIN annotation_study s ON s.id = p.study_id
  LEFT JOIN LATERAL (
       SELECT a.id, a.state, a.position, a."order", a.break_until, a.last_answered_at,
              a.started_at, a.flagged_line_clicker, a.answered_before
         FROM annotation_assignment a
         JOIN annotation_session se ON se.id = a.session_id
        WHERE a.rater_id = r.id AND se.study_id = s.id
          AND a.state IN ('{Assignment.State.ACTIVE}', '{Assignment.State.PAUSED}')
        ORDER BY se.index, a.started_at
        LIMIT 1) a ON TRUE
  LEFT JOIN LATERAL (
       SELECT json_agg(json_build_array(m.item_id, v.id, v.public_id, v.prompt, v.action,
                                        v.width, v.height, v.poster) ORDER BY g.n) AS items
         FROM generate_series(a.position, LEAST(a.position + GREATEST(s.window_size, 2),
                                                jsonb_array_length(a."order")) - 1) AS g(n)
         -- LIMIT 1 keeps each lookup a nested index scan: the planner takes the series
         -- for 1,000 rows and would hash whole tables otherwise.
         CROSS JOIN LATERAL (
              SELECT m.item_id, m.stimulus_id FROM annotation_itemmember m
               WHERE m.item_id = (a."order" ->> g.n)::bigint AND m.slot = 0 LIMIT 1) m
         CROSS JOIN LATERAL (
              SELECT v.id, v.public_id, v.prompt, v.action, v.width, v.height, v.poster
                FROM annotation_stimulus v WHERE v.id = m.stimulus_id LIMIT 1) v) w ON TRUE
 WHERE s.slug = %s AND u.id = {{user}}
"""
_BY_USER = _RATING_POSITION_SQL.format(user="%s")
_BY_TOKEN = _RATING_POSITION_SQL.format(
    user="(SELECT t.user_id FROM authtoken_token t WHERE t.key = %s)"
)


def _position_item(row: list) -> PositionItem:
    item, pk, public_id, prompt, action, width, height, poster = row
    return PositionItem(item, pk, uuid.UUID(public_id), prompt, action, width, height, poster or "")


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
    has_assignment = row[14] is not None
    upcoming = row[22] or []  # json (not jsonb: cheaper to build), decoded by psycopg
    return RatingPosition(
        *row[:15],
        assignment_active=bool(row[15]),
        position=row[16] if has_assignment else 0,
        length=row[17] if has_assignment else 0,
        break_until=row[18],
        answered_from=row[19],
        flagged_line_clicker=bool(row[20]),
        answered_before=row[21] or 0,
        upcoming=tuple(_position_item(entry) for entry in upcoming),
    )


def window_span(
    *, position: int, length: int, size: int, answered_before: int = 0, rest_every: int = 0
) -> tuple[int, str]:
    """Where the rater's window ends: (the position after its last item, what follows it).

    The window holds the item to answer now and the next ones, `size` in all, but never
    reaches past the end of the session (or test), nor past the answer that starts a
    rest break: the one that makes the rater's answers in the study (`answered_before`
    plus the position after it) a multiple of `rest_every`. What follows is "break",
    "end" (the server decides: golden gate, qualification verdict) or "more"."""
    stop, ends = position + max(1, size), "more"
    if stop >= length:
        stop, ends = length, "end"
    if rest_every:
        answered = answered_before + position
        rest_at = (answered // rest_every + 1) * rest_every - answered_before
        if rest_at <= stop:
            stop, ends = rest_at, "break"
    return stop, ends


def window_payload(items: list[dict], *, preload: dict | None, ends: str, rest_seconds: int):
    """The next/ fields that carry the window (docs/rater-api.md): `item` and `preload`
    as before, the window's items, what follows them and the rest a break lasts (the
    page counts a break down even offline)."""
    return {
        "item": items[0] if items else None,
        "preload": preload,
        "window": items,
        "window_ends": ends if items else None,
        "rest_seconds": rest_seconds,
    }


def item_layout(item: Item, seed: object) -> list[Stimulus]:
    """The item's videos in the order this rater sees them (the design decides)."""
    return design_of(item.study).layout(item=item, seed=seed)


def item_payload(item: Item, seed: object) -> dict:
    """What the page gets of an item: its design's payload, named by the item's id."""
    payload = design_of(item.study).item_payload(item=item, layout=item_layout(item, seed))
    return {**payload, "id": str(item.public_id)}


def items_by_pk(pks: list[int]) -> dict[int, Item]:
    """Items with their study and videos, ready for their payload."""
    return (
        Item.objects.select_related("study", "dimension")
        .prefetch_related("members__stimulus")
        .in_bulk(pks)
    )


def rater_step(participation: Participation, assignment: Assignment | None) -> str:
    """The one place that decides where a rater is in the journey."""
    Q = Participation.Qualification
    if participation.withdrawn_at is not None:
        return "withdrawn"  # before excluded: withdrawing excludes the rater too
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


def qualification_drawn(participation: Participation) -> list[int]:
    """The item ids of the rater's current qualification attempt, if drawn yet."""
    frozen = participation.qualification_set or {}
    if frozen.get("attempt") == participation.qualification_attempts:
        return list(frozen.get("items") or [])
    return []


def stimulus_visible_to(*, user, stimulus: Stimulus) -> bool:
    """Staff see every video; a rater sees a video only while it is theirs to watch."""
    if user.is_staff:
        return True
    rater = getattr(user, "rater", None)
    if rater is None:
        return False
    if stimulus.role == Stimulus.Role.TUTORIAL:
        return Participation.objects.filter(rater=rater, study_id=stimulus.study_id).exists()
    items = Item.objects.filter(members__stimulus=stimulus).values_list("pk", flat=True)
    if stimulus.role == Stimulus.Role.QUALIFICATION:
        participation = Participation.objects.filter(
            rater=rater, study_id=stimulus.study_id
        ).first()
        drawn = set(qualification_drawn(participation)) if participation else set()
        return any(pk in drawn for pk in items)
    # A session's videos while it goes on (a pause may be lifted), not once it has ended.
    going_on = Assignment.objects.filter(
        rater=rater,
        session__study_id=stimulus.study_id,
        state__in=(Assignment.State.ACTIVE, Assignment.State.PAUSED),
    )
    items = list(items)
    if not items:
        return False
    if connection.features.supports_json_field_contains:
        return going_on.filter(reduce(or_, (Q(order__contains=[pk]) for pk in items))).exists()
    return any(pk in a.order for a in going_on for pk in items)


def session_window(assignment: Assignment) -> tuple[list[Item], Item | None, str]:
    """The items of the session's window (window_span), the item after the current one
    (the page's preload hint) and what follows the window."""
    study = assignment.session.study
    stop, ends = window_span(
        position=assignment.position,
        length=len(assignment.order),
        size=study.window_size,
        answered_before=assignment.answered_before,
        rest_every=study.rest_every,
    )
    pks = assignment.order[assignment.position : max(stop, assignment.position + 2)]
    found = items_by_pk(pks)
    upcoming = [found[pk] for pk in pks if pk in found]
    window = upcoming[: stop - assignment.position]
    return window, (upcoming[1] if len(upcoming) > 1 else None), ends
