"""The answer envelope every design shares: its id, the item it is about, its telemetry;
the one rule for a repeated id (the same values are a repeat, others a conflict); and
when an answer's values are checked: only once its item is known to be the rater's."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from annotation.designs import design_of, values_digest
from annotation.designs.base import Values
from annotation.errors import Conflict, OutOfOrder, ValidationFailed
from annotation.models import Answer, Item, Participation, PlaybackReport, Stimulus

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Envelope:
    client_uuid: uuid.UUID
    item: uuid.UUID  # the item's public id
    shown_at: datetime | None
    answered_at: datetime | None
    watch_time_ms: int
    plays: int
    stalls: int

    def answer(self, **fields) -> Answer:
        """The Answer row of this envelope (not saved)."""
        return Answer(
            client_uuid=self.client_uuid,
            shown_at=self.shown_at,
            answered_at=self.answered_at,
            watch_time_ms=self.watch_time_ms,
            plays=self.plays,
            stalls=self.stalls,
            **fields,
        )


def parse_uuid(data: dict, key: str) -> uuid.UUID:
    try:
        return uuid.UUID(str(data[key]))
    except (KeyError, ValueError):
        raise ValidationFailed(f"'{key}' must be a UUID") from None


def _moment(data: dict, key: str) -> datetime | None:
    raw = data.get(key)
    if raw in (None, ""):
        return None
    refusal = ValidationFailed(f"'{key}' must be an ISO 8601 date and time")
    if not isinstance(raw, str):
        raise refusal
    try:
        # parse_datetime raises for a well-formed impossible date (February 30th); a
        # moment at the edge of the calendar cannot be moved to UTC (OverflowError).
        moment = parse_datetime(raw)
        if moment is None:
            raise refusal
        if timezone.is_naive(moment):
            moment = timezone.make_aware(moment)
        return moment.astimezone(UTC)
    except (ValueError, OverflowError):
        raise refusal from None


def _count(data: dict, key: str, *, limit: int) -> int:
    raw = data.get(key, 0)
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not 0 <= raw <= limit:
        raise ValidationFailed(f"'{key}' must be a number between 0 and {limit}")
    return int(raw)


def check_envelope(data: object) -> Envelope:
    """Parse and check an answer's envelope; every refusal names what is wrong."""
    if not isinstance(data, dict):
        raise ValidationFailed("the answer must be a JSON object")
    return Envelope(
        client_uuid=parse_uuid(data, "client_uuid"),
        item=parse_uuid(data, "item"),
        shown_at=_moment(data, "shown_at"),
        answered_at=_moment(data, "answered_at"),
        watch_time_ms=_count(data, "watch_time_ms", limit=24 * 3600 * 1000),
        plays=_count(data, "plays", limit=10_000),
        stalls=_count(data, "stalls", limit=10_000),
    )


# An answer's values as its study's design checks them against an item. The services call
# it only once the item is known to be the rater's (in their session or test, or answered
# by them under this id): a value refused against an item that is not theirs would tell
# them what it holds (how many videos a ranking shows, a segment's candidates, the
# questions a video is asked).
ValuesOf = Callable[[Item], Values]


def values_checked_by_design(*, data: object, study) -> ValuesOf:
    """The ValuesOf of an answer as sent: checked by the study's design when called."""
    design = design_of(study)
    return lambda item: design.check_values(data=data, item=item, study=study)


def answer_repeated(
    *,
    envelope: Envelope,
    participation: Participation,
    item: Item | None,
    values_of: ValuesOf,
) -> Answer | None:
    """The stored answer that this delivery repeats, or None when its id is new.

    One id names one answer: stored by another rater, for another item (``item`` is the
    envelope's, None when the study has no such item), or with other values, it is a
    conflict. The values are checked only once the id is the rater's own answer to this
    very item, so a reused id tells nothing of an item that is not theirs."""
    stored = (
        Answer.objects.filter(client_uuid=envelope.client_uuid)
        .select_related("item__study", "participation")
        .first()
    )
    if stored is None:
        return None
    design = design_of(stored.item.study)
    if stored.participation.rater_id != participation.rater_id:
        raise Conflict("this answer id is already in use")
    if item is None or stored.item_id != item.pk:
        raise Conflict(f"this answer id was already used for another {design.item_noun}")
    if values_digest(values_of(item).canonical()) != stored.values_digest:
        raise Conflict(f"this answer id was already used with different {design.values_noun}")
    return stored


def layout_ids(layout: list[Stimulus]) -> list[str]:
    """The layout as the envelope stores it: the videos' public ids, left to right."""
    return [str(stimulus.public_id) for stimulus in layout]


def item_by_public_id(public_id: uuid.UUID, *, study_id: int) -> Item | None:
    return (
        Item.objects.select_related("study", "dimension")
        .prefetch_related("members__stimulus")
        .filter(public_id=public_id, study_id=study_id)
        .first()
    )


def out_of_order(expected_pk: int, *, position: int, noun: str) -> OutOfOrder:
    """The refusal of an answer that skips ahead: it names the item the server waits for."""
    expected = Item.objects.filter(pk=expected_pk).values_list("public_id", flat=True).first()
    return OutOfOrder(
        f"this is not the {noun} to answer now: answers are taken in order",
        extra={"expected": str(expected), "position": position},
    )


def playback_report_make(*, item: Item, **fields) -> PlaybackReport:
    """Record a skip of an unplayable item (``fields``: participation, assignment or
    attempt, detail), naming its videos (file name, else public id), which the report
    outlives."""
    return PlaybackReport.objects.create(item=item, videos=videos_named(item.pk), **fields)


def videos_named(item_id: int) -> str:
    """An item's videos by file name (public id where it has none), at most 500 characters."""
    videos = Stimulus.objects.filter(memberships__item_id=item_id).order_by("pk")
    names = [
        name or str(public) for name, public in videos.values_list("original_name", "public_id")
    ]
    return ", ".join(names)[:500]
