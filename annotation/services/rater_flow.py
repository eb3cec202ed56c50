"""The rater's answers, routed to the qualification test or the current session."""

from __future__ import annotations

import logging

from django.db.models import Exists, OuterRef

from annotation.errors import ApplicationError, PermissionDenied
from annotation.models import (
    Assignment,
    Participation,
    Session,
    SessionItem,
    Stimulus,
)
from annotation.selectors import dimensions_of, qualification_next, rater_step
from annotation.services.answers import (
    Answer,
    check_answer,
    check_repeat,
    qualification_answers_under,
)
from annotation.services.assignments import (
    assignment_current,
    assignment_last_finished,
    break_seconds_left,
    rating_submit,
)
from annotation.services.qualification import qualification_answer_submit

logger = logging.getLogger(__name__)

REFUSALS = {
    "consent": "please accept the consent form first",
    "tutorial": "please finish the tutorial first",
    "screened_out": "the qualification test was not passed, so ratings are not accepted",
    "not_eligible": "you cannot take further sessions in this study",
}


def _stored_qualification_answer(answer: Answer, participation: Participation) -> bool:
    rows = qualification_answers_under(answer.client_uuid)
    return check_repeat(rows, answer, participation)


def sessions_left(participation: Participation) -> bool:
    """Whether a session the rater has not taken has, or may still have, a video to rate:
    one that is not golden and did not fail (a session of failed videos never starts)."""
    playable = SessionItem.objects.filter(session=OuterRef("pk"), is_golden=False).exclude(
        stimulus__status=Stimulus.Status.FAILED
    )
    return (
        Session.objects.filter(Exists(playable), study_id=participation.study_id)
        .exclude(assignments__rater_id=participation.rater_id)
        .exists()
    )


_UNKNOWN = object()


def progress_payload(participation: Participation, assignment=_UNKNOWN) -> dict:
    """Where the rater stands; pass the current assignment when it is already at hand."""
    if assignment is _UNKNOWN:
        assignment = assignment_current(participation=participation)
    if assignment is not None and assignment.state == Assignment.State.FINISHED:
        assignment = None
    step = rater_step(participation, assignment)
    if step == "qualification":
        _, _, position, length = qualification_next(participation)
        return {"step": step, "position": position, "length": length, "break_seconds_left": 0}
    if step == "rating" and assignment is None and not sessions_left(participation):
        step = "done"
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

    A repeat of a known client_uuid with the same payload answers like the first
    delivery did; with a different payload it is a conflict.
    """
    dimensions = dimensions_of(participation.study_id)
    answer = check_answer(data=data, study=participation.study, dimensions=dimensions)
    Q = Participation.Qualification
    if participation.qualification_state == Q.PASSED and not participation.is_excluded:
        try:
            stored_now, assignment = rating_submit(
                participation=participation, answer=answer, dimensions=dimensions
            )
        except ApplicationError:
            # The repeat of the answer that passed the rater is no rating: it comes here
            # after the pass. Looked up only now, as the fast path never does.
            if _stored_qualification_answer(answer, participation):
                return False, progress_payload(participation)
            raise
        return stored_now, progress_payload(participation, assignment)
    if _stored_qualification_answer(answer, participation):
        return False, progress_payload(participation)
    step = rater_step(participation, None)
    if step in REFUSALS:
        raise PermissionDenied(REFUSALS[step], extra={"step": step})
    stored_now = qualification_answer_submit(
        participation=participation, answer=answer, dimensions=dimensions
    )
    participation.refresh_from_db()
    return stored_now, progress_payload(participation)
