"""Arrival, consent, viewing check and tutorial of a rater in a study."""

from __future__ import annotations

import logging
import re
import secrets

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.designs.base import refuse_nul
from annotation.errors import (
    Conflict,
    NotFound,
    PermissionDenied,
    StudyNotRunning,
    ValidationFailed,
)
from annotation.models import Participation, Rater, Study
from annotation.services.qualification import qualification_items, study_has_test

logger = logging.getLogger(__name__)

PARTICIPANT_ID = re.compile(r"^[A-Za-z0-9_-]{1,100}$")


def rater_for_user(*, user: User) -> Rater:
    rater, _ = Rater.objects.get_or_create(user=user)
    return rater


def _refuse_unless_running(study: Study) -> None:
    """A closed study is over: refused for good (the rater's page drops what it still
    holds). A study paused or not started yet holds answers back for later (423)."""
    if study.state == Study.State.CLOSED:
        raise PermissionDenied("this study is closed")
    if study.state != Study.State.RUNNING:
        raise StudyNotRunning("this study is not running at the moment")


def access_running_study(*, slug: str) -> Study:
    study = Study.objects.filter(slug=slug).first()
    if study is None:
        raise NotFound(f"no study '{slug}'")
    _refuse_unless_running(study)
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


def access_participation(*, user: User, slug: str, paused_too: bool = False) -> Participation:
    """The signed-in rater's participation in a running study (one query when it exists),
    or in a paused one too with ``paused_too`` (withdrawing needs no running study).

    A rater takes part once they entered through the study's link (marketplace entry,
    or the link opened while signed in); a study that is open to every signed-in rater
    (`open_to_signed_in`) lets them in without it."""
    participation = (
        Participation.objects.select_related("study")
        .filter(rater__user=user, study__slug=slug)
        .first()
    )
    if participation is None:
        study = access_running_study(slug=slug)
        if not study.open_to_signed_in:
            logger.warning("user %s refused: study %s is entered through its link", user.pk, slug)
            raise PermissionDenied(
                "this study is entered through its link: please open the link you were given",
                extra={"error": "link_required"},
            )
        return participation_get_or_create(user=user, study=study)
    if not (paused_too and participation.study.state == Study.State.PAUSED):
        _refuse_unless_running(participation.study)
    return participation


def rater_enter_signed_in(*, user: User, slug: str, token: str) -> Participation:
    """A signed-in rater opens the study's link: the entry token lets them take part."""
    study = Study.objects.filter(slug=slug).first()
    if study is None or not secrets.compare_digest(token or "", study.entry_token):
        logger.warning("link entry refused for study %r: bad token", slug)
        raise PermissionDenied("this link is not valid for any study")
    if study.state != Study.State.RUNNING:
        raise PermissionDenied("this study is not running at the moment")
    return participation_get_or_create(user=user, study=study)


def participation_get_or_create(*, user: User, study: Study) -> Participation:
    rater = rater_for_user(user=user)
    participation, _ = Participation.objects.select_related("study", "rater").get_or_create(
        rater=rater, study=study
    )
    return participation


# Larger than any screen in CSS pixels: a bound, so that nothing absurd is stored.
MAX_PIXELS = 100_000


def _pixels(data: dict, key: str, *, required: bool) -> int:
    """A width or height in CSS pixels; 0 for an optional one the browser did not know."""
    value = data.get(key)
    if value is None and not required:
        return 0
    # JSON's 1e400 arrives as infinity, and int(infinity) raises.
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not 0 <= value <= MAX_PIXELS
    ):
        raise ValidationFailed(f"'{key}' must be a number of pixels between 0 and {MAX_PIXELS}")
    return int(value)


def _pixel_ratio(data: dict) -> float:
    value = data.get("pixel_ratio", 1)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 100:
        raise ValidationFailed("'pixel_ratio' must be a number above 0 and at most 100")
    return float(value)


def participation_consent(*, participation: Participation, data: object) -> Participation:
    """Record consent (with the text agreed to) and the viewing conditions; refuse screens
    smaller than required, and a consent to a text edited since the page showed it (its
    ``consent_version``, when sent, is no longer the study's). A rater who withdrew
    stays withdrawn: nothing is recorded (withdrawing is final)."""
    if participation.withdrawn_at is not None:
        return participation
    if not isinstance(data, dict):
        raise ValidationFailed("the consent must be a JSON object")
    if data.get("accept") is not True:
        raise ValidationFailed("consent must be accepted to take part")
    study = participation.study
    version = data.get("consent_version")
    if participation.consent_at is None and version not in (None, study.consent_version):
        # edited since the page showed it: what the rater read is not what would be kept
        raise Conflict(
            "the consent text has changed since this page showed it: please read it again",
            extra={"error": "consent_changed", "consent_version": study.consent_version},
        )
    viewport = (
        _pixels(data, "viewport_width", required=True),
        _pixels(data, "viewport_height", required=True),
    )
    user_agent = str(data.get("user_agent", ""))[:400]
    refuse_nul(user_agent, what="'user_agent'")
    if viewport[0] < study.min_viewport_width or viewport[1] < study.min_viewport_height:
        raise ValidationFailed(
            f"this study needs a browser window of at least {study.min_viewport_width} x "
            f"{study.min_viewport_height} pixels to show its videos at their native size; "
            f"yours is {viewport[0]} x {viewport[1]}",
            extra={"reason": "viewport_too_small"},
        )
    participation.viewing_check = {
        "viewport_width": viewport[0],
        "viewport_height": viewport[1],
        "pixel_ratio": _pixel_ratio(data),
        "screen_width": _pixels(data, "screen_width", required=False),
        "screen_height": _pixels(data, "screen_height", required=False),
        "user_agent": user_agent,
    }
    if participation.consent_at is None:
        participation.consent_at = timezone.now()
        participation.consented_text = study.consent_text
        participation.qualification_order_seed = secrets.randbits(62)
    participation.save(
        update_fields=["viewing_check", "consent_at", "consented_text", "qualification_order_seed"]
    )
    return participation


def participation_tutorial_done(*, participation: Participation) -> Participation:
    """The rater has seen the tutorial: on to the qualification test (or, without one,
    to rating). Nothing changes for a rater who withdrew (withdrawing is final). The
    rater's page comes through ``rater_flow.tutorial_done``, which also waits while no
    session is left for them."""
    if participation.withdrawn_at is not None:
        return participation
    if participation.consent_at is None:
        raise PermissionDenied("consent comes before the tutorial")
    if participation.tutorial_done_at is None:
        participation.tutorial_done_at = timezone.now()
        if participation.qualification_state == Participation.Qualification.NOT_STARTED:
            participation.qualification_attempts = 1
            participation.qualification_state = (
                Participation.Qualification.IN_PROGRESS
                if study_has_test(participation.study)
                else Participation.Qualification.PASSED
            )
        participation.save(
            update_fields=["tutorial_done_at", "qualification_state", "qualification_attempts"]
        )
        if participation.qualification_state == Participation.Qualification.IN_PROGRESS:
            # Qualification videos that make no item (half a pair) are no test either:
            # qualification_items lets the rater through now. Videos still being
            # processed are a test not ready yet: the rater waits, and is never let
            # through without it.
            qualification_items(participation=participation)
    return participation
