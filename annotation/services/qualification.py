"""The qualification test: items in a per-rater seeded order, answers, server-side scoring."""

from __future__ import annotations

import logging
import random

from django.db import transaction

from annotation.errors import Conflict, NotFound, PermissionDenied
from annotation.models import Dimension, ExpertScore, Participation, QualificationAnswer, Stimulus
from annotation.services.answers import Answer, check_unused, ratings_under
from quality.stats.agreement import qualification_passed, qualification_share, within_tolerance

logger = logging.getLogger(__name__)


def qualification_items(*, participation: Participation) -> list[int]:
    """Stimulus ids of this attempt, in the rater's order (seeded, reproducible).

    Drawn once per attempt, when enough qualification videos are ready, and kept
    (`Participation.qualification_set`): videos added or made ready during the attempt do
    not change it, so an answer to a video the rater was shown is never refused as not
    part of the test. Empty (the test is not ready yet) while fewer videos are ready than
    the test takes of those the study has (processing ones included, failed ones not)."""
    attempt = participation.qualification_attempts
    frozen = participation.qualification_set or {}
    if frozen.get("attempt") == attempt and frozen.get("items"):
        return list(frozen["items"])
    study = participation.study
    videos = Stimulus.objects.filter(study=study, role=Stimulus.Role.QUALIFICATION)
    pool = list(
        videos.filter(status=Stimulus.Status.READY).order_by("pk").values_list("pk", flat=True)
    )
    wanted = min(study.qualification_size, videos.exclude(status=Stimulus.Status.FAILED).count())
    if wanted == 0 or len(pool) < wanted:
        return []
    rng = random.Random(f"{participation.qualification_order_seed}:{attempt}")
    chosen = rng.sample(pool, k=wanted)
    participation.qualification_set = {"attempt": attempt, "items": chosen}
    Participation.objects.filter(pk=participation.pk).update(
        qualification_set=participation.qualification_set
    )
    return chosen


def qualification_answered(*, participation: Participation) -> set[int]:
    return set(
        QualificationAnswer.objects.filter(
            participation=participation, attempt=participation.qualification_attempts
        ).values_list("stimulus_id", flat=True)
    )


def _score_attempt(participation: Participation, dimensions: list[Dimension]) -> None:
    """GAIA's rule: pass when at least pass_share of all answers (items x dimensions) lie
    within tolerance_sigma expert standard deviations of the expert mean."""
    study = participation.study
    answers = list(
        QualificationAnswer.objects.filter(
            participation=participation, attempt=participation.qualification_attempts
        ).select_related("stimulus", "dimension")
    )
    experts = {
        (e.stimulus_id, e.dimension_id): e
        for e in ExpertScore.objects.filter(stimulus_id__in={a.stimulus_id for a in answers})
    }
    detail, scores, means, sigmas = [], [], [], []
    for answer in sorted(answers, key=lambda a: (a.stimulus_id, a.dimension.order)):
        expert = experts[(answer.stimulus_id, answer.dimension_id)]
        scores.append(answer.score)
        means.append(expert.mean)
        sigmas.append(expert.sigma)
        detail.append(
            {
                "stimulus": answer.stimulus_id,
                "dimension": answer.dimension.key,
                "score": answer.score,
                "expert_mean": expert.mean,
                "expert_sigma": expert.sigma,
            }
        )
    within = within_tolerance(
        rater_scores=scores,
        expert_means=means,
        expert_sigmas=sigmas,
        tolerance_sigma=study.qualification_tolerance_sigma,
    )
    for row, inside in zip(detail, within, strict=True):
        row["within"] = bool(inside)
    share = qualification_share(within)  # of the same flags: it cannot disagree with them
    participation.qualification_share = share
    participation.qualification_detail = detail
    if qualification_passed(share, study.qualification_pass_share):
        participation.qualification_state = Participation.Qualification.PASSED
    elif participation.qualification_attempts <= study.qualification_retries:
        participation.qualification_attempts += 1  # a new attempt, new order
    else:
        participation.qualification_state = Participation.Qualification.FAILED
    participation.save(
        update_fields=[
            "qualification_share",
            "qualification_detail",
            "qualification_state",
            "qualification_attempts",
        ]
    )
    logger.info(
        "qualification of %s: share %.3f -> %s",
        participation,
        share,
        participation.qualification_state,
    )


def qualification_answer_submit(
    *, participation: Participation, answer: Answer, dimensions: list[Dimension]
) -> bool:
    """Store one qualification answer; True when stored now, False for a harmless repeat."""
    with transaction.atomic():
        participation = (
            Participation.objects.select_for_update()
            .select_related("study")
            .get(pk=participation.pk)
        )
        if QualificationAnswer.objects.filter(client_uuid=answer.client_uuid).exists():
            return False  # a concurrent delivery of the same answer won the lock
        if participation.qualification_state != Participation.Qualification.IN_PROGRESS:
            raise PermissionDenied("the qualification test is not open for you")
        items = qualification_items(participation=participation)
        stimulus = Stimulus.objects.filter(public_id=answer.item, pk__in=items).first()
        if stimulus is None:
            raise NotFound("this video is not part of your qualification test")
        answered = qualification_answered(participation=participation)
        if stimulus.pk in answered:
            raise Conflict("this video was already answered")
        # A rating's id (no constraint spans the two tables), looked up as rating_submit
        # looks up a qualification answer's: only once the answer would be stored.
        check_unused(ratings_under(answer.client_uuid), answer, participation)
        QualificationAnswer.objects.bulk_create(
            QualificationAnswer(
                participation=participation,
                attempt=participation.qualification_attempts,
                stimulus=stimulus,
                **answer.row_fields(dimension),
            )
            for dimension in dimensions
        )
        if len(answered) + 1 >= len(items):
            _score_attempt(participation, dimensions)
    return True
