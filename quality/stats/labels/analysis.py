"""The labels of a questionnaire from its crowd answers, in one call.

``analyse`` is the one entry point of the CLI (``python -m quality labels``) and of the
web service:

1. check and encode the answers (``answers``);
2. one unit per (item, question) answered; per kind, the unit's label (``majority``; for
   ordinal questions optionally ``dawid_skene``);
3. Krippendorff's alpha per question at its level (``agreement``) and each rater's
   agreement with the final labels.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from quality.stats.labels.agreement import (
    alpha_from_counts,
    binary_alphas,
    unit_value_counts,
)
from quality.stats.labels.answers import (
    KINDS,
    ORDINAL,
    SCORE,
    TAGS,
    AnswerTable,
    encode_answers,
)
from quality.stats.labels.dawid_skene import fit_dawid_skene
from quality.stats.labels.majority import (
    INVALID_STATUS,
    OK,
    STATUSES,
    TIE,
    joined_tags,
    keep_tag,
    ordinal_majority,
    score_means,
    tag_counts,
)
from quality.stats.labels.result import (
    METHODS,
    RATER_AGREEMENT_COLUMNS,
    DawidSkeneQuestion,
    LabelResult,
    LabelSettings,
)
from quality.stats.labels.table import LabelsError
from quality.stats.reliability import krippendorff_alpha_interval


def check_settings(settings: LabelSettings) -> None:
    if not 0.0 <= settings.keep_share < 1.0:
        raise LabelsError("keep_share must be in [0, 1)")
    if settings.method not in METHODS:
        raise LabelsError(f"method must be one of {', '.join(METHODS)}")
    if settings.max_iterations < 1:
        raise LabelsError("max_iterations must be at least 1")
    if not settings.tolerance >= 0.0:
        raise LabelsError("tolerance must be at least 0")


class _Units:
    """One unit per (item, question) answered, sorted by item then question."""

    def __init__(self, table: AnswerTable) -> None:
        self.of_answer = table.unit
        self.item, self.question = table.unit_item, table.unit_question
        self.kind = table.question_kind[self.question]
        self.count = self.item.size


def _texts(names, codes: np.ndarray) -> pd.api.extensions.ExtensionArray:
    """The text column ``names[codes]``, taken as a string array (no Python objects)."""
    return pd.array(np.asarray(names, dtype=object), dtype="str").take(codes)


def _level_values(levels: np.ndarray) -> np.ndarray:
    """Levels as the values a table shows: int when whole, else float."""
    return np.array(
        [int(v) if float(v).is_integer() else float(v) for v in levels.tolist()], dtype=object
    )


def _dawid_skene(
    table: AnswerTable,
    units: _Units,
    level: np.ndarray,
    levels: np.ndarray,
    status: np.ndarray,
    winner: np.ndarray,
    settings: LabelSettings,
) -> dict[str, DawidSkeneQuestion]:
    """Decide the ordinal units that are not invalid by Dawid-Skene, per question;
    ``winner`` and ``status`` are updated in place."""
    fits = {}
    for q in np.flatnonzero(table.question_kind == ORDINAL).tolist():
        rows = (table.question == q) & (level >= 0)
        rows &= status[units.of_answer] != STATUSES.index(INVALID_STATUS)
        if not rows.any():
            continue
        unit_codes, item = np.unique(units.of_answer[rows], return_inverse=True)
        rater_codes, rater = np.unique(table.rater[rows], return_inverse=True)
        level_codes, answer = np.unique(level[rows], return_inverse=True)
        fit = fit_dawid_skene(
            item=item,
            rater=rater,
            answer=answer,
            n_items=unit_codes.size,
            n_raters=rater_codes.size,
            n_classes=level_codes.size,
            max_iterations=settings.max_iterations,
            tolerance=settings.tolerance,
        )
        best = np.sort(fit.posteriors, axis=1)
        shared = (best[:, -1] == best[:, -2]) if level_codes.size > 1 else np.zeros(0, bool)
        winner[unit_codes] = level_codes[fit.labels]
        status[unit_codes] = STATUSES.index(OK)
        if shared.any():
            status[unit_codes[shared]] = STATUSES.index(TIE)
            winner[unit_codes[shared]] = -1
        fits[str(table.questions[q])] = DawidSkeneQuestion(
            item_ids=[str(i) for i in table.items[units.item[unit_codes]]],
            rater_ids=[str(r) for r in table.raters[rater_codes]],
            levels=levels[level_codes].tolist(),
            fit=fit,
        )
    return fits


def _rater_agreement(
    table: AnswerTable,
    agreed: np.ndarray,
    decisions: np.ndarray,
) -> pd.DataFrame:
    """Sum the per-answer decisions and agreements per (rater, question)."""
    n_questions = len(table.questions)
    key = table.rater * np.int64(n_questions) + table.question
    size = len(table.raters) * n_questions
    total = np.bincount(key, weights=decisions, minlength=size).astype(np.int64)
    hits = np.bincount(key, weights=agreed, minlength=size).astype(np.int64)
    used = np.flatnonzero(total > 0)
    rater, question = np.divmod(used, n_questions)
    frame = pd.DataFrame(
        {
            "rater_id": np.asarray(table.raters, dtype=object)[rater],
            "question": np.asarray(table.questions, dtype=object)[question],
            "decisions": total[used],
            "agreed": hits[used],
            "share": hits[used] / total[used],
        }
    )
    return frame[list(RATER_AGREEMENT_COLUMNS)]


class _Filled:
    """What ``analyse`` fills in, kind by kind: per unit its value, status and std, per
    answer the decisions it made and how many agreed with the final label."""

    def __init__(self, table: AnswerTable, units: _Units) -> None:
        self.value = np.full(units.count, None, dtype=object)
        self.status = np.full(units.count, STATUSES.index(OK), dtype=np.int64)
        self.std = np.full(units.count, np.nan)
        self.decisions = np.zeros(table.n_answers, dtype=np.int64)
        self.agreed = np.zeros(table.n_answers, dtype=np.int64)


def _score_labels(table: AnswerTable, units: _Units, filled: _Filled) -> None:
    rows = table.kind == SCORE
    mean, std, _ = score_means(
        unit=units.of_answer[rows], score=table.number[rows], n_units=units.count
    )
    mine = units.kind == SCORE
    filled.value[mine] = mean[mine]
    filled.std[mine] = std[mine]


def _ordinal_labels(
    table: AnswerTable, units: _Units, filled: _Filled, settings: LabelSettings
) -> tuple[np.ndarray, np.ndarray, dict[str, DawidSkeneQuestion]]:
    """Fill the ordinal units; returns (level code per answer, -1 for none or invalid;
    the sorted levels; the Dawid-Skene fits)."""
    rows = table.kind == ORDINAL
    answered = rows & ~table.invalid
    levels = np.sort(pd.unique(table.number[answered]))  # hashing: few distinct levels
    level = np.full(table.n_answers, -1, dtype=np.int64)
    level[answered] = np.searchsorted(levels, table.number[answered])
    winner, status, _ = ordinal_majority(
        unit=units.of_answer[rows],
        level=level[rows],
        n_units=units.count,
        n_levels=max(levels.size, 1),
    )
    mine = units.kind == ORDINAL
    filled.status[mine] = status[mine]
    fits = {}
    if settings.method == "dawid-skene":
        fits = _dawid_skene(table, units, level, levels, filled.status, winner, settings)
    decided = mine & (filled.status == STATUSES.index(OK))
    filled.value[decided] = _level_values(levels)[winner[decided]]
    votes = answered & decided[units.of_answer]
    filled.decisions[votes] = 1
    filled.agreed[votes] = level[votes] == winner[units.of_answer[votes]]
    return level, levels, fits


def _tag_labels(
    table: AnswerTable, units: _Units, filled: _Filled, n: np.ndarray, keep_share: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fill the tags units; returns the (unit, tag, count) of every tag chosen."""
    n_tags = max(len(table.tags), 1)
    pair_unit = units.of_answer[table.tag_row]
    tag_unit, tag, count = tag_counts(
        pair_unit=pair_unit, pair_tag=table.tag, n_units=units.count, n_tags=n_tags
    )
    kept = keep_tag(count=count, n=n[tag_unit], keep_share=keep_share)
    mine = units.kind == TAGS
    texts = joined_tags(
        unit=tag_unit[kept], tag=tag[kept], n_units=units.count, tag_names=table.tags
    )
    filled.value[mine] = texts[mine]
    # A rater decides, for each tag in play on the unit (chosen by someone), to choose it
    # or not; agreed = in play - |the answer's tags symmetric difference the kept ones|.
    rows = np.flatnonzero(table.kind == TAGS)
    in_play = np.bincount(tag_unit, minlength=units.count)
    n_kept = np.bincount(tag_unit[kept], minlength=units.count)
    counted = tag_unit * np.int64(n_tags) + tag  # sorted (unit, tag) keys
    pair_kept = kept[np.searchsorted(counted, pair_unit * np.int64(n_tags) + table.tag)]
    chosen = np.bincount(table.tag_row, minlength=table.n_answers)[rows]
    both = np.bincount(table.tag_row, weights=pair_kept, minlength=table.n_answers)[rows]
    unit = units.of_answer[rows]
    filled.decisions[rows] = in_play[unit]
    filled.agreed[rows] = in_play[unit] - (chosen + n_kept[unit] - 2 * both.astype(np.int64))
    return tag_unit, tag, count


def analyse(answers: pd.DataFrame, *, settings: LabelSettings) -> LabelResult:
    """Labels, alpha and rater agreement of the answers (see ``answers`` for the input
    and ``result.LabelResult`` for the output). Raises LabelsError naming the line of
    the first unusable answer, or for unusable settings."""
    check_settings(settings)
    table = encode_answers(answers=answers)
    units = _Units(table)
    n = np.bincount(units.of_answer, minlength=units.count)
    filled = _Filled(table, units)
    _score_labels(table, units, filled)
    level, levels, fits = _ordinal_labels(table, units, filled, settings)
    tag_unit, tag, count = _tag_labels(table, units, filled, n, settings.keep_share)
    alpha, tag_alpha = _alphas(table, units, level, levels, n, tag_unit, tag, count)
    labels = pd.DataFrame(
        {
            "item_id": _texts(table.items, units.item),
            "question": _texts(table.questions, units.question),
            "kind": _texts(KINDS, units.kind),
            "value": filled.value,
            "n": n,
            "status": _texts(STATUSES, filled.status),
            "std": filled.std,
        }
    )
    return LabelResult(
        settings=settings,
        labels=labels,
        questions={
            str(q): KINDS[k] for q, k in zip(table.questions, table.question_kind, strict=True)
        },
        alpha=alpha,
        tag_alpha=tag_alpha,
        rater_agreement=_rater_agreement(table, filled.agreed, filled.decisions),
        dawid_skene=fits,
        n_answers=table.n_answers,
        n_raters=len(table.raters),
        n_items=len(table.items),
    )


def _alphas(
    table: AnswerTable,
    units: _Units,
    level: np.ndarray,
    levels: np.ndarray,
    n: np.ndarray,
    tag_unit: np.ndarray,
    tag: np.ndarray,
    count: np.ndarray,
) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """Alpha per score / ordinal question and per tag of every tags question."""
    alpha: dict[str, float] = {}
    tag_alpha: dict[str, dict[str, float]] = {}
    local = np.zeros(units.count, dtype=np.int64)  # a unit's index among its question's
    for q, name in enumerate(str(q) for q in table.questions):
        kind = table.question_kind[q]
        mine = np.flatnonzero(units.question == q)
        local[mine] = np.arange(mine.size)
        if kind == SCORE:
            rows = table.question == q
            alpha[name] = krippendorff_alpha_interval(
                units=units.of_answer[rows], values=table.number[rows]
            )
        elif kind == ORDINAL:
            rows = (table.question == q) & (level >= 0)
            present = np.bincount(level[rows], minlength=levels.size) > 0
            code = (np.cumsum(present) - 1)[level[rows]]  # the question's levels, in order
            counts = unit_value_counts(
                unit=local[units.of_answer[rows]],
                value=code,
                n_units=mine.size,
                n_values=int(present.sum()),
            )
            alpha[name] = alpha_from_counts(counts=counts, level="ordinal")
        else:
            pairs = units.question[tag_unit] == q
            present = np.flatnonzero(np.bincount(tag[pairs], minlength=len(table.tags)))
            column = np.zeros(len(table.tags), dtype=np.int64)
            column[present] = np.arange(present.size)
            chosen = np.zeros((mine.size, present.size))
            chosen[local[tag_unit[pairs]], column[tag[pairs]]] = count[pairs]
            values = binary_alphas(chosen=chosen, answered=n[mine])
            tag_alpha[name] = dict(
                zip((str(t) for t in table.tags[present]), values.tolist(), strict=True)
            )
    return alpha, tag_alpha
