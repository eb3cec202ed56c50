"""Sessions as a rater lives them: start, answer in the server's order, rest, finish, gate.

Design-blind: an item's values are checked and stored by the study's design
(annotation/designs); everything else (order, position, breaks, the gate's verdict, the
payment, the envelope and its repeats) is the same for every design.
"""

from __future__ import annotations

import logging
import random
import secrets
from collections import Counter
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Exists, OuterRef, Q, Sum
from django.utils import timezone

from annotation.designs import design_of, values_digest
from annotation.dimensions import dimensions_of
from annotation.errors import Conflict, NotFound, OnBreak, PermissionDenied, SessionPaused
from annotation.models import (
    Answer,
    Assignment,
    Item,
    Participation,
    Payment,
    PlaybackReport,
    Rating,
    Session,
    SessionItem,
    Stimulus,
    Study,
)
from annotation.selectors import (
    RatingPosition,
    assignment_current,
    assignment_last_finished,
    break_seconds_left,
    item_layout,
)
from annotation.services.adaptive import (
    adaptive_open_items,
    adaptive_review_due,
    adaptive_settings_of,
)
from annotation.services.answers import (
    Envelope,
    ValuesOf,
    answer_repeated,
    layout_ids,
    out_of_order,
)

logger = logging.getLogger(__name__)

# The live line-clicker guard looks at the ratings of this many recent answers.
LINE_CLICK_WINDOW = 30
LINE_CLICK_EVERY = 10


def _playable_items(**filters):
    """Session items none of whose videos failed, and that have a ready one: an item is
    shown once its videos are processed (a one-video item when its video is ready)."""
    members = "item__members__stimulus__status"
    return (
        SessionItem.objects.filter(**filters)
        .exclude(**{members: Stimulus.Status.FAILED})
        .exclude(**{f"{members}__in": (Stimulus.Status.PENDING, Stimulus.Status.PROCESSING)})
    )


def assignment_start_next(*, participation: Participation) -> Assignment | None:
    """Give the rater the next session they have not done (the least-rated one first).

    The order is the session's items whose videos are READY (golden ones included) and,
    under adaptive collection, have not settled (annotation.services.adaptive), shuffled
    with a fresh per-rater seed, stored once so that every later request reads the same
    order (a review may later drop settled videos from positions the page does not hold
    yet). None when no session is left, or none has a ready item to rate yet: an order
    without one would be an empty (or golden-only) session, never completed.
    """
    with transaction.atomic():
        # The participation before any assignment: the lock order of admin_actions.
        Participation.objects.select_for_update().filter(pk=participation.pk).first()
        current = assignment_current(participation=participation)
        if current is not None:
            return current
        session = _next_session(participation)
        if session is None:
            return None
        seed = secrets.randbits(62)
        items = list(
            adaptive_open_items(_playable_items(session=session), study=participation.study)
            .order_by("item_id")
            .values_list("item_id", flat=True)
            .distinct()
        )
        if adaptive_settings_of(study=participation.study) is not None:
            items = _filled_with_open_videos(items, session, participation, seed)
            if not items:
                return None
        random.Random(seed).shuffle(items)
        earlier = _earlier_sessions(participation)
        assignment = Assignment.objects.create(
            rater_id=participation.rater_id,
            session=session,
            order_seed=seed,
            order=items,
            last_activity_at=timezone.now(),
            answered_before=earlier.answered,
            break_until=earlier.break_until,
        )
    logger.info("rater %s starts %s (%d items)", participation.rater_id, session, len(items))
    return assignment


def _filled_with_open_videos(
    items: list[int], session: Session, participation: Participation, seed: int
) -> list[int]:
    """Under adaptive collection, a session's open items, filled up to the regular videos
    it was built with from the study's other open videos. Settled videos leave sessions,
    so late in a study a session would be its golden videos and a few open ones, paid as
    a whole session for a few useful ratings. The fill is a seeded random sample of the
    open regular videos (never an order by uncertainty: the session stays a random sample
    of what is open, fair to per-session z-scores). Videos the rater has rated in any
    session are left out, so a rater whose session was filled from another never rates a
    video twice. Empty when the rater has rated every video still open."""
    study = participation.study
    golden = set(
        SessionItem.objects.filter(session=session, is_golden=True).values_list(
            "item_id", flat=True
        )
    )
    rated = set(_rated_by(participation).values_list("item_id", flat=True))
    regular = [pk for pk in items if pk not in golden and pk not in rated]
    built = SessionItem.objects.filter(session=session, is_golden=False).count()
    if len(regular) < built:
        pool = list(
            adaptive_open_items(_playable_items(session__study=study, is_golden=False), study=study)
            .exclude(item_id__in=[*regular, *rated, *golden])
            .order_by("item_id")
            .values_list("item_id", flat=True)
            .distinct()
        )
        regular += random.Random(seed).sample(pool, k=min(built - len(regular), len(pool)))
    if not regular:
        return []
    return [pk for pk in items if pk in golden] + regular


def _rated_by(participation: Participation):
    """The rater's session answers to regular videos."""
    return Answer.objects.filter(
        participation=participation, assignment__isnull=False, item__role=Item.Role.STIMULUS
    )


def adaptive_videos_left(participation: Participation) -> bool:
    """Under adaptive collection, whether a regular video the rater has not rated is still
    open (or may be: one still processing), so that a session could be filled for them
    (_filled_with_open_videos). A rater who rated every open video is done for now."""
    study = participation.study
    playable = SessionItem.objects.filter(session__study=study, is_golden=False).exclude(
        item__members__stimulus__status=Stimulus.Status.FAILED
    )
    rated = _rated_by(participation).values("item_id")
    return adaptive_open_items(playable, study=study).exclude(item_id__in=rated).exists()


def _next_session(participation: Participation) -> Session | None:
    """The least-rated session open to the rater (sessions_open_to) that has a ready
    item; where the design makes each rater's session (active pair choice), the one it
    makes now. Where the design takes a set number of raters per session (questionnaire
    overlap), the session's row is locked while its raters are counted again, so that
    two raters starting at once cannot both take its last place."""
    study = participation.study
    design = design_of(study)
    on_demand = design.sessions_on_demand(study=study)
    if on_demand is not None:
        return on_demand.make(participation=participation)
    ready = _playable_items(session=OuterRef("pk"), is_golden=False)
    candidates = sessions_open_to(participation, playable=ready).order_by("raters", "index")
    cap = design.raters_per_session(study=study)
    if cap is None:
        return candidates.first()
    for session_id in candidates.values_list("pk", flat=True)[:20]:
        session = Session.objects.select_for_update().get(pk=session_id)
        own_cap = design.raters_per_session(study=study, session=session)
        if session.assignments.exclude(state=Assignment.State.EXCLUDED).count() < own_cap:
            return session
    return None


def sessions_open_to(participation: Participation, *, playable):
    """The study's sessions the rater has not taken and may take, annotated with their
    raters (the live ones where the design caps them, and below the cap): `playable`, a
    SessionItem subquery on OuterRef("pk"), says which items count as still to answer
    (videos settled under adaptive collection never do); the design's barred sessions
    (a verifier's own segments, a full stage) are left out."""
    study = participation.study
    design = design_of(study)
    playable = adaptive_open_items(playable, study=study)
    taken = Assignment.objects.filter(rater_id=participation.rater_id).values("session_id")
    sessions = Session.objects.filter(Exists(playable), study_id=study.pk).exclude(pk__in=taken)
    if design.barred_sessions is not None:
        sessions = sessions.exclude(pk__in=design.barred_sessions(participation=participation))
    cap = design.raters_per_session(study=study)
    if cap is None:
        return sessions.annotate(raters=Count("assignments"))
    live = Count("assignments", filter=~Q(assignments__state=Assignment.State.EXCLUDED))
    return sessions.annotate(raters=live).filter(raters__lt=cap)


@dataclass(frozen=True)
class _Earlier:
    answered: int  # the rater's answers in the study's earlier sessions
    break_until: datetime | None  # a rest break the last of them started, still running


def _earlier_sessions(participation: Participation) -> _Earlier:
    """What a new session carries over from the rater's earlier ones: rest breaks count
    every answer in the study (sessions of 300 + 10 with a break every 150 answers would
    otherwise let 160 or more go by without one), and a break that the last answer of
    the previous session started runs on into the next."""
    earlier = Assignment.objects.filter(
        rater_id=participation.rater_id, session__study_id=participation.study_id
    )
    answered = earlier.aggregate(total=Sum("position"))["total"] or 0
    running = earlier.filter(break_until__gt=timezone.now()).order_by("-break_until").first()
    return _Earlier(answered, running.break_until if running else None)


def _line_click_share(scores: list[float], step: float) -> float:
    if not scores:
        return 0.0
    counts = Counter(round(score / step) for score in scores)
    return counts.most_common(1)[0][1] / len(scores)


def _finish(assignment: Assignment, study: Study) -> None:
    """The session is over: the design's golden gate decides whether the rater may go on,
    and the session's payment is due."""
    gate = design_of(study).golden_gate(study=study, assignment=assignment)
    assignment.golden_agreement = gate.agreement
    assignment.eligible_for_next = gate.passed
    assignment.state = Assignment.State.FINISHED
    assignment.finished_at = timezone.now()
    Payment.objects.get_or_create(
        assignment=assignment,
        defaults={"amount": study.payment_per_session, "currency": study.payment_currency},
    )
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
        if assignment.break_until and assignment.break_until > now:
            left = break_seconds_left(assignment)
            raise OnBreak(
                f"rest break: ratings are accepted again in {left} s",
                extra={"break_seconds_left": left},
            )
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
        if break_until := _break_after(answered, study, now=answered_at):
            assignment.break_until = break_until
            assignment.breaks_taken += 1
            changed += ["break_until", "breaks_taken"]
        if design.fast_path and _line_click_guard(assignment, study):
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
        PlaybackReport.objects.create(
            participation=participation, item=item, assignment=assignment, detail=detail
        )
    logger.warning("rater %s skipped %s in %s: cannot play it (%s)",
                   participation.rater_id, item, assignment, detail or "no detail")  # fmt: skip
    return True


def answered_moment(
    claimed: datetime | None, *, previous: datetime | None, now: datetime
) -> datetime:
    """When the server counts an answer as given, the moment a rest break it starts runs
    from: the page's `claimed` time (answers from the offline window arrive late, and a
    rater who rested offline has rested), but never before the `previous` answer (or the
    session's start) nor after the answer's arrival, `now`. A page whose clock is wrong,
    or an answer held back, cannot move a rest earlier than the answer before it."""
    moment = claimed or now
    if previous is not None:
        moment = max(moment, previous)
    return min(moment, now)


def _break_after(answered: int, rules, *, now: datetime) -> datetime | None:
    """When the rest break that the rater's `answered`-th answer in the study (given at
    `now`) starts ends (the study's or a RatingPosition's rest_every / rest_seconds), or
    None when it starts none."""
    if rules.rest_every and answered % rules.rest_every == 0:
        return now + timedelta(seconds=rules.rest_seconds)
    return None


def _line_click_due(*, flagged: bool, position: int) -> bool:
    """The guard runs every LINE_CLICK_EVERY answers, to keep answers cheap."""
    return not flagged and position % LINE_CLICK_EVERY == 0


def _line_click_reason(
    *, assignment_id: int, slider_step: float, line_click_share: float, dimensions: int
) -> str | None:
    """Why the assignment's recent slider answers look like line clicking (mostly one
    value), or None when they do not."""
    window = LINE_CLICK_WINDOW * dimensions
    recent = list(
        Rating.objects.filter(answer__assignment_id=assignment_id)
        .order_by("-id")
        .values_list("score", flat=True)[:window]
    )
    share = _line_click_share(recent, slider_step)
    if len(recent) < window or share <= line_click_share:
        return None
    reason = f"{share:.0%} identical scores in the last {len(recent)} ratings"
    logger.warning("assignment %s flagged: %s", assignment_id, reason)
    return reason


def _line_click_guard(assignment: Assignment, study) -> bool:
    """Flag the assignment when the recent slider answers are mostly one value (the rater
    is not told the rule)."""
    if not _line_click_due(flagged=assignment.flagged_line_clicker, position=assignment.position):
        return False
    reason = _line_click_reason(
        assignment_id=assignment.pk,
        slider_step=study.slider_step,
        line_click_share=study.line_click_share,
        dimensions=len(dimensions_of(study.pk)),
    )
    if reason is None:
        return False
    assignment.flagged_line_clicker = True
    assignment.flag_reason = reason
    return True


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
    import json

    answered = position.position + 1
    if position.current is None or answered >= position.length:
        return None
    now = timezone.now()
    answered_at = answered_moment(
        _aware(envelope.answered_at), previous=position.answered_from, now=now
    )
    break_until = _break_after(position.answered_before + answered, position, now=answered_at)
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
    guard = _line_click_due(flagged=position.flagged_line_clicker, position=answered)
    # One statement is a transaction of its own; the guard's reads join it in one, and
    # inside a caller's transaction a savepoint keeps a refused statement from ending it.
    in_transaction = guard or connection.in_atomic_block
    try:
        with transaction.atomic() if in_transaction else nullcontext():
            with connection.cursor() as cursor:
                cursor.execute(_STORE_CURRENT_SQL, params)
                stored = cursor.rowcount
            if stored and guard:
                _line_click_flag(position=position, dimensions=len(dimensions))
    except IntegrityError:
        return None
    if not stored:
        return None
    return StoredAnswer(position=answered, break_until=break_until)


def _line_click_flag(*, position: RatingPosition, dimensions: int) -> None:
    reason = _line_click_reason(
        assignment_id=position.assignment_id,
        slider_step=position.slider_step,
        line_click_share=position.line_click_share,
        dimensions=dimensions,
    )
    if reason is not None:
        Assignment.objects.filter(pk=position.assignment_id, flagged_line_clicker=False).update(
            flagged_line_clicker=True, flag_reason=reason
        )
