"""The live line-clicker guard: an assignment whose recent slider answers are mostly one
value is flagged for the study's team (the rater is not told the rule).

It runs every LINE_CLICK_EVERY answers, in both ways of storing a session answer: on the
locked assignment (line_click_guard) and after the slider fast path's statement
(line_click_flag).
"""

from __future__ import annotations

import logging
from collections import Counter

from annotation.dimensions import dimensions_of
from annotation.models import Assignment, Rating
from annotation.selectors import RatingPosition

logger = logging.getLogger(__name__)

# The live line-clicker guard looks at the ratings of this many recent answers.
LINE_CLICK_WINDOW = 30
LINE_CLICK_EVERY = 10


def _line_click_share(scores: list[float], step: float) -> float:
    if not scores:
        return 0.0
    counts = Counter(round(score / step) for score in scores)
    return counts.most_common(1)[0][1] / len(scores)


def line_click_due(*, flagged: bool, position: int) -> bool:
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


def line_click_guard(assignment: Assignment, study) -> bool:
    """Flag the assignment when the recent slider answers are mostly one value (the rater
    is not told the rule)."""
    if not line_click_due(flagged=assignment.flagged_line_clicker, position=assignment.position):
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


def line_click_flag(*, position: RatingPosition, dimensions: int) -> None:
    """line_click_guard for the slider fast path, whose assignment row is not in hand:
    the flag is written by an update, on an assignment not flagged yet."""
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
