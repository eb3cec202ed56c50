"""Arrival, consent, viewing check and tutorial of a rater in a study."""

from __future__ import annotations

import logging
import re
import secrets

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.errors import NotFound, PermissionDenied, ValidationFailed
from annotation.models import Participation, Rater, Stimulus, Study

logger = logging.getLogger(__name__)

PARTICIPANT_ID = re.compile(r"^[A-Za-z0-9_-]{1,100}$")


def rater_for_user(*, user: User) -> Rater:
    rater, _ = Rater.objects.get_or_create(user=user)
    return rater


def access_running_study(*, slug: str) -> Study:
    study = Study.objects.filter(slug=slug).first()
    if study is None:
        raise NotFound(f"no study '{slug}'")
    if study.state != Study.State.RUNNING:
        raise PermissionDenied("this study is not running at the moment")
    return study


def rater_enter_marketplace(
    *,
    slug: str,
    token: str,
    participant_id: str,
    marketplace_study_id: str = "",
    marketplace_session_id: str = "",
) -> tuple[User, Participation]:
    """A marketplace link creates or resumes a passwordless rater (Prolific convention).

    The study's secret entry token must match, so nobody can guess their way in.
    """
    study = Study.objects.filter(slug=slug).first()
    if study is None or not secrets.compare_digest(token or "", study.entry_token):
        logger.warning("marketplace entry refused for study %r: bad token", slug)
        raise PermissionDenied("this link is not valid for any study")
    if study.state != Study.State.RUNNING:
        raise PermissionDenied("this study is not running at the moment")
    if not PARTICIPANT_ID.match(participant_id or ""):
        raise ValidationFailed("the link carries no valid participant id (PROLIFIC_PID)")
    with transaction.atomic():
        rater = Rater.objects.select_related("user").filter(external_id=participant_id).first()
        if rater is None:
            try:
                with transaction.atomic():
                    user = User.objects.create(username=f"p-{participant_id}"[:150])
                    user.set_unusable_password()
                    user.save(update_fields=["password"])
                    rater = Rater.objects.create(user=user, external_id=participant_id)
            except IntegrityError:  # the same participant arrived twice at once
                rater = Rater.objects.select_related("user").get(external_id=participant_id)
        participation, _ = Participation.objects.get_or_create(rater=rater, study=study)
        changed = []
        for field, value in (
            ("marketplace_study_id", marketplace_study_id),
            ("marketplace_session_id", marketplace_session_id),
        ):
            if value and getattr(participation, field) != value[:120]:
                setattr(participation, field, value[:120])
                changed.append(field)
        if changed:
            participation.save(update_fields=changed)
    return rater.user, participation


def access_participation(*, user: User, slug: str) -> Participation:
    """The signed-in rater's participation in a running study (one query when it exists)."""
    participation = (
        Participation.objects.select_related("study")
        .filter(rater__user=user, study__slug=slug)
        .first()
    )
    if participation is None:
        return participation_get_or_create(user=user, study=access_running_study(slug=slug))
    if participation.study.state != Study.State.RUNNING:
        raise PermissionDenied("this study is not running at the moment")
    return participation


def participation_get_or_create(*, user: User, study: Study) -> Participation:
    rater = rater_for_user(user=user)
    participation, _ = Participation.objects.select_related("study", "rater").get_or_create(
        rater=rater, study=study
    )
    return participation


def _int_field(data: dict, key: str) -> int:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ValidationFailed(f"'{key}' must be a non-negative number")
    return int(value)


def participation_consent(*, participation: Participation, data: dict) -> Participation:
    """Record consent and the viewing conditions; refuse screens smaller than required."""
    if data.get("accept") is not True:
        raise ValidationFailed("consent must be accepted to take part")
    viewport = (_int_field(data, "viewport_width"), _int_field(data, "viewport_height"))
    study = participation.study
    if viewport[0] < study.min_viewport_width or viewport[1] < study.min_viewport_height:
        raise ValidationFailed(
            f"this study needs a browser window of at least {study.min_viewport_width} x "
            f"{study.min_viewport_height} pixels to show its videos at their native size; "
            f"yours is {viewport[0]} x {viewport[1]}",
            extra={"reason": "viewport_too_small"},
        )
    pixel_ratio = data.get("pixel_ratio", 1)
    if isinstance(pixel_ratio, bool) or not isinstance(pixel_ratio, int | float):
        raise ValidationFailed("'pixel_ratio' must be a number")
    participation.viewing_check = {
        "viewport_width": viewport[0],
        "viewport_height": viewport[1],
        "pixel_ratio": float(pixel_ratio),
        "screen_width": int(data.get("screen_width") or 0),
        "screen_height": int(data.get("screen_height") or 0),
        "user_agent": str(data.get("user_agent", ""))[:400],
    }
    if participation.consent_at is None:
        participation.consent_at = timezone.now()
        participation.qualification_order_seed = secrets.randbits(62)
    participation.save(update_fields=["viewing_check", "consent_at", "qualification_order_seed"])
    return participation


def participation_tutorial_done(*, participation: Participation) -> Participation:
    if participation.consent_at is None:
        raise PermissionDenied("consent comes before the tutorial")
    if participation.tutorial_done_at is None:
        participation.tutorial_done_at = timezone.now()
        if participation.qualification_state == Participation.Qualification.NOT_STARTED:
            participation.qualification_attempts = 1
            has_test = (
                participation.study.qualification_size > 0
                and Stimulus.objects.filter(
                    study=participation.study,
                    role=Stimulus.Role.QUALIFICATION,
                    status=Stimulus.Status.READY,
                ).exists()
            )
            # A study without qualification items (or of size 0) has no test to pass.
            participation.qualification_state = (
                Participation.Qualification.IN_PROGRESS
                if has_test
                else Participation.Qualification.PASSED
            )
        participation.save(
            update_fields=["tutorial_done_at", "qualification_state", "qualification_attempts"]
        )
    return participation
