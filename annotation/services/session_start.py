"""Starting a rater's next session: which session they get, and its items' order.

The order is drawn once, when the session starts, and stored on the assignment, so that
every later request reads the same one; a rest break that the rater's earlier sessions
started carries over. Design-blind but for what the design says of its sessions (made on
demand, raters per session, sessions barred to a rater).
"""

from __future__ import annotations

import logging
import random
import secrets
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import Count, Exists, OuterRef, Sum
from django.utils import timezone

from annotation.counting import holds_place_q
from annotation.designs import design_of
from annotation.models import (
    Answer,
    Assignment,
    Item,
    Participation,
    Session,
    SessionItem,
    Stimulus,
)
from annotation.selectors import assignment_current
from annotation.services.adaptive import adaptive_open_items, adaptive_settings_of

logger = logging.getLogger(__name__)


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
        # The participation before any assignment: the lock order of admin_actions. Read
        # again under the lock: a withdrawal (or an exclusion) committed since the
        # request read it starts no session.
        locked = Participation.objects.select_for_update().filter(pk=participation.pk).first()
        if locked is None or locked.is_excluded:
            return None
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
    overlap), the session's row is locked while its raters are counted again (those
    whose sessions count, annotation.counting), so that two raters starting at once
    cannot both take its last place."""
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
        if session.assignments.filter(holds_place_q(study)).count() < own_cap:
            return session
    return None


def sessions_open_to(participation: Participation, *, playable):
    """The study's sessions the rater has not taken and may take, annotated with their
    raters (where the design caps them, those whose sessions count, annotation.counting,
    and below the cap): `playable`, a
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
    live = Count("assignments", filter=holds_place_q(study, "assignments__"))
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
