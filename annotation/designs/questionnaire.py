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
- Overlap: each batch (session) is taken by ``raters_per_video`` raters whose batch was
  not rejected in its audit (annotation.services.audits).
"""

from __future__ import annotations

from dataclasses import dataclass

from annotation.designs.base import (
    Design,
    Gate,
    QualificationScore,
    mean_gate,
    mean_qualification,
    refuse_nul,
)
from annotation.designs.slider import build_items, layout, number_on_scale
from annotation.errors import ValidationFailed
from annotation.media_urls import media_entry, media_urls
from annotation.models import (
    Answer,
    ExpertLabel,
    Item,
    LabelAnswer,
    LabelTag,
    Question,
    QuestionnaireSettings,
    SessionItem,
    Stimulus,
)
from annotation.study_cache import StudyCache
from quality.stats.labels.exemplars import INVALID, Tolerances, answer_agrees

TEXT_LIMIT = 2000


def settings_of(study) -> QuestionnaireSettings:
    found, _ = QuestionnaireSettings.objects.get_or_create(study_id=study.pk)
    return found


def _load_questions(study_id: int) -> list[Question]:
    return list(
        Question.objects.filter(dimension__study_id=study_id)
        .select_related("dimension")
        .order_by("dimension__order")
    )


_CACHE = StudyCache(_load_questions)


def questions_of(study_id: int) -> list[Question]:
    """The study's questions in order (cached in-process for a few seconds, as the
    dimensions are: they do not change while a study runs)."""
    return _CACHE.get(study_id)


def questions_forget(study_id: int) -> None:
    _CACHE.forget(study_id)


def applicable(video: Stimulus, questions: list[Question]) -> list[Question]:
    """The questions a video's prompt is about: those its manifest row listed
    (``asked_questions``), all of them where it listed none."""
    keys = video.asked_questions
    if not keys:
        return list(questions)
    return [question for question in questions if question.dimension.key in keys]


def option_values(question: Question) -> list:
    return [option["value"] for option in question.options]


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


def _score(question: Question, value: object) -> float:
    return number_on_scale(
        value,
        name=f"'{question.dimension.key}'",
        low=question.scale_min,
        high=question.scale_max,
        step=question.scale_step,
    )


def _level(question: Question, value: object) -> object:
    key = question.dimension.key
    if value == INVALID:
        if not question.invalid_option:
            raise ValidationFailed(f"'{key}' has no \"Invalid question\" option")
        return INVALID
    levels = option_values(question)
    if isinstance(value, bool) or value not in levels:
        raise ValidationFailed(
            f"'{key}' must be one of its levels {levels}"
            + (' or "invalid"' if question.invalid_option else "")
        )
    return levels[levels.index(value)]  # the option's own value: 2.0 is stored as 2


def _tags(question: Question, value: object) -> list:
    key = question.dimension.key
    if not isinstance(value, list):
        raise ValidationFailed(f"'{key}' needs a list of tags")
    named = option_values(question)
    unknown = [tag for tag in value if tag not in named]
    if unknown:
        labels = {str(option["label"]).casefold(): option["value"] for option in question.options}
        meant = labels.get(str(unknown[0]).casefold())
        hint = f" (that is the label of {meant!r})" if meant is not None else ""
        raise ValidationFailed(
            f"'{key}' has no tag {unknown[0]!r}{hint}; its tags: {', '.join(map(str, named))}"
        )
    chosen = sorted(set(value), key=named.index)
    if not question.multiple and len(chosen) > 1:
        raise ValidationFailed(f"'{key}' takes one tag")
    return chosen


def _comment(question: Question, value: object) -> str:
    if not isinstance(value, str):
        raise ValidationFailed(f"'{question.dimension.key}' needs a text")
    if len(value) > TEXT_LIMIT:
        raise ValidationFailed(f"'{question.dimension.key}' is longer than {TEXT_LIMIT} characters")
    refuse_nul(value, what=f"'{question.dimension.key}'")
    return value.strip()


CHECKS = {
    Question.Kind.SCORE: _score,
    Question.Kind.ORDINAL: _level,
    Question.Kind.TAGS: _tags,
    Question.Kind.COMMENT: _comment,
}


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


def label_value(row: LabelAnswer, kind: str, options: list | None = None) -> object:
    """A stored answer back in its JSON form (tags in the question's order of
    `options`, prefetch ``tags``)."""
    if kind == Question.Kind.TAGS:
        chosen = {tag.tag for tag in row.tags.all()}
        return [value for value in options or sorted(chosen) if value in chosen]
    if kind == Question.Kind.COMMENT:
        return row.text
    if row.invalid:
        return INVALID
    return row.number


def tolerances_of(study) -> Tolerances:
    chosen = settings_of(study)
    return Tolerances(chosen.score_tolerance, chosen.ordinal_adjacent, chosen.tags_jaccard)


def _agreement_rows(study, answers) -> list[dict]:
    """Per answered question with an expert answer: the rater's and the experts' answer
    and whether they agree (comments are never compared)."""
    questions = {q.dimension_id: q for q in questions_of(study.pk)}
    tolerances = tolerances_of(study)
    answers = answers.select_related("item").prefetch_related("labels__tags")
    expert = {
        (e.stimulus_id, e.dimension_id): e.value
        for e in ExpertLabel.objects.filter(
            stimulus__in=Stimulus.objects.filter(memberships__item__in=answers.values("item"))
        )
    }
    rows = []
    for answer in answers:
        for label in answer.labels.all():
            question = questions.get(label.dimension_id)
            known = expert.get((label.stimulus_id, label.dimension_id))
            if question is None or known is None or question.kind == Question.Kind.COMMENT:
                continue
            given = label_value(label, question.kind, option_values(question))
            ordinal = question.kind == Question.Kind.ORDINAL
            agrees = answer_agrees(
                kind=question.kind,
                answer=given,
                expert=known,
                levels=[float(v) for v in option_values(question)] if ordinal else (),
                tolerances=tolerances,
            )
            rows.append(
                {
                    "item": str(answer.item.public_id),
                    "question": question.dimension.key,
                    "answer": given,
                    "expert": known,
                    "agrees": agrees,
                }
            )
    return rows


def golden_gate(*, study, assignment) -> Gate:
    golden = SessionItem.objects.filter(session_id=assignment.session_id, is_golden=True)
    rows = _agreement_rows(
        study, Answer.objects.filter(assignment=assignment, item__in=golden.values("item_id"))
    )
    return mean_gate(rows, key="agrees", pass_share=settings_of(study).golden_pass_share)


def qualification_score(*, participation, answers) -> QualificationScore:
    study = participation.study
    return mean_qualification(
        _agreement_rows(study, answers.order_by("id")),
        key="agrees",
        pass_share=study.qualification_pass_share,
    )


def gate_rule(*, study) -> str:
    share = settings_of(study).golden_pass_share
    return f"at least {share:.0%} of the golden answers agreeing with the experts'"


def state_payload(*, study) -> dict:
    return {"questions": [question_payload(q) for q in questions_of(study.pk)]}


def tutorial_payload(*, study) -> dict:
    """The exemplars: per tutorial video, its prompt and the experts' answers with why;
    the page shows them question by question before the qualification test."""
    questions = {q.dimension_id: q for q in questions_of(study.pk)}
    videos = (
        Stimulus.objects.filter(study=study, role=Stimulus.Role.TUTORIAL)
        .prefetch_related("expert_labels")
        .order_by("pk")
    )
    exemplars = []
    for video in videos:
        answers = [
            {"question": questions[e.dimension_id].dimension.key, "value": e.value, "note": e.note}
            for e in sorted(
                video.expert_labels.all(), key=lambda e: questions[e.dimension_id].dimension.order
            )
            if e.dimension_id in questions
        ]
        if answers:
            exemplars.append({"prompt": video.prompt, **media_urls(video), "answers": answers})
    return {"pairs": [], "exemplars": exemplars}


def parse_answer_text(question: Question, text: str) -> object:
    """An answer written as the CLI and the manifest write it (a number, a level or
    ``invalid``, tags joined by ``|``, a text), checked like a rater's."""
    kind = question.kind
    if kind == Question.Kind.COMMENT:
        return _comment(question, text)
    if kind == Question.Kind.TAGS:
        return _tags(question, [tag.strip() for tag in text.split("|") if tag.strip()])
    if kind == Question.Kind.ORDINAL and text.strip().lower() == INVALID:
        return _level(question, INVALID)
    try:
        number = float(text)
    except ValueError:
        raise ValidationFailed(f"'{question.dimension.key}' needs a number, got {text!r}") from None
    if kind == Question.Kind.ORDINAL:
        return _level(question, int(number) if number.is_integer() else number)
    return _score(question, number)


def check_manifest_extra(*, study, role: str, extra: dict) -> dict:
    """`questions`: keys of the study's questions joined by "|"; `<key>_expert`: the
    experts' answers, only on exemplar (tutorial), golden and qualification rows, and
    then for every question the video is asked (a comment may be left out)."""
    by_key = {q.dimension.key: q for q in questions_of(study.pk)}
    columns = extra.get("columns", {})
    keys = [key.strip() for key in columns.get("questions", "").split("|") if key.strip()]
    unknown = [key for key in keys if key not in by_key]
    if unknown:
        raise ValueError(f"questions names {unknown[0]!r}, not a question of this study")
    answers = extra.get("answers", {})
    answered_roles = (Stimulus.Role.TUTORIAL, Stimulus.Role.GOLDEN, Stimulus.Role.QUALIFICATION)
    if answers and role not in answered_roles:
        raise ValueError(f"a {role} row takes no experts' answers")
    parsed = {}
    for key, text in answers.items():
        if keys and key not in keys:
            raise ValueError(f"{key}_expert answers a question this video is not asked")
        try:
            parsed[key] = parse_answer_text(by_key[key], text)
        except ValidationFailed as exc:
            raise ValueError(f"{key}_expert: {exc.message}") from None
    if role in answered_roles:
        asked = [q for q in by_key.values() if not keys or q.dimension.key in keys]
        missing = [
            q.dimension.key
            for q in asked
            if q.kind != Question.Kind.COMMENT and q.dimension.key not in parsed
        ]
        if missing:
            raise ValueError(f"a {role} row needs the experts' answer to {missing[0]!r}")
    return {
        "stimulus": {"asked_questions": keys},
        "answers": parsed,
        "note": columns.get("note", ""),
    }


def store_manifest_extra(*, stimulus: Stimulus, extra: dict, dimensions: dict) -> None:
    ExpertLabel.objects.bulk_create(
        ExpertLabel(stimulus=stimulus, dimension=dimensions[key], value=value, note=extra["note"])
        for key, value in extra.get("answers", {}).items()
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
    tutorial_payload=tutorial_payload,
    manifest_columns=("questions", "note"),
    check_manifest_extra=check_manifest_extra,
    store_manifest_extra=store_manifest_extra,
)
