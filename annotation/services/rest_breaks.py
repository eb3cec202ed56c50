"""Rest breaks: when an answer counts as given, and whether it starts a rest break.

Breaks count every answer of the rater in the study, across sessions. Both ways of
storing a session answer time them here: the locked one (annotation.services.
session_answers) and the slider fast path (annotation.services.slider_fast_path).
"""

from __future__ import annotations

from datetime import datetime, timedelta


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


def break_after(answered: int, rules, *, now: datetime) -> datetime | None:
    """When the rest break that the rater's `answered`-th answer in the study (given at
    `now`) starts ends (the study's or a RatingPosition's rest_every / rest_seconds), or
    None when it starts none."""
    if rules.rest_every and answered % rules.rest_every == 0:
        return now + timedelta(seconds=rules.rest_seconds)
    return None
