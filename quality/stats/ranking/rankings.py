"""The rankings table of a ranking study, checked once and encoded per question.

Input: one row per ranking, columns ``rater_id, question, prompt_id, ranking``. A ranking
lists condition ids best to worst joined by ``>``; ``=`` joins conditions the rater tied
(``m3>m1=m4>m2``: m3 first, m1 and m4 shared 2nd-3rd place, m2 last). Spaces around an id
are dropped; an id cannot contain ``>`` or ``=``.

Rules, each broken one an error naming its line (the header is line 1; a DataFrame without
a ``line`` column is numbered as if written to CSV with a header, row i on line i + 2):

- the condition set of a (question, prompt) is the set of its FIRST ranking in row order;
  every other ranking of that prompt must list exactly that set, each condition once;
- every prompt of a question ranks the same conditions (so the prompts can be pooled);
- a ranking has 2 to ``MAX_CONDITIONS`` conditions (the exact Kemeny consensus visits all
  2^N subsets);
- a rater ranks a (question, prompt) at most once;
- ``*`` is not a prompt_id (it names the pooled ranking in the outputs).

Raters, prompts and conditions are coded in sorted order and a question's rankings sorted
by (rater, prompt), so the same rankings in another row order give the same codes,
bootstrap draws and results; questions keep their order of first appearance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

COLUMNS = ("rater_id", "question", "prompt_id", "ranking")
LINE_COLUMN = "line"
BETTER = ">"
TIED = "="
MAX_CONDITIONS = 20
POOLED = "*"  # the prompt_id of a question's pooled ranking in the outputs


class RankingsError(ValueError):
    """The rankings (or model scores) cannot be analysed as they are; names the line."""


@dataclass(frozen=True, eq=False)
class QuestionRankings:
    """All rankings of one question as arrays.

    ``level[k, c]`` is the tie group (0 = best) in which ranking k put ``conditions[c]``;
    ranking k is by ``raters[rater[k]]`` on ``prompts[prompt[k]]`` and was read from
    ``line[k]``.
    """

    question: str
    conditions: tuple[str, ...]
    prompts: tuple[str, ...]
    raters: tuple[str, ...]
    rater: np.ndarray
    prompt: np.ndarray
    level: np.ndarray
    line: np.ndarray

    @property
    def n_conditions(self) -> int:
        return len(self.conditions)

    def subset(self, keep: np.ndarray) -> QuestionRankings:
        """The rankings where ``keep`` is True; labels and codes keep their meaning."""
        return QuestionRankings(
            question=self.question,
            conditions=self.conditions,
            prompts=self.prompts,
            raters=self.raters,
            rater=self.rater[keep],
            prompt=self.prompt[keep],
            level=self.level[keep],
            line=self.line[keep],
        )


def parse_ranking(text: str) -> list[list[str]]:
    """``"a>b=c>d"`` -> ``[["a"], ["b", "c"], ["d"]]`` (tie groups, best first).

    Raises RankingsError (without a line number) for an empty id or a repeated condition.
    """
    if not str(text).strip():
        raise RankingsError("the ranking is empty")
    groups = [[part.strip() for part in group.split(TIED)] for group in str(text).split(BETTER)]
    seen: set[str] = set()
    for group in groups:
        for condition in group:
            if not condition:
                raise RankingsError(f"ranking {text!r} has an empty condition id")
            if condition in seen:
                raise RankingsError(f"ranking {text!r} lists condition {condition!r} twice")
            seen.add(condition)
    return groups


def _names(values: set[str]) -> str:
    return ", ".join(repr(v) for v in sorted(values))


def _check_columns(frame: pd.DataFrame) -> None:
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise RankingsError(f"missing column(s): {', '.join(missing)}")
    if len(frame) == 0:
        raise RankingsError("no rankings")


def _lines(frame: pd.DataFrame) -> np.ndarray:
    if LINE_COLUMN in frame.columns:
        return frame[LINE_COLUMN].to_numpy(dtype=np.int64)
    return np.arange(len(frame), dtype=np.int64) + 2


def _text_column(frame: pd.DataFrame, column: str, lines: np.ndarray) -> list[str]:
    values = frame[column].tolist()
    for value, line in zip(values, lines, strict=True):
        if value is None or (isinstance(value, float) and np.isnan(value)) or str(value) == "":
            raise RankingsError(f"line {line}: {column} is empty")
    return [str(v) for v in values]


def encode_rankings(frame: pd.DataFrame) -> list[QuestionRankings]:
    """Check the rankings table (module docstring) and encode it, one entry per question.

    Raises RankingsError naming the first offending line.
    """
    _check_columns(frame)
    lines = _lines(frame)
    raters, questions, prompts, texts = (_text_column(frame, c, lines) for c in COLUMNS)
    if POOLED in prompts:
        line = lines[prompts.index(POOLED)]
        raise RankingsError(f"line {line}: prompt_id {POOLED!r} is reserved for the pooled ranking")
    parsed: list[list[list[str]]] = []
    for k, (text, line) in enumerate(zip(texts, lines, strict=True)):
        try:
            parsed.append(parse_ranking(text))
        except RankingsError as exc:
            where = f"rater {raters[k]!r}, prompt {prompts[k]!r}, question {questions[k]!r}"
            raise RankingsError(f"line {line} ({where}): {exc}") from None
    # The set of each (question, prompt) and of each question, from their first ranking.
    prompt_set: dict[tuple[str, str], tuple[frozenset[str], int]] = {}
    question_set: dict[str, tuple[frozenset[str], int, str]] = {}
    ranked: dict[tuple[str, str, str], int] = {}
    for k, line in enumerate(lines):
        question, prompt, rater = questions[k], prompts[k], raters[k]
        conditions = frozenset(c for group in parsed[k] for c in group)
        key = (question, prompt)
        if key not in prompt_set:
            _check_first_of_prompt(conditions, question, prompt, int(line), question_set)
            prompt_set[key] = (conditions, int(line))
        expected, first_line = prompt_set[key]
        if conditions != expected:
            raise RankingsError(
                f"line {line}: ranking {texts[k]!r} of prompt {prompt!r} on question "
                f"{question!r} must rank the conditions of the prompt's first ranking (line "
                f"{first_line}); {_difference(conditions, expected)}"
            )
        previous = ranked.setdefault((question, prompt, rater), int(line))
        if previous != line:
            raise RankingsError(
                f"line {line}: rater {rater!r} already ranked prompt {prompt!r} on question "
                f"{question!r} (line {previous})"
            )
    return [
        _encode_question(question, question_set[question][0], parsed, raters, prompts, lines, k)
        for question, k in _rows_by_question(questions).items()
    ]


def _check_first_of_prompt(
    conditions: frozenset[str],
    question: str,
    prompt: str,
    line: int,
    question_set: dict[str, tuple[frozenset[str], int, str]],
) -> None:
    if len(conditions) < 2:
        raise RankingsError(f"line {line}: a ranking needs at least 2 conditions")
    if len(conditions) > MAX_CONDITIONS:
        raise RankingsError(
            f"line {line}: {len(conditions)} conditions; at most {MAX_CONDITIONS} can be ranked "
            "(the exact Kemeny consensus visits all 2^N subsets)"
        )
    if question not in question_set:
        question_set[question] = (conditions, line, prompt)
        return
    expected, first_line, first_prompt = question_set[question]
    if conditions != expected:
        raise RankingsError(
            f"line {line}: prompt {prompt!r} of question {question!r} must rank the same "
            f"conditions as prompt {first_prompt!r} (line {first_line}); "
            f"{_difference(conditions, expected)}"
        )


def _difference(conditions: frozenset[str], expected: frozenset[str]) -> str:
    parts = []
    if expected - conditions:
        parts.append(f"misses {_names(expected - conditions)}")
    if conditions - expected:
        parts.append(f"adds {_names(conditions - expected)}")
    return " and ".join(parts)


def _rows_by_question(questions: list[str]) -> dict[str, np.ndarray]:
    codes, labels = pd.factorize(pd.Series(questions, dtype=object), sort=False)
    return {str(label): np.flatnonzero(codes == q) for q, label in enumerate(labels)}


def _encode_question(
    question: str,
    condition_set: frozenset[str],
    parsed: list[list[list[str]]],
    raters: list[str],
    prompts: list[str],
    lines: np.ndarray,
    rows: np.ndarray,
) -> QuestionRankings:
    conditions = tuple(sorted(condition_set))
    index = {c: i for i, c in enumerate(conditions)}
    level = np.empty((rows.size, len(conditions)), dtype=np.int64)
    for k, row in enumerate(rows):
        for g, group in enumerate(parsed[row]):
            for condition in group:
                level[k, index[condition]] = g
    rater_labels, rater = np.unique(np.asarray([raters[r] for r in rows]), return_inverse=True)
    prompt_labels, prompt = np.unique(np.asarray([prompts[r] for r in rows]), return_inverse=True)
    # Rankings sorted by (rater, prompt): every sum then runs in the same order whatever
    # the row order of the input, so results are identical to the last bit.
    order = np.lexsort((prompt.ravel(), rater.ravel()))
    return QuestionRankings(
        question=question,
        conditions=conditions,
        prompts=tuple(str(p) for p in prompt_labels),
        raters=tuple(str(r) for r in rater_labels),
        rater=rater.ravel().astype(np.int64)[order],
        prompt=prompt.ravel().astype(np.int64)[order],
        level=level[order],
        line=lines[rows][order],
    )


def format_ranking(groups: list[list[str]]) -> str:
    """The inverse of ``parse_ranking``."""
    return BETTER.join(TIED.join(group) for group in groups)
