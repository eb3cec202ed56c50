"""Validating an answer's payload: the scores for every dimension and its telemetry."""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from annotation.errors import Conflict, ValidationFailed
from annotation.models import Dimension, QualificationAnswer, Rating


class Scale(Protocol):
    """The slider an answer's scores come from (a Study, or a RatingPosition): its range,
    and its steps, counted from slider_min as the browser's range input counts them."""

    slider_min: float
    slider_max: float
    slider_step: float


# How far from a step a score may lie, as a share of the step: room for the float error of
# a browser's or a client's arithmetic (0.1 + 0.2), none for a value between two steps.
STEP_TOLERANCE = 1e-6


@dataclass(frozen=True)
class Answer:
    client_uuid: uuid.UUID
    item: uuid.UUID  # the stimulus' public id
    scores: dict[str, float]  # dimension key -> score
    shown_at: datetime | None
    answered_at: datetime | None
    watch_time_ms: int
    plays: int
    stalls: int

    def same_payload(self, item: uuid.UUID, scores: dict[str, float]) -> bool:
        return self.item == item and self.scores == scores

    def row_fields(self, dimension: Dimension) -> dict:
        """The columns a stored answer row (Rating, QualificationAnswer) takes for one
        dimension."""
        return {
            "dimension": dimension,
            "score": self.scores[dimension.key],
            "client_uuid": self.client_uuid,
            "shown_at": self.shown_at,
            "answered_at": self.answered_at,
            "watch_time_ms": self.watch_time_ms,
            "plays": self.plays,
            "stalls": self.stalls,
        }


def _uuid(data: dict, key: str) -> uuid.UUID:
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


def _score(key: str, value: object, scale: Scale) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValidationFailed(f"score for '{key}' is not a number: {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValidationFailed(f"score for '{key}' is not a finite number")
    # Compared before any float(): an int of 400 digits is valid JSON but no float.
    if not scale.slider_min <= value <= scale.slider_max:
        shown = f" {value}," if abs(value) < 1e15 else ""
        raise ValidationFailed(
            f"score for '{key}' is{shown} outside the scale "
            f"[{scale.slider_min:g}, {scale.slider_max:g}]"
        )
    steps = (float(value) - scale.slider_min) / scale.slider_step
    if abs(steps - round(steps)) > STEP_TOLERANCE:
        raise ValidationFailed(
            f"score for '{key}' is {value}, not on the slider's steps: "
            f"{scale.slider_min:g} to {scale.slider_max:g} in steps of {scale.slider_step:g}"
        )
    return float(value)


def check_answer(*, data: object, study: Scale, dimensions: list[Dimension]) -> Answer:
    """Parse and check an answer; every refusal names what is wrong."""
    if not isinstance(data, dict):
        raise ValidationFailed("the answer must be a JSON object")
    scores_raw = data.get("scores")
    if not isinstance(scores_raw, dict):
        raise ValidationFailed("'scores' must be an object of dimension: score")
    keys = [d.key for d in dimensions]
    unknown = sorted(set(scores_raw) - set(keys))
    if unknown:
        raise ValidationFailed(f"unknown dimension(s): {', '.join(map(str, unknown))}")
    missing = [key for key in keys if key not in scores_raw]
    if missing:
        raise ValidationFailed(f"missing score(s) for: {', '.join(missing)}")
    scores = {key: _score(key, scores_raw[key], study) for key in keys}
    return Answer(
        client_uuid=_uuid(data, "client_uuid"),
        item=_uuid(data, "item"),
        scores=scores,
        shown_at=_moment(data, "shown_at"),
        answered_at=_moment(data, "answered_at"),
        watch_time_ms=_count(data, "watch_time_ms", limit=24 * 3600 * 1000),
        plays=_count(data, "plays", limit=10_000),
        stalls=_count(data, "stalls", limit=10_000),
    )


def ratings_under(client_uuid: uuid.UUID) -> list[tuple]:
    """The rating rows stored under an answer id, as check_repeat reads them."""
    return list(
        Rating.objects.filter(client_uuid=client_uuid).values_list(
            "assignment__rater_id", "stimulus__public_id", "dimension__key", "score"
        )
    )


def qualification_answers_under(client_uuid: uuid.UUID) -> list[tuple]:
    """The qualification answer rows stored under an answer id, as check_repeat reads them."""
    return list(
        QualificationAnswer.objects.filter(client_uuid=client_uuid).values_list(
            "participation__rater_id", "stimulus__public_id", "dimension__key", "score"
        )
    )


def check_repeat(rows: list[tuple], answer: Answer, participation) -> bool:
    """True when `rows` (already stored under this client_uuid) are this very answer;
    a conflict when the id was used by someone else or for something else."""
    if not rows:
        return False
    if any(row[0] != participation.rater_id for row in rows):
        raise Conflict("this answer id is already in use")
    if any(row[1] != answer.item for row in rows):
        raise Conflict("this answer id was already used for another video")
    if {row[2]: row[3] for row in rows} != answer.scores:
        raise Conflict("this answer id was already used with different scores")
    return True


def check_unused(rows: list[tuple], answer: Answer, participation) -> None:
    """A conflict when `rows` (stored under this client_uuid as the other kind of answer: a
    qualification answer for a rating, or a rating for a qualification answer) exist at
    all. One id names one answer, and no video is both a test video and a session's."""
    if check_repeat(rows, answer, participation):
        raise Conflict("this answer id was already used for another video")
