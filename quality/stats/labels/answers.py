"""Questionnaire answers (VGA-Bench style), checked once and encoded to integer codes.

Input: a DataFrame with columns ``rater_id, item_id, question, kind, answer`` (one row
per answer; an optional ``line`` column names each row's line in its CSV, see
``labels.table``). ``kind`` is one of

- ``score``: the answer is a finite number;
- ``ordinal``: the answer is a level (a finite number: the option's value, whose order
  is the levels' order) or the word ``invalid`` (any case: the rater's "Invalid
  question", an abstention; it is never encoded as a number);
- ``tags``: the answer is a set of tags joined by ``|`` (the empty text: no tag); space
  around a tag is ignored, a tag given twice in one answer counts once, and an empty
  tag (``a||b``, ``a|``) is an error.

A question has one kind throughout, and a rater answers a question once per item.
Every statistic of ``quality.stats.labels`` then works on the parallel arrays of an
:class:`AnswerTable`. Items and raters are coded in sorted order (the same answers in
another row order give the same codes and results); questions in order of first
appearance (the questionnaire's order).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from quality.stats.labels.keys import key_codes
from quality.stats.labels.table import (
    LabelsError,
    check_columns,
    check_not_empty,
    line_numbers,
    text_column,
)
from quality.stats.ratings import LARGEST_SCORE
from quality.stats.repeats import first_repeat

ANSWER_COLUMNS = ("rater_id", "item_id", "question", "kind", "answer")
KINDS = ("score", "ordinal", "tags")
SCORE, ORDINAL, TAGS = range(3)  # codes of KINDS
INVALID = "invalid"
TAG_SEPARATOR = "|"


@dataclass(frozen=True, eq=False)
class AnswerTable:
    """Answers as parallel arrays (one entry per answer) of codes into the label indexes.

    ``raters[rater[i]]`` answered ``questions[question[i]]`` (kind
    ``KINDS[question_kind[question[i]]]``) for ``items[item[i]]``:

    - ``number[i]``: the score or the level; NaN for an ``invalid`` or a tags answer;
    - ``invalid[i]``: True for an ordinal ``invalid`` answer;
    - the tags answers as (answer row, tag code) pairs ``tag_row``/``tag``, sorted by
      row, tags named by ``tags`` (sorted, so a code's order is the name's order);
    - ``line[i]``: the line error messages name;
    - ``unit[i]``: the answer's unit, one per (item, question) answered, numbered in
      (item, question) order; ``unit_item`` / ``unit_question`` code each unit.
    """

    rater: np.ndarray
    item: np.ndarray
    question: np.ndarray
    number: np.ndarray
    invalid: np.ndarray
    tag_row: np.ndarray
    tag: np.ndarray
    line: np.ndarray
    raters: pd.Index
    items: pd.Index
    questions: pd.Index
    question_kind: np.ndarray
    tags: pd.Index
    unit: np.ndarray
    unit_item: np.ndarray
    unit_question: np.ndarray

    @property
    def n_answers(self) -> int:
        return int(self.rater.size)

    @property
    def kind(self) -> np.ndarray:
        """Kind code of every answer."""
        return self.question_kind[self.question]


def _text(answers: pd.DataFrame, name: str) -> pd.Series:
    """The column as text (``text_column``); a categorical of text without missing
    values (``read_answers_csv``'s) as it is, for ``_codes`` to number by its codes."""
    column = answers[name]
    if (
        isinstance(column.dtype, pd.CategoricalDtype)
        and pd.api.types.infer_dtype(column.cat.categories) in ("string", "empty")
        and not column.hasnans
    ):
        return column
    return text_column(answers, name)


def _codes(column: pd.Series, *, sort: bool) -> tuple[np.ndarray, pd.Index]:
    """Each row's code into the column's distinct values, and those values: sorted, or
    in order of first appearance."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return _category_codes(column, sort=sort)
    codes, uniques = pd.factorize(column, sort=sort)
    return codes.astype(np.int64, copy=False), pd.Index(uniques, dtype=object)


def _category_codes(column: pd.Series, *, sort: bool) -> tuple[np.ndarray, pd.Index]:
    """``_codes`` of a categorical column without missing values, from its codes: only
    the categories used, in order of first appearance, then (when asked) sorted by
    value, as ``pd.factorize`` of the text would number them."""
    codes = column.cat.codes.to_numpy()
    if _numbered_by_first_appearance(codes, len(column.cat.categories)):
        uniques = column.cat.categories
    else:
        codes, used = pd.factorize(codes, sort=False)
        uniques = column.cat.categories[used]
    if sort:
        order = uniques.argsort()
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        codes, uniques = rank[codes], uniques[order]
    return codes.astype(np.int64, copy=False), pd.Index(uniques, dtype=object)


def _numbered_by_first_appearance(codes: np.ndarray, n_categories: int) -> bool:
    """Whether ``codes`` already number every one of ``n_categories`` categories in order
    of first appearance (code 0 first, each new code one more than the largest before
    it): then they are what ``pd.factorize`` would give, without hashing the rows. A
    dictionary pyarrow builds while reading a file is numbered so (chunks in file order);
    rows left out after reading (blank lines) can break it, and factorize decides."""
    if codes.size == 0:
        return n_categories == 0
    running = np.maximum.accumulate(codes)
    return bool(codes[0] == 0 and running[-1] == n_categories - 1 and (np.diff(running) <= 1).all())


def _question_kinds(
    question: np.ndarray, questions: pd.Index, kind_text: pd.Series, line: np.ndarray
) -> np.ndarray:
    """Kind code per question; raises for an unknown kind or a question of two kinds."""
    kind, kind_names = _codes(kind_text, sort=False)
    known = np.array([name in KINDS for name in kind_names])
    if not known.all():
        row = int(np.argmax(~known[kind]))
        raise LabelsError(
            f"line {line[row]}: kind {kind_text.iloc[row]!r} is not one of {', '.join(KINDS)}"
        )
    kind = np.array([KINDS.index(name) for name in kind_names], dtype=np.int64)[kind]
    # Codes number the questions in order of first appearance, so each question's first
    # row is where the running maximum code grows.
    running = np.maximum.accumulate(question)
    first = np.flatnonzero(np.r_[True, running[1:] > running[:-1]])
    expected = kind[first][question]
    if (kind != expected).any():
        row = int(np.argmax(kind != expected))
        earlier = int(first[question[row]])
        raise LabelsError(
            f"line {line[row]}: question {questions[question[row]]!r} is kind "
            f"{KINDS[kind[row]]!r} here but {KINDS[kind[earlier]]!r} on line {line[earlier]}"
        )
    return kind[first]


def _split_tags(answer: str) -> set[str] | None:
    """The answer's tags; None when one of them is empty."""
    if answer.strip() == "":
        return set()
    tags = [tag.strip() for tag in answer.split(TAG_SEPARATOR)]
    return None if "" in tags else set(tags)


def _tag_pairs(
    answer: np.ndarray, uniques: pd.Index, is_tags: np.ndarray, line: np.ndarray
) -> tuple[np.ndarray, np.ndarray, pd.Index]:
    """(row, tag code) pairs of the tags answers, sorted by row, and the tag names.

    Only the distinct answer texts are split (a questionnaire has few tag combinations).
    """
    rows = np.flatnonzero(is_tags)
    used = np.flatnonzero(np.bincount(answer[rows], minlength=len(uniques)))
    position = np.zeros(len(uniques), dtype=np.int64)
    position[used] = np.arange(used.size)
    inverse = position[answer[rows]]  # index into `used` of every tags answer
    sets = [_split_tags(str(uniques[code])) for code in used.tolist()]
    bad = [code for tag_set, code in zip(sets, used.tolist(), strict=True) if tag_set is None]
    if bad:
        row = int(rows[np.argmax(np.isin(answer[rows], bad))])
        text = uniques[answer[row]]
        raise LabelsError(f"line {line[row]}: tags answer {text!r} has an empty tag")
    names = pd.Index(sorted(set().union(*sets)), dtype=object)
    lookup = {name: code for code, name in enumerate(names)}
    set_codes = [sorted(lookup[name] for name in tag_set) for tag_set in sets]
    sizes = np.array([len(codes) for codes in set_codes], dtype=np.int64)
    flat = np.array([c for codes in set_codes for c in codes], dtype=np.int64)
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    per_row = sizes[inverse]
    tag_row = np.repeat(rows, per_row)
    # Position of each pair inside its answer's set: 0, 1, ... per row.
    offset = np.arange(tag_row.size) - np.repeat(np.cumsum(per_row) - per_row, per_row)
    tag = flat[np.repeat(starts[inverse], per_row) + offset]
    return tag_row, tag, names


def _units(
    item: np.ndarray, question: np.ndarray, rater: np.ndarray, n_questions: int, n_raters: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(unit of every answer, item and question of every unit); None when a rater
    answered a unit twice."""
    n_keys = (int(item.max(initial=0)) + 1) * n_questions
    keys, unit = key_codes(item * np.int64(n_questions) + question, n_keys=n_keys)
    answer_keys = unit * np.int64(n_raters) + rater
    if keys.size * n_raters <= np.iinfo(np.int32).max:
        answer_keys = answer_keys.astype(np.int32)  # sorts in half the time
    in_order = np.sort(answer_keys)  # numpy's vectorised sort beats hashing these keys
    if (in_order[1:] == in_order[:-1]).any():
        return None
    return unit, keys // n_questions, keys % n_questions


def encode_answers(*, answers: pd.DataFrame) -> AnswerTable:
    """Check the answers and encode them (see the module docstring).

    Raises LabelsError naming the first offending line: a missing column, no answers, an
    empty id, an unknown kind, a question of two kinds, a score that is not a finite
    number or is beyond ±LARGEST_SCORE, an ordinal answer that is neither a number nor
    ``invalid``, an empty tag, or a rater answering a question twice for one item.
    """
    check_columns(answers, ANSWER_COLUMNS, what="answers")
    line = line_numbers(answers)
    texts = {name: _text(answers, name) for name in ANSWER_COLUMNS}
    check_not_empty({n: texts[n] for n in ("rater_id", "item_id", "question", "kind")}, line)
    rater, raters = _codes(texts["rater_id"], sort=True)
    item, items = _codes(texts["item_id"], sort=True)
    question, questions = _codes(texts["question"], sort=False)
    question_kind = _question_kinds(question, questions, texts["kind"], line)
    kind = question_kind[question]

    # Parse each distinct answer text once.
    answer, uniques = _codes(texts["answer"], sort=False)
    unique_text = pd.Series(uniques, dtype=object).astype(str)
    unique_number = pd.to_numeric(unique_text, errors="coerce").to_numpy(dtype=np.float64)
    unique_invalid = (unique_text.str.strip().str.lower() == INVALID).to_numpy()
    number = unique_number[answer]
    invalid = unique_invalid[answer] & (kind == ORDINAL)
    bad = (kind == SCORE) & ~np.isfinite(number)
    if bad.any():
        row = int(np.argmax(bad))
        raise LabelsError(
            f"line {line[row]}: score {texts['answer'].iloc[row]!r} is not a finite number"
        )
    huge = (kind == SCORE) & (np.abs(number) > LARGEST_SCORE)
    if huge.any():
        row = int(np.argmax(huge))
        raise LabelsError(
            f"line {line[row]}: score {texts['answer'].iloc[row]!r} is beyond "
            f"±{LARGEST_SCORE:g} (no rating scale is that wide)"
        )
    bad = (kind == ORDINAL) & ~np.isfinite(number) & ~invalid
    if bad.any():
        row = int(np.argmax(bad))
        raise LabelsError(
            f"line {line[row]}: ordinal answer {texts['answer'].iloc[row]!r} is neither a "
            f"number nor {INVALID!r}"
        )
    number[(kind == TAGS) | invalid] = np.nan
    tag_row, tag, tags = _tag_pairs(answer, uniques, kind == TAGS, line)

    units = _units(item, question, rater, len(questions), len(raters))
    if units is None:
        row, earlier = first_repeat([question, item, rater])
        raise LabelsError(
            f"line {line[row]}: rater {raters[rater[row]]!r} answered question "
            f"{questions[question[row]]!r} for item {items[item[row]]!r} again "
            f"(first on line {line[earlier]})"
        )
    unit, unit_item, unit_question = units
    return AnswerTable(
        rater=rater,
        item=item,
        question=question,
        number=number,
        invalid=invalid,
        tag_row=tag_row,
        tag=tag,
        line=line,
        raters=raters,
        items=items,
        questions=questions,
        question_kind=question_kind,
        tags=tags,
        unit=unit,
        unit_item=unit_item,
        unit_question=unit_question,
    )
