"""A tiny running study of each design, and how a rater answers its items (rightly or
wrongly) through the rater API: the journey tests run over every design with these."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from annotation.designs.preference import settings_of
from annotation.models import ExpertScore, ItemMember, Stimulus, Study
from annotation.services.studies import study_build_sessions
from tests.annotation.rater_fixtures import TinyStudy, tiny_study
from tests.factories import StimulusFactory, make_study

CONDITIONS = ("model-a", "model-b", "model-c")


def tiny_preference_study(*, contents: int = 2, **settings) -> TinyStudy:
    """Three conditions on `contents` contents (3 pairs x contents regular items), two
    golden pairs and two qualification pairs (a best and a worst video each)."""
    defaults = dict(
        design="preference",
        session_size=100,
        golden_per_session=2,
        rest_every=0,
        rest_seconds=2,
        qualification_size=2,
        completion_url="https://market.example/done",
        screenout_url="https://market.example/screenout",
        state=Study.State.RUNNING,
        open_to_signed_in=True,
    )
    study = make_study(**{**defaults, **settings})
    for content in range(contents):
        for condition in CONDITIONS:
            StimulusFactory(study=study, condition=condition, content=f"c{content}")
    golden, qualification = [], []
    for role, made in (
        (Stimulus.Role.GOLDEN, golden),
        (Stimulus.Role.QUALIFICATION, qualification),
    ):
        for content in range(2):
            for expected in ("best", "worst"):
                made.append(
                    StimulusFactory(
                        study=study, role=role, content=f"{role}{content}", expected=expected
                    )
                )
    preference = settings_of(study)
    preference.judgments_per_pair = contents
    preference.save()
    study_build_sessions(study=study)
    return TinyStudy(study, golden, qualification)


def tiny_of(design: str, **settings) -> TinyStudy:
    return tiny_study(**settings) if design == "slider" else tiny_preference_study(**settings)


@dataclass(frozen=True)
class Answerer:
    """Answers items of a study's design: `right` agrees with the golden expectation (the
    expert's score, the better video), otherwise the opposite."""

    design: str

    def values(self, item: dict, *, right: bool = True) -> dict:
        if self.design == "slider":
            experts = dict(
                ExpertScore.objects.filter(stimulus__public_id=item["id"]).values_list(
                    "dimension__key", "mean"
                )
            )
            keys = ("subject", "completeness", "interaction")
            score = {k: experts.get(k, 50.0) for k in keys}
            return {"scores": score if right else {k: 100.0 - v for k, v in score.items()}}
        best = (
            ItemMember.objects.filter(item__public_id=item["id"], expected="best")
            .values_list("stimulus__public_id", flat=True)
            .first()
        )
        if best is None:  # a regular pair: any choice
            return {"choice": "left"}
        best_side = "left" if item["left"]["id"] == str(best) else "right"
        other = "right" if best_side == "left" else "left"
        return {"choice": best_side if right else other}

    def answer(self, item: dict, *, right: bool = True, **extra) -> dict:
        return {
            "client_uuid": str(uuid.uuid4()),
            "item": item["id"],
            **self.values(item, right=right),
            "shown_at": "2026-11-22T10:00:00Z",
            "answered_at": "2026-11-22T10:00:05Z",
            "watch_time_ms": 4000,
            "plays": 1,
            "stalls": 0,
            **extra,
        }
