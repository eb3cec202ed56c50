"""The crowd's label of every unit (one item's one question) by counting answers.

VGA-Bench (arXiv 2026): experts define the questions, three crowd annotators answer each
video, and the label is what the majority said. Per kind of question:

- score: the mean of the answers and their sample standard deviation (ddof 1; NaN for
  a single answer).
- ordinal: a unit is ``invalid`` when a strict majority of its answers are ``invalid``
  (2 * n_invalid > n: 2 of 3, 3 of 4, not 2 of 4). Otherwise the label is the level
  chosen by the most raters (plurality, the ``invalid`` answers left out as
  abstentions); when that most frequent count is shared by two or more levels (1-2-3,
  or 2-2 of 4) the unit is a ``tie`` for expert adjudication. With three raters and no
  abstention this is "2 of 3 agree".
- tags: a tag is kept when chosen by MORE than ``keep_share`` of the raters who
  answered the unit: count > keep_share * n (strict), so ``keep_share`` 0.5 keeps 2 of
  3 and 1 of 1, never 2 of 4 or 1 of 2. A unit may keep no tag (its label is empty).

Everything is vectorised over units: codes are combined into integer keys, counted with
``np.unique``/``np.bincount`` and reduced over sorted runs, with no Python loop per unit.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from quality.stats.labels.keys import key_counts

OK, INVALID_STATUS, TIE = "ok", "invalid", "tie"
STATUSES = (OK, INVALID_STATUS, TIE)  # status codes index this


def score_means(
    *, unit: np.ndarray, score: np.ndarray, n_units: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean, std, n) per unit; a unit without answers has n 0 and NaN statistics.

    Two passes (means, then squared deviations) rather than power sums, so that large
    scores do not cancel.
    """
    n = np.bincount(unit, minlength=n_units)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(unit, weights=score, minlength=n_units) / n
        squares = np.bincount(unit, weights=(score - mean[unit]) ** 2, minlength=n_units)
        std = np.sqrt(squares / (n - 1))
    std[n < 2] = np.nan
    return mean, std, n


def _run_starts(sorted_codes: np.ndarray) -> np.ndarray:
    return np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])


def ordinal_majority(
    *, unit: np.ndarray, level: np.ndarray, n_units: int, n_levels: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(winning level code or -1, status code into STATUSES, n answers) per unit.

    ``level`` holds a level code per answer, -1 for ``invalid``. Units without answers
    come out ``invalid`` with n 0 (callers pass only units that have answers).
    """
    n = np.bincount(unit, minlength=n_units)
    n_invalid = np.bincount(unit[level < 0], minlength=n_units)
    answered = level >= 0
    counted, count = key_counts(
        unit[answered] * np.int64(n_levels) + level[answered], n_keys=n_units * n_levels
    )
    count_unit, count_level = np.divmod(counted, n_levels)
    top = np.zeros(n_units, dtype=np.int64)
    if counted.size:
        starts = _run_starts(count_unit)
        top[count_unit[starts]] = np.maximum.reduceat(count, starts)
    is_top = count == top[count_unit]
    n_top = np.bincount(count_unit[is_top], minlength=n_units)
    winner = np.full(n_units, -1, dtype=np.int64)
    top_units, first = np.unique(count_unit[is_top], return_index=True)
    winner[top_units] = count_level[is_top][first]
    status = np.where(n_top > 1, STATUSES.index(TIE), STATUSES.index(OK))
    status[2 * n_invalid > n] = STATUSES.index(INVALID_STATUS)
    status[n == 0] = STATUSES.index(INVALID_STATUS)
    winner[status != STATUSES.index(OK)] = -1
    return winner, status, n


def tag_counts(
    *, pair_unit: np.ndarray, pair_tag: np.ndarray, n_units: int, n_tags: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(unit, tag, count) of every (unit, tag) chosen at least once, sorted by unit then
    tag, from the (unit, tag) pairs of the answers (a rater gives a tag once)."""
    key, count = key_counts(pair_unit * np.int64(n_tags) + pair_tag, n_keys=n_units * n_tags)
    unit, tag = np.divmod(key, n_tags)
    return unit, tag, count


def keep_tag(*, count: np.ndarray, n: np.ndarray, keep_share: float) -> np.ndarray:
    """count > keep_share * n: chosen by more than ``keep_share`` of the unit's raters."""
    return count > keep_share * n


def joined_tags(
    *, unit: np.ndarray, tag: np.ndarray, n_units: int, tag_names: pd.Index
) -> np.ndarray:
    """Per unit, its tags (``unit``/``tag`` pairs) joined by ``|`` in name order; ""
    for a unit with none.

    Each unit's tag set is a bit mask (64 tags a word), so only the distinct sets are
    turned into text.
    """
    words = max(1, -(-len(tag_names) // 64))
    mask = np.zeros((n_units, words), dtype=np.uint64)
    np.bitwise_or.at(
        mask, (unit, tag // 64), np.left_shift(np.uint64(1), (tag % 64).astype(np.uint64))
    )
    if words == 1:  # hashing one column beats sorting rows
        inverse, sets = pd.factorize(mask[:, 0])
        sets = sets.reshape(-1, 1)
    else:
        sets, inverse = np.unique(mask, axis=0, return_inverse=True)
    little_endian = sets.astype("<u8").view(np.uint8)
    bits = np.unpackbits(little_endian, axis=1, bitorder="little")[:, : len(tag_names)]
    names = np.asarray(tag_names, dtype=object)
    texts = np.array(["|".join(names[row.astype(bool)]) for row in bits], dtype=object)
    return texts[inverse.ravel()]
