"""Recall of the propose stage of propose-then-verify labelling (AVA) on golden items.

AVA justified asking three proposers per item by the recall of the union of their
proposals: how many of an item's true labels at least one of k proposers names, for k
= 1, 2, 3. For a golden label t of item i, with m_i proposers on the item of whom h_it
named t, the share of the C(m_i, k) groups of k proposers whose union contains t is

    r_k(i, t) = 1 - C(m_i - h_it, k) / C(m_i, k)

(the groups that miss t are those drawn from the m_i - h_it who did not name it), so
averaging over every group of k proposers needs no enumeration. The curve point is

    recall(k) = mean of r_k(i, t) over the golden labels of items with m_i >= k

(pooled over labels: the share of the golden labels a group of k finds, the dataset's
recall). A proposer's own recall is the share of the golden labels of the items they
worked on that they named.

Inputs: ``proposals`` (``rater_id, item_id, label``; a row with an empty label records
a proposer who proposed nothing for the item) and ``truth`` (``item_id, label``: the
golden labels). Proposals on items without golden labels are ignored.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

from quality.stats.labels.table import (
    LabelsError,
    check_columns,
    check_not_empty,
    line_numbers,
    text_column,
)
from quality.stats.repeats import first_repeat

PROPOSAL_COLUMNS = ("rater_id", "item_id", "label")
TRUTH_COLUMNS = ("item_id", "label")
PROPOSER_COLUMNS = ("rater_id", "items", "truth_labels", "found", "recall")


@dataclass(frozen=True, eq=False)
class ProposalRecall:
    """curve[k]: recall of the union of k proposers (see the module docstring);
    curve_labels[k]: golden labels behind that point; proposers: per proposer on golden
    items (PROPOSER_COLUMNS, sorted by id); counts of golden items and labels used, and
    of golden items nobody proposed for (left out)."""

    curve: dict[int, float]
    curve_labels: dict[int, int]
    proposers: pd.DataFrame
    n_golden_items: int
    n_golden_labels: int
    n_items_without_proposals: int

    def summary_dict(self) -> dict:
        return {
            "curve": {str(k): v for k, v in self.curve.items()},
            "curve_labels": {str(k): v for k, v in self.curve_labels.items()},
            "proposer_recall": dict(
                zip(self.proposers["rater_id"], self.proposers["recall"].tolist(), strict=True)
            ),
            "counts": {
                "golden_items": self.n_golden_items,
                "golden_labels": self.n_golden_labels,
                "golden_items_without_proposals": self.n_items_without_proposals,
            },
        }


def _checked(frame: pd.DataFrame, columns: tuple[str, ...], what: str) -> dict[str, pd.Series]:
    """The columns as text; errors are prefixed with the table's name."""
    try:
        check_columns(frame, columns, what=what)
        texts = {name: text_column(frame, name) for name in columns}
        required = [c for c in columns if c != "label" or what == "golden labels"]
        check_not_empty({name: texts[name] for name in required}, line_numbers(frame))
    except LabelsError as exc:
        raise LabelsError(f"{what}: {exc}") from None
    return texts


def _no_repeats(codes: list[np.ndarray], line: np.ndarray, what: str) -> None:
    repeat = first_repeat(codes)
    if repeat is not None:
        row, earlier = repeat
        raise LabelsError(f"{what}: line {line[row]} repeats line {line[earlier]}")


def proposal_recall(*, proposals: pd.DataFrame, truth: pd.DataFrame) -> ProposalRecall:
    """The recall curve and per-proposer recall (see the module docstring).

    Raises LabelsError for a missing column, an empty table, an empty id (or empty
    golden label) or a repeated row, naming the table and the line.
    """
    proposed = _checked(proposals, PROPOSAL_COLUMNS, "proposals")
    golden = _checked(truth, TRUTH_COLUMNS, "golden labels")
    items, item_index = pd.factorize(
        pd.concat([golden["item_id"], proposed["item_id"]], ignore_index=True), sort=True
    )
    labels, _ = pd.factorize(
        pd.concat([golden["label"], proposed["label"]], ignore_index=True), sort=True
    )
    n_truth, n_labels = len(truth), int(labels.max()) + 1
    truth_item, truth_label = items[:n_truth], labels[:n_truth]
    item, label = items[n_truth:], labels[n_truth:]
    rater, raters = pd.factorize(proposed["rater_id"], sort=True)
    _no_repeats([truth_item, truth_label], line_numbers(truth), "golden labels")
    _no_repeats([rater, item, label], line_numbers(proposals), "proposals")

    n_items, n_raters = len(item_index), len(raters)
    truth_per_item = np.bincount(truth_item, minlength=n_items)
    on_golden = truth_per_item[item] > 0
    rater, item, label = rater[on_golden], item[on_golden], label[on_golden]
    worked = np.unique(item * np.int64(n_raters) + rater)  # (item, proposer) pairs
    worked_item, worked_rater = np.divmod(worked, n_raters)
    proposers_per_item = np.bincount(worked_item, minlength=n_items)

    truth_key = np.sort(truth_item * np.int64(n_labels) + truth_label)
    named_key = item * np.int64(n_labels) + label
    hit = np.isin(named_key, truth_key)  # an empty label is never golden
    named_keys, named_by = np.unique(named_key[hit], return_counts=True)
    h = np.zeros(truth_key.size, dtype=np.int64)
    h[np.searchsorted(truth_key, named_keys)] = named_by
    m = proposers_per_item[truth_key // n_labels]

    curve, curve_labels = {}, {}
    for k in range(1, int(m.max(initial=0)) + 1):
        use = m >= k
        missed = special.comb(m[use] - h[use], k) / special.comb(m[use], k)
        curve[k] = float(np.mean(1.0 - missed))
        curve_labels[k] = int(use.sum())

    found = np.bincount(rater[hit], minlength=n_raters)
    truth_labels = np.bincount(
        worked_rater, weights=truth_per_item[worked_item], minlength=n_raters
    ).astype(np.int64)
    items_worked = np.bincount(worked_rater, minlength=n_raters)
    active = items_worked > 0
    with np.errstate(invalid="ignore"):
        recall = found / truth_labels
    proposers = pd.DataFrame(
        {
            "rater_id": np.asarray(raters, dtype=object),
            "items": items_worked,
            "truth_labels": truth_labels,
            "found": found,
            "recall": recall,
        }
    )[active].reset_index(drop=True)
    golden_items = truth_per_item > 0
    return ProposalRecall(
        curve=curve,
        curve_labels=curve_labels,
        proposers=proposers,
        n_golden_items=int(np.sum(golden_items & (proposers_per_item > 0))),
        n_golden_labels=int(np.sum(m > 0)),
        n_items_without_proposals=int(np.sum(golden_items & (proposers_per_item == 0))),
    )
