"""Studies with ratings written straight into the tables (the rater flow is tested
elsewhere), for the tests of analysis runs and exports."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from django.utils import timezone

from annotation.models import Assignment, Rater, Rating, Session, Stimulus
from tests.factories import UserFactory


def finished_session(
    *,
    rater: Rater | None,
    session: Session,
    videos: list[Stimulus],
    score: Callable[[int, int], float],
    golden_agreement_plcc: float | None = None,
    eligible_for_next: bool | None = True,
) -> Assignment:
    """A finished assignment of `session` in which the rater rated every video on every
    dimension with `score(video index, dimension index)`."""
    rater = rater or Rater.objects.create(user=UserFactory())
    assignment = Assignment.objects.create(
        rater=rater,
        session=session,
        order_seed=0,
        order=[v.pk for v in videos],
        position=len(videos),
        state=Assignment.State.FINISHED,
        finished_at=timezone.now(),
        golden_agreement_plcc=golden_agreement_plcc,
        eligible_for_next=eligible_for_next,
    )
    dimensions = list(session.study.dimensions.order_by("order"))
    rows = []
    for v, video in enumerate(videos):
        client_uuid = uuid.uuid4()
        rows += [
            Rating(
                assignment=assignment,
                stimulus=video,
                dimension=dimension,
                score=score(v, d),
                client_uuid=client_uuid,
            )
            for d, dimension in enumerate(dimensions)
        ]
    Rating.objects.bulk_create(rows)
    return assignment
