"""Studies with ratings written straight into the tables (the rater flow is tested
elsewhere), for the tests of analysis runs and exports."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import timedelta

from django.utils import timezone

from annotation.designs import values_digest
from annotation.models import (
    Answer,
    Assignment,
    Item,
    Participation,
    Rater,
    Rating,
    Session,
    Stimulus,
)
from annotation.models.session import pseudonym_for
from quality.services import analysis_run_execute, analysis_run_request
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
    participation, _ = Participation.objects.get_or_create(rater=rater, study=session.study)
    found = Item.objects.filter(members__stimulus__in=videos).prefetch_related("members")
    items = {item.members.all()[0].stimulus_id: item for item in found}
    assignment = Assignment.objects.create(
        rater=rater,
        session=session,
        order_seed=0,
        order=[items[v.pk].pk for v in videos],
        position=len(videos),
        state=Assignment.State.FINISHED,
        finished_at=timezone.now(),
        golden_agreement=golden_agreement_plcc,
        eligible_for_next=eligible_for_next,
    )
    dimensions = list(session.study.dimensions.order_by("order"))
    rows = []
    for v, video in enumerate(videos):
        scores = {d.key: score(v, i) for i, d in enumerate(dimensions)}
        answer = Answer.objects.create(
            client_uuid=uuid.uuid4(),
            item=items[video.pk],
            participation=participation,
            assignment=assignment,
            layout=[str(video.public_id)],
            values_digest=values_digest({"scores": scores}),
        )
        rows += [
            Rating(answer=answer, stimulus=video, dimension=d, score=scores[d.key])
            for d in dimensions
        ]
    Rating.objects.bulk_create(rows)
    return assignment


def judged_session(
    *,
    rater: Rater | None,
    session: Session,
    choose: Callable[[Stimulus, Stimulus], str],
    left_first: Callable[[int], bool] = lambda i: i % 2 == 0,
    eligible_for_next: bool | None = True,
) -> Assignment:
    """A finished assignment of a preference `session` in which the rater judged every
    regular pair: `choose(left, right)` gives the choice; the sides alternate."""
    from annotation.models import PreferenceJudgment

    rater = rater or Rater.objects.create(user=UserFactory())
    participation, _ = Participation.objects.get_or_create(rater=rater, study=session.study)
    items = list(
        Item.objects.filter(session_items__session=session, role=Item.Role.STIMULUS)
        .prefetch_related("members__stimulus")
        .order_by("pk")
    )
    assignment = Assignment.objects.create(
        rater=rater,
        session=session,
        order_seed=0,
        order=[item.pk for item in items],
        position=len(items),
        state=Assignment.State.FINISHED,
        finished_at=timezone.now(),
        eligible_for_next=eligible_for_next,
    )
    for i, item in enumerate(items):
        left, right = (m.stimulus for m in item.members.all())
        if not left_first(i):
            left, right = right, left
        choice = choose(left, right)
        answer = Answer.objects.create(
            client_uuid=uuid.uuid4(),
            item=item,
            participation=participation,
            assignment=assignment,
            layout=[str(left.public_id), str(right.public_id)],
            values_digest=values_digest({"choice": choice}),
        )
        PreferenceJudgment.objects.create(
            answer=answer, dimension=item.dimension, left=left, right=right, choice=choice
        )
    return assignment


def run_now(study):
    """An analysis run of ``study``, requested and executed here; it must end done."""
    run = analysis_run_request(study=study)
    analysis_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "done", run.error
    return run


def received_later(study) -> tuple[str, int]:
    """The study's last finished batch (session) as if its answers arrived an hour from
    now, after any run started before then: its rater's pseudonym and session index."""
    assignment = (
        Assignment.objects.filter(session__study=study, finished_at__isnull=False)
        .select_related("session")
        .order_by("-pk")
        .first()
    )
    later = timezone.now() + timedelta(hours=1)
    assert Answer.objects.filter(assignment=assignment).update(received_at=later)
    return pseudonym_for(assignment.rater_id), assignment.session.index


def batches_of(run, table, *, rater: str = "rater_id", session: str = "session_id") -> set:
    """The (rater, session) batches in an export of ``run`` (a DataFrame of its raw
    rows), which holds exactly the rows the run read: as many as it counted."""
    assert len(table) == run.ratings_count, (len(table), run.ratings_count)
    return {(str(r), int(s)) for r, s in zip(table[rater], table[session], strict=True)}
