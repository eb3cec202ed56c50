"""Questionnaire manifest rows: the questions a video is asked and, on exemplar
(tutorial), golden and qualification rows, the experts' answers and their note; checked
at import (annotation/services/study_import_rows.py), stored as ExpertLabel rows."""

from __future__ import annotations

from annotation.designs.questionnaire_answers import parse_answer_text
from annotation.designs.questionnaire_study import questions_of
from annotation.errors import ValidationFailed
from annotation.models import ExpertLabel, Question, Stimulus


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
