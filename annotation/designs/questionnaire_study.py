"""A questionnaire study's settings and questions, and which of its questions a video is
asked: what the design's items, answers, gates and manifest rows all read
(annotation/designs/questionnaire.py, questionnaire_answers.py, questionnaire_gates.py,
questionnaire_manifest.py), and the analysis (quality/designs/questionnaire.py)."""

from __future__ import annotations

from annotation.models import Question, QuestionnaireSettings, Stimulus
from annotation.study_cache import StudyCache


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
