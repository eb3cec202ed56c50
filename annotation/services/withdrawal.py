"""A rater withdraws from a study: they stop, and nothing they answered is used.

Participants may leave a study at any time without giving a reason (the usual terms of
a consent form, and the marketplaces' "return"); declining the consent form is the same
decision taken before anything was answered. Withdrawing

- excludes the rater from the study as an admin's exclusion does (``is_excluded``: no
  further item is served or answer accepted, the fast path included), under the rule
  ``rater_withdrew`` (quality.stats.exclusions), which takes every rating of theirs out
  of every published number and marks it in the exports;
- stops their open session (state ``excluded``), which frees its place for another
  rater where the design takes a set number of raters per session;
- keeps what they answered, as every exclusion does: nothing is deleted, so that what
  was collected, and paid, stays on record;
- is final: an admin cannot reopen their sessions (admin_actions.assignment_reopen).

Payments of the sessions they finished stay as they were, for the team to decide as
usual. A repeat of the request (a double click, a retry after a lost answer) answers
like the first.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.utils import timezone

from annotation.errors import ValidationFailed
from annotation.models import Assignment, Participation
from quality.stats.exclusions import WITHDRAWN_REASON

logger = logging.getLogger(__name__)


@transaction.atomic
def participation_withdraw(*, participation: Participation, data: object) -> Participation:
    """Withdraw the rater from the study (see the module docstring); ``data`` must be
    ``{"withdraw": true}``, so that no stray request withdraws anyone."""
    if not isinstance(data, dict) or data.get("withdraw") is not True:
        raise ValidationFailed('withdrawing needs {"withdraw": true}')
    # The participation, then its assignments: admin_actions' lock order.
    participation = (
        Participation.objects.select_for_update(of=("self",))
        .select_related("study")
        .get(pk=participation.pk)
    )
    if participation.withdrawn_at is not None:
        return participation
    now = timezone.now()
    participation.withdrawn_at = now
    if not participation.is_excluded:  # an admin's earlier exclusion keeps its record
        participation.is_excluded = True
        participation.excluded_reason = WITHDRAWN_REASON
        participation.excluded_by = None
        participation.excluded_at = now
    participation.save(
        update_fields=[
            "withdrawn_at",
            "is_excluded",
            "excluded_reason",
            "excluded_by",
            "excluded_at",
        ]
    )
    stopped = Assignment.objects.filter(
        rater_id=participation.rater_id,
        session__study_id=participation.study_id,
        state__in=[Assignment.State.ACTIVE, Assignment.State.PAUSED],
    ).update(
        state=Assignment.State.EXCLUDED,
        admin_note=WITHDRAWN_REASON,
        excluded_by=None,
        excluded_at=now,
    )
    logger.info(
        "rater %s withdrew from study %s (%d open session(s) stopped)",
        participation.rater_id,
        participation.study.slug,
        stopped,
    )
    return participation
