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

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from quality.stats.ratings_csv import (
    EXCLUDED_COLUMN,
    FORMULA_TRIGGERS,
    check_header,
    marked_excluded,
    no_rows_left,
    read_csv_checked,
    row_lines,
)

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


def _text_codes(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(codes, labels) of the column read as text, labels sorted, a missing value as ''.

    Factorised first and turned to text on the distinct values only (a frame from the
    database may hold numbers; 1 and "1" are then the same id).
    """
    codes, uniques = pd.factorize(column, sort=False, use_na_sentinel=True)
    text = [v if isinstance(v, str) else str(v) for v in np.asarray(uniques, dtype=object)]
    if (codes < 0).any():
        text.append("")  # code -1 (missing) indexes this last entry
    text_codes, labels = pd.factorize(np.array(text, dtype=object), sort=True)
    return text_codes[codes].astype(np.int64), np.asarray(labels, dtype=object)


def encode_judgments(
    *, judgments: pd.DataFrame, line_numbers: np.ndarray | None = None
) -> JudgmentTable:
    """Check and encode the judgments; labels are sorted text.

    Raises JudgmentsError for a missing column, an empty id, the same condition on both
    sides, a choice other than left / right / equal, naming the first bad row: its line
    with ``line_numbers`` (the file line of each row, as ``read_judgments_csv`` passes),
    else its row label.
    """
    missing = [c for c in JUDGMENT_COLUMNS if c not in judgments.columns]
    if missing:
        raise JudgmentsError(f"missing column(s): {', '.join(missing)}")
    if len(judgments) == 0:
        raise JudgmentsError("no judgments")
    size = len(judgments)
    coded = {c: _text_codes(judgments[c]) for c in ("rater_id", "question", "content_id", "choice")}
    side_codes, conditions = _text_codes(
        pd.concat([judgments["left"], judgments["right"]], ignore_index=True)
    )
    left, right = side_codes[:size], side_codes[size:]
    coded["left"], coded["right"] = (left, conditions), (right, conditions)

    def text(column: str, row: int) -> str:
        codes, labels = coded[column]
        return labels[codes[row]]

    problems = []
    for column in ID_COLUMNS:
        codes, labels = coded[column]
        if labels.size and labels[0] == "":  # sorted: '' comes first
            problems.append((codes == 0, lambda i, c=column: f"{c} is empty"))
    problems.append(
        (left == right, lambda i: f"left and right are the same condition {text('left', i)!r}")
    )
    choice_codes, choice_labels = coded["choice"]
    valid = np.isin(choice_labels, CHOICES)
    problems.append(
        (
            ~valid[choice_codes],
            lambda i: f"choice {text('choice', i)!r} is not one of {', '.join(CHOICES)}",
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
    code_of = {label: i for i, label in enumerate(choice_labels.tolist())}
    chose_left = choice_codes == code_of.get("left", -1)
    chose_right = choice_codes == code_of.get("right", -1)
    left_is_a = left < right
    a_preferred = (chose_left & left_is_a) | (chose_right & ~left_is_a)
    outcome = np.where(
        a_preferred, A_PREFERRED, np.where(chose_left | chose_right, B_PREFERRED, EQUAL)
    ).astype(np.int8)
    return JudgmentTable(
        rater=coded["rater_id"][0],
        question=coded["question"][0],
        content=coded["content_id"][0],
        condition_a=np.minimum(left, right),
        condition_b=np.maximum(left, right),
        outcome=outcome,
        chose_left=chose_left,
        raters=coded["rater_id"][1],
        questions=coded["question"][1],
        contents=coded["content_id"][1],
        conditions=conditions,
    )


def _unquote(column: pd.Series) -> pd.Series:
    """Undo the single quote MOSaic's CSV exports put before a formula-like text cell."""
    quoted = {
        v: v[1:]
        for v in column.unique()
        if v.startswith("'") and v[1:].startswith(FORMULA_TRIGGERS)
    }
    return column.replace(quoted) if quoted else column


def read_judgments_csv(*, path: str | Path) -> pd.DataFrame:
    """The judgments CSV as a checked DataFrame of text columns (``encode_judgments``).

    Ids stay text (``007`` stays ``007``); a single quote that the exports put before an
    id a spreadsheet would run is removed again; blank lines are skipped. Errors name
    the line as it is in the file (header = line 1, blank lines count; a row whose quoted
    field spans lines by its first line). Rows a raw export marks excluded are left out
    (``marked_excluded``) and counted in ``attrs``.
    """
    data = Path(path).read_bytes()
    frame = read_csv_checked(path, error=JudgmentsError, data=data)
    check_header(path, frame.columns, JUDGMENT_COLUMNS, error=JudgmentsError)
    excluded = marked_excluded(frame)
    frame = frame[list(JUDGMENT_COLUMNS)]
    blank = np.logical_and.reduce([(frame[c] == "").to_numpy() for c in JUDGMENT_COLUMNS])
    skip = blank | excluded
    line_numbers = row_lines(data, len(frame))[~skip]
    frame = frame[~skip].reset_index(drop=True)
    if len(frame) == 0:
        raise JudgmentsError(no_rows_left(path, "judgments", int(excluded.sum())))
    for column in ID_COLUMNS:
        frame[column] = _unquote(frame[column])
    try:
        encode_judgments(judgments=frame, line_numbers=line_numbers)
    except JudgmentsError as exc:
        raise JudgmentsError(f"{path}: {exc}") from None
    frame.attrs[EXCLUDED_COLUMN] = int(excluded.sum())
    return frame
