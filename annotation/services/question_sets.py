"""Question sets of questionnaire studies as data: read from a YAML or JSON file (the
format is in docs/admins.md, "Questionnaire labelling"), checked whole, and given to a
study whole.

A file holds ``name``, ``source`` (where the questions come from) and ``questions``, a
list of mappings:

- ``key`` (a slug), ``label``, ``text`` (the question as the rater reads it), ``group``;
- ``kind``: ``score`` (with ``scale: {min, max, step}``, default 0-10 in steps of 1),
  ``ordinal`` (``options``: levels in order, each ``{value: number, label, description}``;
  ``invalid_option: true`` offers "Invalid question"), ``tags`` (``options``: tags, each
  ``{value: slug, label}`` or just a label; ``multiple: true`` for multi-choice) or
  ``comment``.

``vga-bench`` names the template MOSaic ships (annotation/data/questionnaires/).
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import yaml
from django.db import transaction
from django.utils.text import slugify

from annotation.designs.questionnaire_answers import CHECKS
from annotation.designs.questionnaire_study import questions_forget, settings_of
from annotation.dimensions import dimensions_forget
from annotation.errors import Conflict, ValidationFailed
from annotation.models import Answer, Dimension, ExpertLabel, Question, Stimulus, Study
from annotation.services.file_values import (
    file_text,
    is_json,
    parse_file,
    read_file_text,
    shipped_or_path,
    shown,
)

logger = logging.getLogger(__name__)

TEMPLATES = Path(__file__).resolve().parent.parent / "data" / "questionnaires"
KEY = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
KINDS = ("score", "ordinal", "tags", "comment")


class QuestionSetError(ValueError):
    """A question set that cannot be used; the message names the question and why."""


_text = partial(file_text, error=QuestionSetError)


@dataclass(frozen=True)
class QuestionSpec:
    key: str
    label: str
    text: str
    group: str
    kind: str
    scale: tuple[float, float, float]
    options: list[dict]
    multiple: bool
    invalid_option: bool


@dataclass(frozen=True)
class QuestionSet:
    name: str
    source: str
    questions: list[QuestionSpec]


def template_path(name: str) -> Path:
    """A shipped template by name, or the path as given (file_values.shipped_or_path)."""
    return shipped_or_path(name, folder=TEMPLATES, error=QuestionSetError)


LARGEST_NUMBER = 1e12  # as the command line's scores: no scale is that wide
MOST_STEPS = 100_000  # a score scale's steps (its slider's positions)
MOST_QUESTIONS = 1000  # a study's questions (VGA-Bench asks 53)


def _number(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise QuestionSetError(f"{where}: {shown(value)} is not a number")
    if isinstance(value, int) and abs(value) > LARGEST_NUMBER:  # hundreds of digits: no float
        raise QuestionSetError(f"{where}: a {len(str(abs(value)))}-digit number is beyond ±1e+12")
    if not math.isfinite(value):  # YAML's .nan and .inf, JSON's NaN and Infinity
        raise QuestionSetError(f"{where}: {value!r} is not a finite number")
    if abs(value) > LARGEST_NUMBER:
        raise QuestionSetError(f"{where}: {value:g} is beyond ±{LARGEST_NUMBER:g}")
    return float(value)


def _flag(raw: dict, name: str, where: str) -> bool:
    value = raw.get(name, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise QuestionSetError(f"{where}: '{name}' must be true or false, not {shown(value)}")
    return value


def _options(raw: object, *, kind: str, where: str) -> list[dict]:
    if not isinstance(raw, list) or not raw:
        raise QuestionSetError(
            f"{where}: 'options' must list its {'levels' if kind == 'ordinal' else 'tags'}"
        )
    options = []
    for entry in raw:
        if isinstance(entry, str):
            entry = {"label": entry}
        if not isinstance(entry, dict):
            raise QuestionSetError(f"{where}: every option needs a label")
        label = _text(entry.get("label"), where=where, name="an option's label")
        if not label:
            raise QuestionSetError(f"{where}: every option needs a label")
        if kind == "ordinal":
            if "value" not in entry:
                raise QuestionSetError(f"{where}: level {label!r} needs a value")
            value = _number(entry["value"], f"{where}, level {label!r}")
            value = int(value) if value.is_integer() else value
        else:
            value = _text(entry.get("value"), where=where, name="an option's value")
            value = value or slugify(label).replace("-", "_")
            if not KEY.fullmatch(value):  # stored per answer, joined by "|" in exports
                raise QuestionSetError(
                    f"{where}: tag {label!r} needs a value that is a slug of at most 40 "
                    f"characters (letters, digits, '_', '-'), not {value!r}"
                )
        if len(label) > 200:
            raise QuestionSetError(
                f"{where}: option {label[:40]!r}... is longer than 200 characters"
            )
        option = {"value": value, "label": label}
        description = _text(entry.get("description"), where=where, name="an option's description")
        if len(description) > 1000:
            raise QuestionSetError(f"{where}: the description of {label!r} is over 1000 characters")
        if description:
            option["description"] = description
        options.append(option)
    values = [option["value"] for option in options]
    if len(set(values)) != len(values):
        raise QuestionSetError(f"{where}: two options share a value")
    if kind == "ordinal" and values != sorted(values):
        raise QuestionSetError(f"{where}: levels must be listed in increasing order")
    return options


def _question(raw: object, index: int) -> QuestionSpec:
    where = f"question {index}"
    if not isinstance(raw, dict):
        raise QuestionSetError(f"{where}: not a mapping")
    key = _text(raw.get("key"), where=where, name="its key")
    if not KEY.fullmatch(key):
        raise QuestionSetError(f"{where}: key {key!r} must be a slug of at most 40 characters")
    where = f"question {key!r}"
    kind = raw.get("kind")
    if kind not in KINDS:
        raise QuestionSetError(f"{where}: kind must be one of {', '.join(KINDS)}")
    for name, kinds in (("scale", ("score",)), ("options", ("ordinal", "tags")),
                        ("multiple", ("tags",)), ("invalid_option", ("ordinal",))):  # fmt: skip
        if raw.get(name) is not None and kind not in kinds:  # before: ignored without a word
            raise QuestionSetError(f"{where}: '{name}' is for {' and '.join(kinds)} questions")
    scale = (0.0, 10.0, 1.0)
    if kind == "score":
        given = raw.get("scale") or {}
        if not isinstance(given, dict):
            raise QuestionSetError(f"{where}: 'scale' must be {{min, max, step}}")
        low = _number(given.get("min", 0), f"{where}, scale min")
        high = _number(given.get("max", 10), f"{where}, scale max")
        step = _number(given.get("step", 1), f"{where}, scale step")
        if not low < high or step <= 0:
            raise QuestionSetError(f"{where}: the scale needs min < max and a positive step")
        if (high - low) / step > MOST_STEPS:  # a step of 5e-324 broke answers and figures
            raise QuestionSetError(
                f"{where}: a step of {step:g} cuts the scale into more than {MOST_STEPS:,} steps"
            )
        scale = (low, high, step)
    options = (
        _options(raw.get("options"), kind=kind, where=where) if kind in ("ordinal", "tags") else []
    )
    label = _text(raw.get("label"), where=where, name="its label") or key
    group = _text(raw.get("group"), where=where, name="its group")
    text = _text(raw.get("text"), where=where, name="its text")
    for name, given, most in (("label", label, 100), ("group", group, 80), ("text", text, 2000)):
        if len(given) > most:
            raise QuestionSetError(f"{where}: its {name} is longer than {most} characters")
    return QuestionSpec(
        key=key,
        label=label,
        text=text,
        group=group,
        kind=kind,
        scale=scale,
        options=options,
        multiple=_flag(raw, "multiple", where) and kind == "tags",
        invalid_option=_flag(raw, "invalid_option", where) and kind == "ordinal",
    )


def read_question_set(path: Path | str) -> QuestionSet:
    """The question set in a YAML (.yaml, .yml) or JSON file, checked whole."""
    path = Path(path)
    text = read_file_text(path, error=QuestionSetError)
    try:
        data = parse_file(text, is_json=is_json(path))
    except (ValueError, yaml.YAMLError) as exc:
        raise QuestionSetError(
            f"{path.name} is not valid {'JSON' if is_json(path) else 'YAML'}: {exc}"
        ) from None
    except RecursionError:  # lists in lists ... (the parsers recurse)
        raise QuestionSetError(f"{path.name}: nested too deeply") from None
    try:
        return question_set_from(data, default_name=path.stem)
    except QuestionSetError as exc:
        raise QuestionSetError(f"{path.name}: {exc}") from None


def question_set_from(data: object, *, default_name: str = "questions") -> QuestionSet:
    """A question set from its data (the file's content, parsed), checked whole."""
    if not isinstance(data, dict) or not isinstance(data.get("questions"), list):
        raise QuestionSetError("needs a 'questions' list")
    if len(data["questions"]) > MOST_QUESTIONS:
        raise QuestionSetError(f"more than {MOST_QUESTIONS} questions")
    questions = [_question(raw, index) for index, raw in enumerate(data["questions"], start=1)]
    if not questions:
        raise QuestionSetError("no questions")
    keys = [q.key for q in questions]
    if len(set(keys)) != len(keys):
        twice = next(key for key in keys if keys.count(key) > 1)
        raise QuestionSetError(f"question {twice!r} is given twice")
    source = _text(data.get("source"), where="", name="its source")
    if len(source) > 300:  # before: cut to 300 without a word
        raise QuestionSetError("its source is longer than 300 characters")
    return QuestionSet(
        name=_text(data.get("name"), where="", name="its name") or default_name,
        source=source,
        questions=questions,
    )


def _check_asked(study: Study, keys: set[str]) -> None:
    """Refuse a set that lacks a question the study's videos ask (the manifest's
    ``questions`` column): those videos would be left with nothing to answer."""
    missing: dict[str, int] = {}
    for asked in Stimulus.objects.filter(study=study).values_list("asked_questions", flat=True):
        for key in set(asked or ()) - keys:
            missing[key] = missing.get(key, 0) + 1
    if missing:
        named = ", ".join(f"{key!r} ({count} video(s))" for key, count in sorted(missing.items()))
        raise Conflict(
            f"the study's videos ask questions this set does not have: {named}; import a set "
            "that has them, or import those videos again asking this set's questions"
        )


@dataclass(frozen=True)
class Applied:
    """What ``question_set_apply`` did: the questions, and the experts' answers it kept
    (to a question of the same key that they still fit) or had to drop."""

    questions: int
    expert_kept: int = 0
    expert_dropped: tuple[str, ...] = ()  # "<video>: <key>: why", for the admin

    def said(self, name: str) -> str:
        said = f"{self.questions} questions from {name}"
        if self.expert_kept:
            said += f"; the experts' {self.expert_kept} answer(s) to the same questions kept"
        if self.expert_dropped:
            shown = "; ".join(self.expert_dropped[:5])
            more = (
                f" and {len(self.expert_dropped) - 5} more" if len(self.expert_dropped) > 5 else ""
            )
            said += (
                f"; {len(self.expert_dropped)} expert answer(s) no longer fit and were removed "
                f"({shown}{more}): give them again (the video's Expert labels)"
            )
        return said


def question_set_apply(*, study: Study, question_set: QuestionSet) -> Applied:
    """Make the set the study's questions (replacing those it has): only before anyone
    answered, as answers name their questions. The experts' answers (exemplars, golden
    and qualification videos) to a question the new set has under the same key are kept
    where they still fit it (a set imported again to mend a typo keeps them all: before,
    every one was removed without a word, and each rater then failed the qualification
    test); those that no longer fit are removed and named."""
    if study.design != "questionnaire":
        raise Conflict(f"only questionnaire studies take a question set ({study.slug} is not one)")
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=study.pk).first()
        if Answer.objects.filter(item__study=study).exists():
            raise Conflict("this study has answers: its questions can no longer change")
        _check_asked(study, {spec.key for spec in question_set.questions})
        experts = list(
            ExpertLabel.objects.filter(dimension__study=study)
            .select_related("stimulus", "dimension")
            .order_by("pk")
        )
        Dimension.objects.filter(study=study).delete()
        questions = {}
        for order, spec in enumerate(question_set.questions):
            dimension = Dimension.objects.create(
                study=study, key=spec.key, label=spec.label, help_text=spec.text, order=order
            )
            low, high, step = spec.scale
            questions[spec.key] = Question.objects.create(
                dimension=dimension,
                kind=spec.kind,
                group=spec.group,
                scale_min=low,
                scale_max=high,
                scale_step=step,
                options=spec.options,
                multiple=spec.multiple,
                invalid_option=spec.invalid_option,
            )
        kept, dropped = _keep_expert_answers(experts, questions)
        chosen = settings_of(study)
        chosen.source = question_set.source
        chosen.save(update_fields=["source"])
    dimensions_forget(study.pk)
    questions_forget(study.pk)
    logger.info(
        "study %s: %d questions from %s; experts' answers kept %d, removed %d %s",
        study.slug,
        len(question_set.questions),
        question_set.name,
        kept,
        len(dropped),
        dropped,
    )
    return Applied(len(question_set.questions), kept, tuple(dropped))


def _keep_expert_answers(
    experts: list[ExpertLabel], questions: dict[str, Question]
) -> tuple[int, list[str]]:
    """The experts' answers made again for the new questions of their key, each checked
    as a rater's answer is (``CHECKS``); returns (kept, why each other one was not)."""
    kept, dropped = [], []
    for label in experts:
        key, video = label.dimension.key, label.stimulus.original_name or label.stimulus.pk
        question = questions.get(key)
        if question is None:
            dropped.append(f"{video}: {key}: the new set has no such question")
            continue
        try:
            value = CHECKS[question.kind](question, label.value)
        except ValidationFailed as exc:
            dropped.append(f"{video}: {key}: {exc.message}")
            continue
        kept.append(
            ExpertLabel(
                stimulus=label.stimulus, dimension=question.dimension, value=value, note=label.note
            )
        )
    ExpertLabel.objects.bulk_create(kept)
    return len(kept), dropped
