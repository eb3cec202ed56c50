"""Questionnaire labelling (VGA-Bench, PROTOCOL.md 3.2): an item is one video; the rater
answers the study's questions that apply to it (its prompt names them: VGA-Bench 1 to 5
per video), each of its kind (annotation.models.Question): a score, an ordinal level or
"Invalid question", a set of tags, a free comment.

- Items: one per answered video (regular, golden, qualification), named by the video's
  public id. Tutorial videos are the experts' exemplars: answers and why, shown per
  question before the qualification test.
- Values: ``answers``, question key -> a number (score), a level or "invalid"
  (ordinal), a list of tags (tags), a text (comment, optional). Every applicable
  question but a comment must be answered; no other question may be.
- Golden gate and qualification: the share of answers (video x question) that agree
  with the experts' (quality.stats.labels.exemplars: a score within the tolerance, a
  level equal or adjacent, a tag set of Jaccard index at least the threshold).
- Overlap: each batch (session) is taken by ``raters_per_video`` raters whose batch
  still counts (annotation.counting: not rejected in its audit, annotation.services.audits,
  nor excluded, nor of a rater excluded from the study, nor failed its golden gate).
"""

from __future__ import annotations

from dataclasses import dataclass

from annotation.designs.base import Design
from annotation.designs.questionnaire_answers import CHECKS
from annotation.designs.questionnaire_gates import (
    gate_rule,
    golden_gate,
    qualification_score,
    tolerances_of,
)
from annotation.designs.questionnaire_manifest import check_manifest_extra, store_manifest_extra
from annotation.designs.questionnaire_study import (
    applicable,
    option_values,
    questions_of,
    settings_of,
)
from annotation.designs.slider import build_items, layout
from annotation.designs.tutorial_examples import READY, examples_lacking
from annotation.errors import ValidationFailed
from annotation.media_urls import media_entry, media_urls
from annotation.models import Item, LabelAnswer, LabelTag, Question, Stimulus
from quality.stats.labels.exemplars import INVALID, agreeing


def question_payload(question: Question) -> dict:
    """A question as the rater's page shows it."""
    dimension = question.dimension
    entry = {
        "key": dimension.key,
        "label": dimension.label,
        "text": dimension.help_text,
        "kind": question.kind,
        "group": question.group,
    }
    if question.kind == Question.Kind.SCORE:
        entry.update(min=question.scale_min, max=question.scale_max, step=question.scale_step)
    if question.kind in (Question.Kind.ORDINAL, Question.Kind.TAGS):
        entry["options"] = question.options
    if question.kind == Question.Kind.TAGS:
        entry["multiple"] = question.multiple
    if question.kind == Question.Kind.ORDINAL:
        entry["invalid_option"] = question.invalid_option
    return entry


@dataclass(frozen=True)
class Labels:
    """The answers, question key -> value, in their canonical form."""

    answers: dict[str, object]

    def canonical(self) -> dict:
        return {"answers": self.answers}


def item_payload(*, item: Item, layout: list[Stimulus]) -> dict:
    """The video, its prompt and the keys of the questions that apply to it (the
    questions themselves are in the study's state)."""
    video = layout[0]
    media = media_entry(video)
    keys = [q.dimension.key for q in applicable(video, questions_of(item.study_id))]
    return {**media, "prompt": video.prompt, "media": [media], "questions": keys}


def check_values(*, data: dict, item: Item | None, study) -> Labels:
    raw = data.get("answers")
    if not isinstance(raw, dict):
        raise ValidationFailed("'answers' must map each question's key to its answer")
    questions = questions_of(study.pk)
    by_key = {q.dimension.key: q for q in questions}
    unknown = sorted(set(raw) - set(by_key))
    if unknown:
        raise ValidationFailed(f"this study has no question {unknown[0]!r}")
    if item is None:  # refused anyway; the values are checked as far as they go
        return Labels({key: CHECKS[by_key[key].kind](by_key[key], raw[key]) for key in raw})
    asked = applicable(item.members.all()[0].stimulus, questions)
    not_asked = sorted(set(raw) - {q.dimension.key for q in asked})
    if not_asked:
        raise ValidationFailed(f"question {not_asked[0]!r} does not apply to this video")
    answers = {}
    for question in asked:
        key = question.dimension.key
        if key not in raw:
            if question.kind == Question.Kind.COMMENT:
                continue
            raise ValidationFailed(f"question {key!r} is not answered")
        answers[key] = CHECKS[question.kind](question, raw[key])
    return Labels(answers)


def store_values(*, answer, item: Item, layout: list[Stimulus], values: Labels) -> None:
    by_key = {q.dimension.key: q for q in questions_of(item.study_id)}
    rows, tags = [], []
    for key, value in values.answers.items():
        question = by_key[key]
        row = LabelAnswer(answer=answer, dimension_id=question.dimension_id, stimulus=layout[0])
        if question.kind == Question.Kind.TAGS:
            tags += [(row, tag) for tag in value]
        elif question.kind == Question.Kind.COMMENT:
            row.text = value
        elif value == INVALID:
            row.invalid = True
        else:
            row.number = float(value)
        rows.append(row)
    LabelAnswer.objects.bulk_create(rows)  # sets the rows' ids (PostgreSQL, SQLite)
    LabelTag.objects.bulk_create(LabelTag(label=row, tag=tag) for row, tag in tags)


def state_payload(*, study) -> dict:
    return {"questions": [question_payload(q) for q in questions_of(study.pk)]}


def _agreeing(question: Question, value, tolerances) -> dict | None:
    """The answers the test would count as agreeing with the experts' ``value``
    (quality.stats.labels.exemplars.agreeing); None for a comment."""
    if question.kind == Question.Kind.COMMENT:
        return None
    ordinal = question.kind == Question.Kind.ORDINAL
    return agreeing(
        kind=question.kind,
        expert=value,
        levels=[float(v) for v in option_values(question)] if ordinal else (),
        tolerances=tolerances,
    )


def tutorial_payload(*, study) -> dict:
    """The exemplars: per tutorial video, its prompt and the experts' answers with why,
    and which answers the qualification test would count as agreeing with them (the
    rater tries each before it is told); the page shows them question by question
    before the qualification test."""
    questions = {q.dimension_id: q for q in questions_of(study.pk)}
    tolerances = tolerances_of(study)
    videos = (
        Stimulus.objects.filter(study=study, role=Stimulus.Role.TUTORIAL, status=READY)
        .prefetch_related("expert_labels")
        .order_by("pk")
    )
    exemplars = []
    for video in videos:
        answers = [
            {
                "question": questions[e.dimension_id].dimension.key,
                "value": e.value,
                "note": e.note,
                "agrees": _agreeing(questions[e.dimension_id], e.value, tolerances),
            }
            for e in sorted(
                video.expert_labels.all(), key=lambda e: questions[e.dimension_id].dimension.order
            )
            if e.dimension_id in questions
        ]
        if answers:
            exemplars.append({"prompt": video.prompt, **media_urls(video), "answers": answers})
    return {"pairs": [], "exemplars": exemplars}


def readiness(*, study) -> list[tuple[str, str]]:
    """No exemplars; golden or qualification videos without any experts' answer (after a
    question set replaced the one they were answered in, say): the gate and the test
    compare nothing on them."""
    unanswered = Stimulus.objects.filter(
        study=study,
        role__in=(Stimulus.Role.GOLDEN, Stimulus.Role.QUALIFICATION),
        expert_labels__isnull=True,
    ).count()
    lacking = []
    if unanswered:
        lacking.append(
            (
                "unanswered_reference",
                f"{unanswered} golden or qualification video(s) have no experts' answer: the "
                "golden gate and the qualification test compare nothing on them (admin: "
                "Expert labels, or the manifest's <question>_expert columns)",
            )
        )
    return lacking + examples_lacking(
        study=study,
        text="no exemplars: raters see no expert-answered example before the test "
        "(manifest rows of role tutorial)",
    )


def raters_per_session(*, study, session=None) -> int:
    return settings_of(study).raters_per_video


QUESTIONNAIRE = Design(
    key="questionnaire",
    label="Questionnaire labelling with expert audits (VGA-Bench)",
    build_items=build_items,
    layout=layout,
    item_payload=item_payload,
    check_values=check_values,
    store_values=store_values,
    golden_gate=golden_gate,
    qualification_score=qualification_score,
    gate_rule=gate_rule,
    state_payload=state_payload,
    widget="frontend/widgets/questionnaire.js",
    values_noun="answers",
    golden_label="Golden agreement",
    raters_per_session=raters_per_session,
    audited=True,
    tutorial_payload=tutorial_payload,
    readiness=readiness,
    manifest_columns=("questions", "note"),
    check_manifest_extra=check_manifest_extra,
    store_manifest_extra=store_manifest_extra,
)
