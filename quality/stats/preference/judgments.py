"""Side-by-side judgments: the long table, checked once and encoded to integer codes.

One row per judgment: ``rater_id, question, content_id, left, right, choice``. ``left`` and
``right`` are the condition ids (generating models) shown on each side for the same
content, ``choice`` is ``left``, ``right`` or ``equal``; other columns are ignored. Ids
are text. A ``question`` (e.g. "video quality") is a scale of its own.

Every statistic of this package works on a :class:`JudgmentTable`, where each judgment is
about the unordered pair (a, b) of its two conditions with a < b in sort order, so that
the left/right placement is kept only where it matters (position bias).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from quality.stats.ratings_csv import FORMULA_TRIGGERS

JUDGMENT_COLUMNS = ("rater_id", "question", "content_id", "left", "right", "choice")
ID_COLUMNS = JUDGMENT_COLUMNS[:5]
CHOICES = ("left", "right", "equal")

# Outcome codes of a judgment about the pair (a, b).
A_PREFERRED, B_PREFERRED, EQUAL = 0, 1, 2


class JudgmentsError(ValueError):
    """Judgments that cannot be analysed: the message names the first bad line (or row)."""


@dataclass(frozen=True, eq=False)
class JudgmentTable:
    """Judgments as parallel arrays of codes into sorted label arrays.

    Judgment i: rater ``raters[rater[i]]`` compared ``conditions[condition_a[i]]`` with
    ``conditions[condition_b[i]]`` (condition_a < condition_b) on content
    ``contents[content[i]]`` for ``questions[question[i]]``; ``outcome`` is A_PREFERRED,
    B_PREFERRED or EQUAL; ``chose_left`` is True where the rater picked the left video
    (False for a right pick and for equal).
    """

    rater: np.ndarray
    question: np.ndarray
    content: np.ndarray
    condition_a: np.ndarray
    condition_b: np.ndarray
    outcome: np.ndarray
    chose_left: np.ndarray
    raters: np.ndarray
    questions: np.ndarray
    contents: np.ndarray
    conditions: np.ndarray

    @property
    def n_judgments(self) -> int:
        return int(self.outcome.size)

    def subset(self, mask: np.ndarray) -> JudgmentTable:
        """Only the judgments where ``mask`` is True; codes keep their meaning."""
        return JudgmentTable(
            rater=self.rater[mask],
            question=self.question[mask],
            content=self.content[mask],
            condition_a=self.condition_a[mask],
            condition_b=self.condition_b[mask],
            outcome=self.outcome[mask],
            chose_left=self.chose_left[mask],
            raters=self.raters,
            questions=self.questions,
            contents=self.contents,
            conditions=self.conditions,
        )


def _as_text(column: pd.Series) -> np.ndarray:
    """The column as an object array of str, with missing values as ''."""
    values = column.to_numpy(dtype=object, na_value="")
    if isinstance(column.dtype, pd.StringDtype):
        return values
    return np.array([v if isinstance(v, str) else str(v) for v in values], dtype=object)


def check_judgments(
    *, judgments: pd.DataFrame, line_numbers: np.ndarray | None = None
) -> pd.DataFrame:
    """The six judgment columns as text, or JudgmentsError naming the first bad row.

    Bad: a missing column, an empty id, the same condition on both sides, a choice other
    than left / right / equal. With ``line_numbers`` (the file line of each row, as
    ``read_judgments_csv`` passes) the message names the line, else the row label.
    """
    missing = [c for c in JUDGMENT_COLUMNS if c not in judgments.columns]
    if missing:
        raise JudgmentsError(f"missing column(s): {', '.join(missing)}")
    if len(judgments) == 0:
        raise JudgmentsError("no judgments")
    text = {c: _as_text(judgments[c]) for c in JUDGMENT_COLUMNS}
    problems: list[tuple[np.ndarray, object]] = []
    for column in ID_COLUMNS:
        problems.append((text[column] == "", lambda i, c=column: f"{c} is empty"))
    problems.append(
        (
            text["left"] == text["right"],
            lambda i: f"left and right are the same condition {text['left'][i]!r}",
        )
    )
    problems.append(
        (
            ~np.isin(text["choice"], CHOICES),
            lambda i: f"choice {text['choice'][i]!r} is not one of {', '.join(CHOICES)}",
        )
    )
    first_bad = [int(np.argmax(bad)) for bad, _ in problems if bad.any()]
    if first_bad:
        row = min(first_bad)
        for bad, describe in problems:
            if bad[row]:
                where = (
                    f"line {int(line_numbers[row])}"
                    if line_numbers is not None
                    else f"row {judgments.index[row]}"
                )
                raise JudgmentsError(f"{where}: {describe(row)}")
    return pd.DataFrame(text, index=judgments.index)


def encode_judgments(*, judgments: pd.DataFrame) -> JudgmentTable:
    """Check ``judgments`` (``check_judgments``) and encode them; labels are sorted."""
    frame = check_judgments(judgments=judgments)
    rater, raters = pd.factorize(frame["rater_id"], sort=True)
    question, questions = pd.factorize(frame["question"], sort=True)
    content, contents = pd.factorize(frame["content_id"], sort=True)
    sides = np.concatenate([frame["left"].to_numpy(), frame["right"].to_numpy()])
    side_code, conditions = pd.factorize(sides, sort=True)
    left, right = np.split(side_code.astype(np.int64), 2)
    choice = frame["choice"].to_numpy()
    chose_left = choice == "left"
    chose_right = choice == "right"
    left_is_a = left < right
    a_preferred = (chose_left & left_is_a) | (chose_right & ~left_is_a)
    outcome = np.where(
        a_preferred, A_PREFERRED, np.where(chose_left | chose_right, B_PREFERRED, EQUAL)
    ).astype(np.int8)
    return JudgmentTable(
        rater=rater.astype(np.int64),
        question=question.astype(np.int64),
        content=content.astype(np.int64),
        condition_a=np.minimum(left, right),
        condition_b=np.maximum(left, right),
        outcome=outcome,
        chose_left=chose_left,
        raters=np.asarray(raters, dtype=object),
        questions=np.asarray(questions, dtype=object),
        contents=np.asarray(contents, dtype=object),
        conditions=np.asarray(conditions, dtype=object),
    )


def _unquote(values: np.ndarray) -> np.ndarray:
    """Undo the single quote MOSaic's CSV exports put before a formula-like text cell."""
    distinct = pd.unique(values)
    quoted = {
        v: v[1:] for v in distinct if v.startswith("'") and v[1:].startswith(FORMULA_TRIGGERS)
    }
    if not quoted:
        return values
    return pd.Series(values).replace(quoted).to_numpy(dtype=object)


def read_judgments_csv(*, path: str | Path) -> pd.DataFrame:
    """The judgments CSV as a checked DataFrame of text columns (``check_judgments``).

    Ids stay text (``007`` stays ``007``); a single quote that the exports put before an
    id a spreadsheet would run is removed again; blank lines are skipped. Errors name
    the line as it is in the file (header = line 1, blank lines count), assuming no
    quoted field spans lines.
    """
    try:
        with warnings.catch_warnings():
            # A first row with more fields than the header only warns: make it an error.
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(
                path,
                dtype=str,
                keep_default_na=False,
                index_col=False,
                skip_blank_lines=False,  # keeps row index + 2 == line number
                encoding="utf-8",
            )
    except pd.errors.EmptyDataError:
        raise JudgmentsError(f"{path}: the file is empty") from None
    except (pd.errors.ParserError, pd.errors.ParserWarning, UnicodeDecodeError) as exc:
        raise JudgmentsError(f"{path}: not a readable CSV ({exc})") from None
    missing = [c for c in JUDGMENT_COLUMNS if c not in frame.columns]
    if missing:
        raise JudgmentsError(f"{path}: missing column(s): {', '.join(missing)}")
    frame = frame[list(JUDGMENT_COLUMNS)]
    blank = np.logical_and.reduce([(frame[c] == "").to_numpy() for c in JUDGMENT_COLUMNS])
    line_numbers = np.flatnonzero(~blank) + 2
    frame = frame[~blank].reset_index(drop=True)
    if len(frame) == 0:
        raise JudgmentsError(f"{path}: no judgments (only a header)")
    try:
        frame = check_judgments(judgments=frame, line_numbers=line_numbers)
    except JudgmentsError as exc:
        raise JudgmentsError(f"{path}: {exc}") from None
    for column in ID_COLUMNS:
        frame[column] = _unquote(frame[column].to_numpy())
    return frame
