"""Single-stimulus sliders (GAIA, PROTOCOL.md 1): an item is one video; an answer is one
score per dimension on the study's continuous scale, stored as Rating rows.

Golden gate: the PLCC between the session's golden answers (every golden video x every
dimension) and the expert means must exceed ``golden_gate_plcc``. Qualification: GAIA's
rule, at least ``qualification_pass_share`` of the answers within
``qualification_tolerance_sigma`` expert standard deviations of the expert mean.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Protocol

from django.db.models import Exists, OuterRef

from annotation.designs.base import Design, Gate, QualificationScore
from annotation.designs.slider_readiness import readiness
from annotation.dimensions import dimensions_of
from annotation.errors import ValidationFailed
from annotation.media_urls import media_entry
from annotation.models import (
    GAIA_DIMENSIONS,
    Answer,
    Dimension,
    ExpertScore,
    Item,
    ItemMember,
    Rating,
    SessionItem,
    Stimulus,
)
from quality.stats.agreement import (
    golden_agreement_plcc,
    qualification_passed,
    qualification_share,
    within_tolerance,
)

logger = logging.getLogger(__name__)

ANSWERED_ROLES = (Stimulus.Role.STIMULUS, Stimulus.Role.GOLDEN, Stimulus.Role.QUALIFICATION)

# How far from a step a score may lie, as a share of the step: room for the float error of
# a browser's or a client's arithmetic (0.1 + 0.2), none for a value between two steps.
STEP_TOLERANCE = 1e-6


class Scale(Protocol):
    """The slider an answer's scores come from (a Study, or a RatingPosition): its range,
    and its steps, counted from slider_min as the browser's range input counts them."""

    slider_min: float
    slider_max: float
    slider_step: float


@dataclass(frozen=True)
class Scores:
    """One score per dimension key."""

    scores: dict[str, float]

    def canonical(self) -> dict:
        return {"scores": self.scores}


def build_items(*, study) -> int:
    """One item per answered video that has none, named by the video's own public id."""
    missing = list(
        Stimulus.objects.filter(study=study, role__in=ANSWERED_ROLES)
        .exclude(Exists(ItemMember.objects.filter(stimulus=OuterRef("pk"))))
        .order_by("pk")
        .values_list("pk", "public_id", "role")
    )
    items = Item.objects.bulk_create(
        Item(study=study, public_id=public_id, role=role) for _, public_id, role in missing
    )
    ItemMember.objects.bulk_create(
        ItemMember(item=item, stimulus_id=pk, slot=0)
        for item, (pk, _, _) in zip(items, missing, strict=True)
    )
    return len(items)


def layout(*, item: Item, seed: object) -> list[Stimulus]:
    return [member.stimulus for member in item.members.all()]


def stimulus_payload(stimulus) -> dict:
    """A one-video item as the rater's page shows it (from a Stimulus, or from the fast
    path's PositionItem): the video's fields, and the same as its one `media` entry."""
    media = media_entry(stimulus)
    return {**media, "prompt": stimulus.prompt, "action": stimulus.action, "media": [media]}


def item_payload(*, item: Item, layout: list[Stimulus]) -> dict:
    return stimulus_payload(layout[0])


def number_on_scale(
    value: object, *, name: str, low: float, high: float, step: float, steps: str = "scale's"
) -> float:
    """``value`` as a float when it is a finite JSON number in [low, high] on the scale's
    steps from ``low``; else ValidationFailed whose message starts with ``name`` (a
    slider's score, a questionnaire's score question)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValidationFailed(f"{name} is not a number: {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValidationFailed(f"{name} is not a finite number")
    # Compared before any float(): an int of 400 digits is valid JSON but no float.
    if not low <= value <= high:
        shown = f" {value}," if abs(value) < 1e15 else ""
        raise ValidationFailed(f"{name} is{shown} outside the scale [{low:g}, {high:g}]")
    offset = (float(value) - low) / step
    if abs(offset - round(offset)) > STEP_TOLERANCE:
        raise ValidationFailed(
            f"{name} is {value}, not on the {steps} steps: {low:g} to {high:g} in steps of {step:g}"
        )
    return float(value)


def _score(key: str, value: object, scale: Scale) -> float:
    return number_on_scale(
        value,
        name=f"score for '{key}'",
        low=scale.slider_min,
        high=scale.slider_max,
        step=scale.slider_step,
        steps="slider's",
    )


def check_scores(*, data: dict, scale: Scale, dimensions: list[Dimension]) -> Scores:
    """The answer's `scores`: one on-step score on the scale for every dimension."""
    scores_raw = data.get("scores")
    if not isinstance(scores_raw, dict):
        raise ValidationFailed("'scores' must be an object of dimension: score")
    keys = [d.key for d in dimensions]
    unknown = sorted(set(scores_raw) - set(keys))
    if unknown:
        raise ValidationFailed(f"unknown dimension(s): {', '.join(map(str, unknown))}")
    missing = [key for key in keys if key not in scores_raw]
    if missing:
        raise ValidationFailed(f"missing score(s) for: {', '.join(missing)}")
    return Scores({key: _score(key, scores_raw[key], scale) for key in keys})


def check_values(*, data: dict, item: Item | None, study) -> Scores:
    return check_scores(data=data, scale=study, dimensions=dimensions_of(study.pk))


def store_values(*, answer: Answer, item: Item, layout: list[Stimulus], values: Scores) -> None:
    Rating.objects.bulk_create(
        Rating(answer=answer, stimulus=layout[0], dimension=d, score=values.scores[d.key])
        for d in dimensions_of(item.study_id)
    )


def _golden_pairs(ratings) -> tuple[list[float], list[float]]:
    """(rater scores, expert means) of the rating rows that have an expert score."""
    rows = list(ratings.values_list("stimulus_id", "dimension_id", "score"))
    experts = {
        (e.stimulus_id, e.dimension_id): e.mean
        for e in ExpertScore.objects.filter(stimulus_id__in={r[0] for r in rows})
    }
    pairs = [(score, experts[(s, d)]) for s, d, score in rows if (s, d) in experts]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def golden_gate(*, study, assignment) -> Gate:
    """PLCC over every golden answer of the session (all golden videos x all dimensions,
    paired with the expert means) must exceed the study's threshold; without golden
    answers to judge by (no golden videos configured) the gate is open."""
    golden = SessionItem.objects.filter(session_id=assignment.session_id, is_golden=True)
    ratings = Rating.objects.filter(
        answer__assignment=assignment, answer__item__in=golden.values("item_id")
    )
    scores, means = _golden_pairs(ratings)
    if not scores:
        return Gate(None, True)
    plcc = golden_agreement_plcc(rater_scores=scores, expert_means=means)
    return Gate(plcc, plcc is not None and plcc > study.golden_gate_plcc)


def check_manifest_row(*, role: str, labels: dict, expert: dict, dimension_keys) -> None:
    """Golden and qualification videos carry the experts' scores of every dimension (an
    upload's, ``expert`` None, are added afterwards on its admin page)."""
    if expert is not None and role in (Stimulus.Role.GOLDEN, Stimulus.Role.QUALIFICATION):
        missing = [key for key in dimension_keys if key not in expert]
        if missing:
            raise ValueError(f"a {role} row needs expert scores for: {', '.join(missing)}")


def gate_rule(*, study) -> str:
    return f"golden PLCC above {study.golden_gate_plcc:g}"


def qualification_score(*, participation, answers) -> QualificationScore:
    """GAIA's rule: pass when at least pass_share of all answers (items x dimensions) lie
    within tolerance_sigma expert standard deviations of the expert mean. An answer on a
    video the experts have not scored on that dimension (an admin added it without the
    scores) is left out and logged for the team, rather than failing the answer; a test
    with none scored passes, as a session with no golden answers does."""
    study = participation.study
    ratings = list(
        Rating.objects.filter(answer__in=answers)
        .select_related("dimension")
        .order_by("stimulus_id", "dimension__order")
    )
    experts = {
        (e.stimulus_id, e.dimension_id): e
        for e in ExpertScore.objects.filter(stimulus_id__in={r.stimulus_id for r in ratings})
    }
    unscored = {r.stimulus_id for r in ratings if (r.stimulus_id, r.dimension_id) not in experts}
    if unscored:
        logger.warning(
            "qualification of rater %s in %s: videos %s have no expert score on some "
            "dimension; those answers are left out (add the scores in the admin)",
            participation.rater_id,
            study.slug,
            sorted(unscored),
        )
    detail = []
    for rating in ratings:
        expert = experts.get((rating.stimulus_id, rating.dimension_id))
        if expert is None:
            continue
        detail.append(
            {
                "stimulus": rating.stimulus_id,
                "dimension": rating.dimension.key,
                "score": rating.score,
                "expert_mean": expert.mean,
                "expert_sigma": expert.sigma,
            }
        )
    within = within_tolerance(
        rater_scores=[row["score"] for row in detail],
        expert_means=[row["expert_mean"] for row in detail],
        expert_sigmas=[row["expert_sigma"] for row in detail],
        tolerance_sigma=study.qualification_tolerance_sigma,
    )
    for row, inside in zip(detail, within, strict=True):
        row["within"] = bool(inside)
    if not detail:  # nothing to judge by: no share, and passed
        return QualificationScore(None, detail, True)
    share = qualification_share(within)  # of the same flags: it cannot disagree with them
    passed = qualification_passed(share, study.qualification_pass_share)
    return QualificationScore(share, detail, passed)


def state_payload(*, study) -> dict:
    return {
        "dimensions": [
            {
                "key": d.key,
                "label": d.label,
                "help_text": d.help_text,
                "anchor_low": d.anchor_low,
                "anchor_high": d.anchor_high,
            }
            for d in dimensions_of(study.pk)
        ],
        "scale": {"min": study.slider_min, "max": study.slider_max, "step": study.slider_step},
    }


SLIDER = Design(
    key="slider",
    label="Single-stimulus sliders (GAIA)",
    build_items=build_items,
    layout=layout,
    item_payload=item_payload,
    check_values=check_values,
    store_values=store_values,
    golden_gate=golden_gate,
    qualification_score=qualification_score,
    gate_rule=gate_rule,
    state_payload=state_payload,
    widget="frontend/widgets/slider.js",
    fast_path=True,
    check_manifest_row=check_manifest_row,
    readiness=readiness,
    default_dimensions=tuple((*dimension, False) for dimension in GAIA_DIMENSIONS),
)
