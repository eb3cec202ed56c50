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


# A small questionnaire of every kind (VGA-Bench-shaped): a 0-10 score, an ordinal
# question with "Invalid question", a multi-choice tag group and a free comment.
SMALL_QUESTIONS = {
    "name": "small",
    "source": "MOSaic's tests",
    "questions": [
        {"key": "overall", "label": "Overall Score", "kind": "score", "group": "Aesthetics"},
        {
            "key": "object_text",
            "label": "Object-Text Consistency",
            "kind": "ordinal",
            "invalid_option": True,
            "options": [
                {"value": 1, "label": "Completely inconsistent"},
                {"value": 2, "label": "Partially consistent"},
                {"value": 3, "label": "Fully consistent"},
            ],
        },
        {
            "key": "light",
            "label": "Light Quality",
            "kind": "tags",
            "multiple": True,
            "options": ["Hard Light", "Soft Light", "Diffused Light"],
        },
        {"key": "comment", "label": "Comment", "kind": "comment"},
    ],
}
# The experts' answers to golden, qualification and exemplar videos.
EXPERT_ANSWERS = {"overall": 7, "object_text": 3, "light": ["soft_light"]}
WRONG_ANSWERS = {"overall": 0, "object_text": 1, "light": ["hard_light", "diffused_light"]}


def tiny_questionnaire_study(*, stimuli: int = 4, **settings) -> TinyStudy:
    """`stimuli` regular videos (the last asked only the score and the tags), two golden,
    two qualification and two exemplar videos with the experts' answers; the small
    question set above, one rater per batch unless `raters_per_video` says otherwise."""
    from annotation.designs.questionnaire_study import settings_of as questionnaire_settings
    from annotation.models import ExpertLabel
    from annotation.services.question_sets import question_set_apply, question_set_from

    raters = settings.pop("raters_per_video", 1)
    study = running_study(design="questionnaire", **settings)
    question_set_apply(study=study, question_set=question_set_from(SMALL_QUESTIONS))
    chosen = questionnaire_settings(study)
    chosen.raters_per_video = raters
    chosen.save()
    dimensions = {d.key: d for d in study.dimensions.all()}
    for index in range(stimuli):
        asked = ["overall", "light"] if index == stimuli - 1 else []
        StimulusFactory(study=study, prompt=f"A vase of daisies, {index}", asked_questions=asked)
    made = {}
    for role in (Stimulus.Role.GOLDEN, Stimulus.Role.QUALIFICATION, Stimulus.Role.TUTORIAL):
        made[role] = [StimulusFactory(study=study, role=role) for _ in range(2)]
        for video in made[role]:
            ExpertLabel.objects.bulk_create(
                ExpertLabel(stimulus=video, dimension=dimensions[key], value=value, note="why")
                for key, value in EXPERT_ANSWERS.items()
            )
    study_build_sessions(study=study)
    return TinyStudy(study, made[Stimulus.Role.GOLDEN], made[Stimulus.Role.QUALIFICATION])


# A small vocabulary in AVA's shape: a required pose group, person-object and
# person-person interactions.
SMALL_VOCABULARY = {
    "name": "small",
    "groups": [
        {"key": "pose", "label": "Pose", "limit": 1, "required": True},
        {"key": "object", "label": "Person-object", "limit": 3},
        {"key": "person", "label": "Person-person", "limit": 3},
    ],
    "actions": [
        {"id": 11, "group": "pose", "name": "sit"},
        {"id": 12, "group": "pose", "name": "stand"},
        {"id": 14, "group": "pose", "name": "walk"},
        {"id": 17, "group": "object", "name": "carry/hold (an object)"},
        {"id": 48, "group": "object", "name": "read"},
        {"id": 79, "group": "person", "name": "talk to (e.g., self, a person, a group)"},
        {"id": 80, "group": "person", "name": "watch (a person)"},
    ],
}
EXPERT_ACTIONS = [12, 17]  # golden and qualification segments: stand, carry/hold


def tiny_propose_study(*, stimuli: int = 3, **settings) -> TinyStudy:
    """`stimuli` segments of one video (a person each), two golden and two
    qualification segments with the experts' labels, the small vocabulary above; one
    proposer and one verifier per segment unless `proposers` / `verifiers` say more."""
    from annotation.designs.propose_study import settings_of as propose_settings
    from annotation.models import ExpertLabel
    from annotation.services.vocabularies import vocabulary_apply, vocabulary_from

    proposers = settings.pop("proposers", 1)
    verifiers = settings.pop("verifiers", 1)
    study = running_study(design="propose_verify", **settings)
    vocabulary_apply(study=study, vocabulary=vocabulary_from(SMALL_VOCABULARY))
    chosen = propose_settings(study)
    chosen.proposers_per_item, chosen.verifiers_per_item = proposers, verifiers
    chosen.keep_at_least = max(1, (verifiers + 1) // 2 + (verifiers % 2 == 0))
    chosen.save()
    propose = study.dimensions.get(key="propose")

    def segment(index: int) -> dict:
        return {"video_id": "film", "keyframe": 2.0 + index, "seconds": 3.0,
                "box": [0.1, 0.2, 0.5, 0.9], "person_id": index}  # fmt: skip

    for index in range(stimuli):
        StimulusFactory(study=study, segment=segment(index))
    made = {}
    for role in (Stimulus.Role.GOLDEN, Stimulus.Role.QUALIFICATION):
        made[role] = [StimulusFactory(study=study, role=role, segment=segment(9)) for _ in range(2)]
        for video in made[role]:
            ExpertLabel.objects.create(stimulus=video, dimension=propose, value=EXPERT_ACTIONS)
    study_build_sessions(study=study)
    return TinyStudy(study, made[Stimulus.Role.GOLDEN], made[Stimulus.Role.QUALIFICATION])


def tiny_of(design: str, **settings) -> TinyStudy:
    makers = {
        "slider": tiny_study,
        "preference": tiny_preference_study,
        "ranking": tiny_ranking_study,
        "questionnaire": tiny_questionnaire_study,
        "propose_verify": tiny_propose_study,
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
        if self.design == "propose_verify":
            return self.propose_verify(item, right=right)
        if self.design == "questionnaire":
            chosen = EXPERT_ANSWERS if right else WRONG_ANSWERS
            return {"answers": {key: chosen[key] for key in item["questions"] if key in chosen}}
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
    def propose_verify(item: dict, *, right: bool = True) -> dict:
        """Golden segments: the experts' labels (or a wrong pose), their candidates
        verified as the experts would (or the other way round); others: stand."""
        from annotation.models import ExpertLabel

        video = ItemMember.objects.get(item__public_id=item["id"]).stimulus
        expert = ExpertLabel.objects.filter(stimulus=video).first()
        truth = set(expert.value) if expert else {12}
        if item["stage"] == "propose":
            return {"labels": sorted(truth) if right else [11]}
        return {"verdicts": {str(c["id"]): (c["id"] in truth) == right for c in item["candidates"]}}

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
