"""The slider fast path: the common slider answer stored in one SQL statement.

session_answer_submit (annotation.services.session_answers) locks the assignment's row
across round trips; the common case, a slider answer to the current item that is not
the session's last, needs no lock: one statement moves the position on and stores the
answer and its ratings only if nothing moved meanwhile. What it does not store, the
locked path then decides. PostgreSQL only.
"""

from __future__ import annotations

import json
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from annotation.designs import values_digest
from annotation.models import Assignment
from annotation.selectors import RatingPosition
from annotation.services.answers import Envelope
from annotation.services.line_click import line_click_due, line_click_flag
from annotation.services.rest_breaks import answered_moment, break_after

# The common slider answer as one statement: move the position on only if it is still the
# one that was read (and the session is still active and off break), store the envelope
# only if it moved, and its dimension rows only if it was stored. Of two deliveries racing
# for one position the second waits for the row lock, then finds the position moved and
# stores nothing. A repeated answer id fails the envelope's unique constraint.
_STORE_CURRENT_SQL = f"""
WITH moved AS (
    UPDATE annotation_assignment
       SET position = position + 1,
           last_activity_at = %(now)s,
           last_answered_at = %(answered_at_counted)s,
           stalls_total = stalls_total + %(stalls)s,
           break_until = COALESCE(%(break_until)s::timestamptz, break_until),
           breaks_taken = breaks_taken + %(breaks)s
     WHERE id = %(assignment_id)s AND position = %(position)s
       AND state = '{Assignment.State.ACTIVE}'
       AND (break_until IS NULL OR break_until <= %(now)s)
    RETURNING id
), answer AS (
    INSERT INTO annotation_answer
           (client_uuid, item_id, participation_id, assignment_id, attempt, layout,
            values_digest, shown_at, answered_at, received_at, watch_time_ms, plays, stalls)
    SELECT %(client_uuid)s, %(item_id)s, %(participation_id)s, moved.id, NULL, %(layout)s,
           %(digest)s, %(shown_at)s, %(answered_at)s, %(now)s, %(watch_time_ms)s,
           %(plays)s, %(stalls)s
      FROM moved
    RETURNING id
)
INSERT INTO annotation_rating (answer_id, stimulus_id, dimension_id, score)
SELECT answer.id, %(stimulus_id)s, d.id, d.score
  FROM answer,
       unnest(%(dimension_ids)s::bigint[], %(scores)s::double precision[]) AS d(id, score)
"""


@dataclass(frozen=True)
class StoredAnswer:
    position: int  # answered so far, this answer included
    break_until: datetime | None  # when this answer started a rest break


def _aware(moment: datetime | None) -> datetime | None:
    """As the ORM stores a naive date and time: in the default time zone."""
    if moment is not None and timezone.is_naive(moment):
        return timezone.make_aware(moment)
    return moment


def slider_submit_current(
    *, position: RatingPosition, envelope: Envelope, scores: dict[str, float], dimensions
) -> StoredAnswer | None:
    """session_answer_submit for the common slider case, without holding a lock across
    round trips: an answer for the current item (the caller checked it is
    `position.current`), which is not the session's last (that one runs the golden gate).
    PostgreSQL only.

    Returns None when nothing was stored: the position moved on meanwhile, the session
    was paused or ended, a break began, or the answer id was used before.
    session_answer_submit then decides with the row locked what to answer (a repeat, a
    conflict, a refusal).
    """
    answered = position.position + 1
    if position.current is None or answered >= position.length:
        return None
    now = timezone.now()
    answered_at = answered_moment(
        _aware(envelope.answered_at), previous=position.answered_from, now=now
    )
    break_until = break_after(position.answered_before + answered, position, now=answered_at)
    params = {
        "now": now,
        "answered_at_counted": answered_at,
        "stalls": envelope.stalls,
        "break_until": break_until,
        "breaks": int(break_until is not None),
        "assignment_id": position.assignment_id,
        "position": position.position,
        "item_id": position.current.pk,
        "participation_id": position.participation_id,
        "stimulus_id": position.current.stimulus_id,
        "layout": json.dumps([str(position.current.public_id)]),
        "digest": values_digest({"scores": scores}),
        "client_uuid": envelope.client_uuid,
        "shown_at": _aware(envelope.shown_at),
        "answered_at": _aware(envelope.answered_at),
        "watch_time_ms": envelope.watch_time_ms,
        "plays": envelope.plays,
        "dimension_ids": [d.pk for d in dimensions],
        "scores": [scores[d.key] for d in dimensions],
    }
    guard = line_click_due(flagged=position.flagged_line_clicker, position=answered)
    # One statement is a transaction of its own; the guard's reads join it in one, and
    # inside a caller's transaction a savepoint keeps a refused statement from ending it.
    in_transaction = guard or connection.in_atomic_block
    try:
        with transaction.atomic() if in_transaction else nullcontext():
            with connection.cursor() as cursor:
                cursor.execute(_STORE_CURRENT_SQL, params)
                stored = cursor.rowcount
            if stored and guard:
                line_click_flag(position=position, dimensions=len(dimensions))
    except IntegrityError:
        return None
    if not stored:
        return None
    return StoredAnswer(position=answered, break_until=break_until)
