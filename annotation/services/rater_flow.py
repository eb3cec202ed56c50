"""The rater's answers, routed to the qualification test or the current session."""

from __future__ import annotations

import logging

from django.db.models import OuterRef

from annotation.designs import design_of
from annotation.designs.base import refuse_nul
from annotation.errors import ApplicationError, NotFound, PermissionDenied, ValidationFailed
from annotation.models import (
    Assignment,
    Item,
    Participation,
    PlaybackReport,
    SessionItem,
    Stimulus,
)
from annotation.selectors import (
    assignment_current,
    assignment_last_finished,
    break_seconds_left,
    qualification_drawn,
    rater_step,
)
from annotation.services.adaptive import adaptive_settings_of
from annotation.services.answers import (
    answer_repeated,
    check_envelope,
    item_by_public_id,
    parse_uuid,
    values_checked_by_design,
)
from annotation.services.participation import participation_tutorial_done
from annotation.services.qualification import (
    qualification_answer_submit,
    qualification_item_skip,
    qualification_progress,
)
from annotation.services.session_answers import session_answer_submit, session_item_skip
from annotation.services.session_start import adaptive_videos_left, sessions_open_to

logger = logging.getLogger(__name__)

REFUSALS = {
    "consent": "please accept the consent form first",
    "tutorial": "please finish the tutorial first",
    "screened_out": "the qualification test was not passed, so ratings are not accepted",
    "not_eligible": "you cannot take further sessions in this study",
    "withdrawn": "you have withdrawn from this study, so answers are not accepted",
}


def sessions_left(participation: Participation) -> bool:
    """Whether a session the rater has not taken has, or may still have, an item to
    answer: one that is not golden and none of whose videos failed (a session of failed
    videos never starts), and room for them where the design takes a set number of
    raters per session; where the design makes each rater's session, whether it could."""
    study = participation.study
    on_demand = design_of(study).sessions_on_demand(study=study)
    if on_demand is not None:  # active pair choice makes the rater's sessions
        return on_demand.left(participation=participation)
    playable = SessionItem.objects.filter(session=OuterRef("pk"), is_golden=False).exclude(
        item__members__stimulus__status=Stimulus.Status.FAILED
    )
    if not sessions_open_to(participation, playable=playable).exists():
        return False
    # a session is filled from other sessions' open videos under adaptive collection
    return adaptive_settings_of(study=study) is None or adaptive_videos_left(participation)


def tutorial_done(*, participation: Participation) -> Participation:
    """The rater's page says the tutorial is done (``participation_tutorial_done``),
    unless no session is left for them: then nothing changes and the state says
    ``full`` (every place taken since their page loaded): a test would lead nowhere, and
    passing it would end the study with a code for nothing rated."""
    if participation.tutorial_done_at is None and not sessions_left(participation):
        return participation
    return participation_tutorial_done(participation=participation)


_UNKNOWN = object()


def progress_payload(participation: Participation, assignment=_UNKNOWN) -> dict:
    """Where the rater stands; pass the current assignment when it is already at hand."""
    if assignment is _UNKNOWN:
        assignment = assignment_current(participation=participation)
    if assignment is not None and assignment.state == Assignment.State.FINISHED:
        assignment = None
    step = rater_step(participation, assignment)
    if step == "qualification":
        position, length = qualification_progress(participation)
        return {"step": step, "position": position, "length": length, "break_seconds_left": 0}
    if step == "rating" and assignment is None and not sessions_left(participation):
        step = "done"
    elif step in ("consent", "tutorial") and not sessions_left(participation):
        # every session has its raters (or every video settled) before this rater began:
        # told so at once, with no code, rather than after a test that leads nowhere
        step = "full"
    if assignment is None:
        last = assignment_last_finished(participation=participation)
        length = len(last.order) if last is not None else 0
        return {"step": step, "position": length, "length": length, "break_seconds_left": 0}
    return {
        "step": step,
        "position": assignment.position,
        "length": len(assignment.order),
        "break_seconds_left": break_seconds_left(assignment) if step == "break" else 0,
    }


def answer_submit(*, participation: Participation, data: object) -> tuple[bool, dict]:
    """Store an answer exactly once. Returns (stored_now, progress after it).

    A repeat of a known client_uuid with the same values answers like the first
    delivery did; with other values it is a conflict. The envelope is checked first; the
    values (by the study's design) only once the item is known to be the rater's, so an
    item that is not theirs is refused alike whatever the values (its refusal names
    nothing of it), and a malformed answer to their own item is a 400 saying why.
    """
    study = participation.study
    envelope = check_envelope(data)
    item = item_by_public_id(envelope.item, study_id=study.pk)
    values_of = values_checked_by_design(data=data, study=study)
    sent = {"envelope": envelope, "participation": participation, "item": item}
    Q = Participation.Qualification
    if participation.qualification_state == Q.PASSED and not participation.is_excluded:
        try:
            stored_now, assignment = session_answer_submit(**sent, values_of=values_of)
        except ApplicationError:
            # The repeat of the answer that passed the rater is no session answer: it
            # comes here after the pass.
            if answer_repeated(**sent, values_of=values_of):
                return False, progress_payload(participation)
            raise
        return stored_now, progress_payload(participation, assignment)
    if answer_repeated(**sent, values_of=values_of):
        return False, progress_payload(participation)
    step = rater_step(participation, None)
    if step in REFUSALS:
        raise PermissionDenied(REFUSALS[step], extra={"step": step})
    stored_now = qualification_answer_submit(**sent, values_of=values_of)
    participation.refresh_from_db()
    return stored_now, progress_payload(participation)


def _given_to(participation: Participation, item: Item) -> bool:
    """Whether the item is one the rater may report: in their open session (active or
    paused), in their qualification test's current attempt, or skipped by them already
    (the repeat). Any other item of the study, another rater's or a session's they have
    not taken, is answered as one the study does not have, before any other check, so
    that a report tells nothing of which items exist or whose they are."""
    if item.pk in qualification_drawn(participation):
        return True
    if PlaybackReport.objects.filter(participation=participation, item=item).exists():
        return True
    assignment = assignment_current(participation=participation)
    return assignment is not None and item.pk in assignment.order


def playback_problem_report(*, participation: Participation, data: object) -> tuple[bool, dict]:
    """The rater's browser cannot play the video of the item they are at (a damaged
    rendition, a codec the browser lacks): the item is taken out of what they are asked,
    so that they can go on, and recorded (PlaybackReport, with the browser's error) for
    the team. Only the item the rater is at, in the test or the session, and only a few
    a session (skips_allowed). Returns (skipped now, progress after it); a repeat of a
    skip already made answers like the first."""
    if not isinstance(data, dict):
        raise ValidationFailed("the report must be a JSON object")
    item = item_by_public_id(parse_uuid(data, "item"), study_id=participation.study_id)
    if item is None or not _given_to(participation, item):
        if item is not None:  # the answer says nothing of it; the team hears of the probe
            logger.warning(
                "rater %s reported %s, which is not theirs to skip", participation.rater_id, item
            )
        raise NotFound("no such item in this study")
    detail = data.get("detail", "")
    if not isinstance(detail, str):
        raise ValidationFailed("'detail' must be text")
    refuse_nul(detail, what="'detail'")
    detail = detail[:300]
    Q = Participation.Qualification
    if participation.qualification_state == Q.PASSED and not participation.is_excluded:
        skipped = session_item_skip(participation=participation, item=item, detail=detail)
        return skipped, progress_payload(participation)
    step = rater_step(participation, None)
    if step in REFUSALS:
        raise PermissionDenied(REFUSALS[step], extra={"step": step})
    skipped = qualification_item_skip(participation=participation, item=item, detail=detail)
    participation.refresh_from_db()
    return skipped, progress_payload(participation)
