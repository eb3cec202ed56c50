"""The verify stage of propose-then-verify labelling (AVA): a proposed label is kept
when at least ``keep`` of its verifiers say yes (AVA: 2 of 3).

Input: a DataFrame with columns ``rater_id, item_id, label, verdict`` (one row per
verdict, ``verdict`` ``yes`` or ``no`` in any case; an optional ``line`` column names
each row's line in its CSV, see ``quality.stats.labels.table``). A verifier judges a
(item, label) once.

- per (item, label): yes and no counts and kept = yes >= keep;
- verifier agreement: Krippendorff's alpha, nominal, one unit per (item, label), the
  values yes / no (Krippendorff, "Computing Krippendorff's Alpha-Reliability", 2011;
  formula in ``quality.stats.labels.agreement``);
- per verifier: accuracy against the final labels, the share of their verdicts that
  equal it (yes on a kept label, no on a dropped one).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from quality.stats.labels.agreement import alpha_from_counts, unit_value_counts
from quality.stats.labels.table import (
    LabelsError,
    check_columns,
    check_not_empty,
    line_numbers,
    text_column,
)
from quality.stats.repeats import first_repeat

VERDICT_COLUMNS = ("rater_id", "item_id", "label", "verdict")
VERIFIED_COLUMNS = ("item_id", "label", "yes", "no", "kept")
VERIFIER_COLUMNS = ("rater_id", "verdicts", "agreed", "accuracy")
# Bump when a change to this module changes any number or name a stored result holds.
VERIFY_VERSION = "quality.stats.verify/1"
VERDICTS = ("no", "yes")  # codes 0 and 1


@dataclass(frozen=True, eq=False)
class VerifyResult:
    """labels: one row per (item, label) verified (VERIFIED_COLUMNS), sorted by item id
    then label; alpha: the verifiers' nominal alpha (NaN when undefined); verifiers: one
    row per verifier (VERIFIER_COLUMNS), sorted by id."""

    keep: int
    labels: pd.DataFrame
    alpha: float
    verifiers: pd.DataFrame
    n_verdicts: int
    n_items: int

    def summary_dict(self) -> dict:
        """JSON-ready summary (str keys; NaN stays float NaN, callers map it to null)."""
        return {
            "version": VERIFY_VERSION,
            "settings": {"keep": self.keep},
            "counts": {
                "verdicts": self.n_verdicts,
                "verifiers": len(self.verifiers),
                "items": self.n_items,
                "labels": len(self.labels),
                "kept": int(self.labels["kept"].sum()),
            },
            "alpha": self.alpha,
            "verifier_accuracy": {
                str(rater): {"verdicts": int(n), "agreed": int(k), "accuracy": float(a)}
                for rater, n, k, a in zip(
                    self.verifiers["rater_id"],
                    self.verifiers["verdicts"],
                    self.verifiers["agreed"],
                    self.verifiers["accuracy"],
                    strict=True,
                )
            },
        }


def _codes(text: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    codes, uniques = pd.factorize(text, sort=True)
    return codes.astype(np.int64, copy=False), np.asarray(uniques, dtype=object)


def verify_labels(verdicts: pd.DataFrame, *, keep: int = 2) -> VerifyResult:
    """Kept labels, alpha and verifier accuracy (see the module docstring).

    Raises LabelsError naming the first unusable line (missing column, no verdicts, an
    empty id, a verdict other than yes / no, a verifier judging a label twice), or for
    ``keep`` below 1.
    """
    if int(keep) != keep or keep < 1:
        raise LabelsError("keep must be a whole number of at least 1")
    check_columns(verdicts, VERDICT_COLUMNS, what="verdicts")
    line = line_numbers(verdicts)
    texts = {name: text_column(verdicts, name) for name in VERDICT_COLUMNS}
    check_not_empty({n: texts[n] for n in ("rater_id", "item_id", "label")}, line)
    verdict_codes, verdict_names = pd.factorize(texts["verdict"])
    known = {name: code for code, name in enumerate(VERDICTS)}
    mapped = np.array([known.get(str(v).strip().lower(), -1) for v in verdict_names])
    verdict = mapped[verdict_codes]
    if (verdict < 0).any():
        row = int(np.argmax(verdict < 0))
        raise LabelsError(
            f"line {line[row]}: verdict {texts['verdict'].iloc[row]!r} is not yes or no"
        )
    rater, raters = _codes(texts["rater_id"])
    item, items = _codes(texts["item_id"])
    label, label_names = _codes(texts["label"])
    repeat = first_repeat([item, label, rater])
    if repeat is not None:
        row, earlier = repeat
        raise LabelsError(
            f"line {line[row]}: verifier {raters[rater[row]]!r} judged label "
            f"{label_names[label[row]]!r} of item {items[item[row]]!r} again "
            f"(first on line {line[earlier]})"
        )
    keys, unit = np.unique(item * np.int64(label_names.size) + label, return_inverse=True)
    unit_item, unit_label = np.divmod(keys, label_names.size)
    counts = unit_value_counts(unit=unit, value=verdict, n_units=keys.size, n_values=2)
    kept = counts[:, 1] >= keep
    agreed = (verdict == 1) == kept[unit]
    n_verdicts = np.bincount(rater, minlength=raters.size)
    n_agreed = np.bincount(rater, weights=agreed, minlength=raters.size).astype(np.int64)
    return VerifyResult(
        keep=int(keep),
        labels=pd.DataFrame(
            {
                "item_id": items[unit_item],
                "label": label_names[unit_label],
                "yes": counts[:, 1],
                "no": counts[:, 0],
                "kept": kept,
            }
        ),
        alpha=alpha_from_counts(counts=counts, level="nominal"),
        verifiers=pd.DataFrame(
            {
                "rater_id": raters,
                "verdicts": n_verdicts,
                "agreed": n_agreed,
                "accuracy": n_agreed / n_verdicts,
            }
        ),
        n_verdicts=int(verdict.size),
        n_items=int(items.size),
    )
