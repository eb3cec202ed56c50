"""One answer to one questionnaire question, by the question's kind (a score, an ordinal
level or "invalid", tags, a comment): checked as the rater's page sends it (``CHECKS``) or
as the CLI and the manifest write it (``parse_answer_text``), and a stored one read back
(``label_value``)."""

from __future__ import annotations

from annotation.designs.base import refuse_nul
from annotation.designs.questionnaire_study import option_values
from annotation.designs.slider import number_on_scale
from annotation.errors import ValidationFailed
from annotation.models import LabelAnswer, Question
from quality.stats.labels.exemplars import INVALID

TEXT_LIMIT = 2000


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
            + _label_hint(question, value)
        )
    return levels[levels.index(value)]  # the option's own value: 2.0 is stored as 2


def _label_hint(question: Question, value: object) -> str:
    """ " (that is the label of 3)" where ``value`` is an option's label, not its value."""
    labels = {str(option["label"]).casefold(): option["value"] for option in question.options}
    meant = labels.get(str(value).strip().casefold())
    return f" (that is the label of {meant!r})" if meant is not None else ""


def _tags(question: Question, value: object) -> list:
    key = question.dimension.key
    if not isinstance(value, list):
        raise ValidationFailed(f"'{key}' needs a list of tags")
    named = option_values(question)
    unknown = [tag for tag in value if tag not in named]
    if unknown:
        hint = _label_hint(question, unknown[0])
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
        if kind == Question.Kind.ORDINAL:
            return _level(question, text.strip())  # refused, listing the levels
        raise ValidationFailed(f"'{question.dimension.key}' needs a number, got {text!r}") from None
    if kind == Question.Kind.ORDINAL:
        return _level(question, int(number) if number.is_integer() else number)
    return _score(question, number)


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
