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


def running_study(*, design: str, **settings) -> Study:
    """A running study of the design with two golden items a session and a two-item
    qualification test, open to every signed-in rater; `settings` override."""
    defaults = dict(
        design=design,
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
    return make_study(**{**defaults, **settings})


def tiny_preference_study(*, contents: int = 2, **settings) -> TinyStudy:
    """Three conditions on `contents` contents (3 pairs x contents regular items), two
    golden pairs and two qualification pairs (a best and a worst video each)."""
    study = running_study(design="preference", **settings)
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


def tiny_ranking_study(*, contents: int = 2, **settings) -> TinyStudy:
    """Three conditions on `contents` prompts, ranked for VGA-Bench's two criteria (an
    item per prompt and criterion); two golden and two qualification prompts, each with
    a clearly best, a middling and a clearly worst video."""
    study = running_study(design="ranking", **settings)
    for content in range(contents):
        for condition in CONDITIONS:
            StimulusFactory(study=study, condition=condition, content=f"p{content}")
    golden, qualification = [], []
    for role, made in (
        (Stimulus.Role.GOLDEN, golden),
        (Stimulus.Role.QUALIFICATION, qualification),
    ):
        for content in range(2):
            for expected in ("best", "", "worst"):
                made.append(
                    StimulusFactory(
                        study=study, role=role, content=f"{role}{content}", expected=expected
                    )
                )
    study_build_sessions(study=study)
    return TinyStudy(study, golden, qualification)


def tiny_of(design: str, **settings) -> TinyStudy:
    makers = {
        "slider": tiny_study,
        "preference": tiny_preference_study,
        "ranking": tiny_ranking_study,
    }
    return makers[design](**settings)


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
        if self.design == "ranking":
            return self.ranking(item, right=right)
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

    @staticmethod
    def ranking(item: dict, *, right: bool = True) -> dict:
        """The videos best first as a golden item expects them (or the other way round);
        a regular item's in the order shown. Every video played."""
        expected = dict(
            ItemMember.objects.filter(item__public_id=item["id"]).values_list(
                "stimulus__public_id", "expected"
            )
        )
        place = {"best": 0, "": 1, "worst": 2}
        shown = [media["id"] for media in item["media"]]
        order = sorted(shown, key=lambda video: place[expected[uuid.UUID(video)]])
        if not right:
            order.reverse()
        return {"ranking": order, "played": shown}

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
