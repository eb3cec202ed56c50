"""Counting judgments: per-rater pair tensors (the input of every fit and of the
bootstrap), the per-pair table with Wilson intervals.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import ndtri

from quality.stats.preference.judgments import JudgmentTable

PAIR_COLUMNS = (
    "question",
    "condition_a",
    "condition_b",
    "n",
    "wins_a",
    "wins_b",
    "ties",
    "win_rate_a",
    "ci95_low",
    "ci95_high",
)


def wilson_interval(
    *, successes: np.ndarray, trials: np.ndarray, confidence: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of a binomial proportion (Wilson 1927; method 3 of
    Newcombe 1998): with p = successes / n and z the two-sided normal quantile,

        (p + z^2 / 2n +- z sqrt(p (1 - p) / n + z^2 / 4n^2)) / (1 + z^2 / n).

    NaN where n = 0. Bounds are clipped to [0, 1] (they touch 0 or 1 only at p = 0, 1).
    """
    successes = np.asarray(successes, dtype=np.float64)
    n = np.asarray(trials, dtype=np.float64)
    z = float(ndtri(0.5 + confidence / 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = successes / n
        denominator = 1.0 + z * z / n
        centre = (p + z * z / (2 * n)) / denominator
        half = z / denominator * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    low = np.where(n > 0, np.clip(centre - half, 0.0, 1.0), np.nan)
    high = np.where(n > 0, np.clip(centre + half, 0.0, 1.0), np.nan)
    return low, high


@dataclass(frozen=True, eq=False)
class QuestionCounts:
    """One question's judgments counted per rater and per observed pair.

    ``conditions``: the question's condition codes (into ``JudgmentTable.conditions``),
    sorted; pair p compares local conditions ``pair_a[p] < pair_b[p]``. ``per_rater`` is
    (raters, 3 * pairs): for rater r, columns [0, P) count "a preferred", [P, 2P) "b
    preferred", [2P, 3P) "equal" (the outcome codes' order). Rows are the table's raters
    (``PairTensors.raters``), zero where a rater did not answer this question, so one
    bootstrap weight vector over raters serves every question.
    """

    question: int
    conditions: np.ndarray
    pair_a: np.ndarray
    pair_b: np.ndarray
    per_rater: np.ndarray

    @property
    def n_pairs(self) -> int:
        return int(self.pair_a.size)

    @property
    def n_conditions(self) -> int:
        return int(self.conditions.size)

    def totals(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(wins_a, wins_b, ties) per pair over all raters."""
        summed = self.per_rater.sum(axis=0)
        return np.split(summed, 3)


@dataclass(frozen=True, eq=False)
class PairTensors:
    """Per-question counts; ``raters`` are the rater codes of the rows, sorted."""

    raters: np.ndarray
    questions: list[QuestionCounts]


def pair_tensors(*, table: JudgmentTable) -> PairTensors:
    """Count every (rater, question, pair, outcome) of ``table`` in one pass per question."""
    raters, rater_row = np.unique(table.rater, return_inverse=True)
    n_raters = raters.size
    questions = []
    for q in np.unique(table.question):
        rows = np.flatnonzero(table.question == q)
        a, b = table.condition_a[rows], table.condition_b[rows]
        conditions, local = np.unique(np.concatenate([a, b]), return_inverse=True)
        local_a, local_b = np.split(local, 2)
        n_conditions = conditions.size
        pair_keys, pair = np.unique(local_a * n_conditions + local_b, return_inverse=True)
        n_pairs = pair_keys.size
        cell = (rater_row[rows] * 3 + table.outcome[rows]) * n_pairs + pair
        per_rater = np.bincount(cell, minlength=n_raters * 3 * n_pairs).astype(np.float64)
        questions.append(
            QuestionCounts(
                question=int(q),
                conditions=conditions,
                pair_a=pair_keys // n_conditions,
                pair_b=pair_keys % n_conditions,
                per_rater=per_rater.reshape(n_raters, 3 * n_pairs),
            )
        )
    return PairTensors(raters=raters, questions=questions)


def pair_table(
    *, tensors: PairTensors, table: JudgmentTable, confidence: float = 0.95
) -> pd.DataFrame:
    """One row per question and observed pair (a < b): PAIR_COLUMNS plus ``tie_share``.

    win_rate_a = wins_a / (wins_a + wins_b), the share among decisive judgments, with its
    Wilson interval (NaN when no judgment of the pair was decisive); tie_share = ties / n.
    """
    frames = []
    for counts in tensors.questions:
        wins_a, wins_b, ties = counts.totals()
        decisive = wins_a + wins_b
        low, high = wilson_interval(successes=wins_a, trials=decisive, confidence=confidence)
        n = decisive + ties
        with np.errstate(divide="ignore", invalid="ignore"):
            win_rate = np.where(decisive > 0, wins_a / decisive, np.nan)
        frames.append(
            pd.DataFrame(
                {
                    "question": table.questions[counts.question],
                    "condition_a": table.conditions[counts.conditions[counts.pair_a]],
                    "condition_b": table.conditions[counts.conditions[counts.pair_b]],
                    "n": n.astype(np.int64),
                    "wins_a": wins_a.astype(np.int64),
                    "wins_b": wins_b.astype(np.int64),
                    "ties": ties.astype(np.int64),
                    "win_rate_a": win_rate,
                    "ci95_low": low,
                    "ci95_high": high,
                    "tie_share": ties / n,
                }
            )
        )
    if not frames:
        return pd.DataFrame(columns=[*PAIR_COLUMNS, "tie_share"])
    return pd.concat(frames, ignore_index=True)
