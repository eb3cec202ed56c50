"""What ``analyse`` returns: the settings, the labels table and the agreement figures."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import pandas as pd

from quality.stats.labels.dawid_skene import DawidSkeneFit
from quality.stats.labels.majority import STATUSES, TIE

# Bump when a change to this package changes any number or name a stored result holds.
LABELS_VERSION = "quality.stats.labels/1"
LABEL_COLUMNS = ("item_id", "question", "kind", "value", "n", "status", "std")
RATER_AGREEMENT_COLUMNS = ("rater_id", "question", "decisions", "agreed", "share")
METHODS = ("majority", "dawid-skene")


@dataclass(frozen=True)
class LabelSettings:
    """keep_share: a tag is kept when chosen by more than this share of a unit's raters
    (count > keep_share * n; 0.5: 2 of 3). method: how ordinal questions are decided,
    ``majority`` or ``dawid-skene`` (then max_iterations / tolerance of its EM)."""

    keep_share: float = 0.5
    method: str = "majority"
    max_iterations: int = 100
    tolerance: float = 1e-5


def level_text(level: float) -> str:
    """A level as text: ``3`` for 3.0, ``2.5`` for 2.5."""
    return str(int(level)) if float(level).is_integer() else repr(float(level))


@dataclass(frozen=True, eq=False)
class DawidSkeneQuestion:
    """The Dawid-Skene fit of one ordinal question: ``fit`` arrays are indexed by
    ``item_ids`` (the question's items that are not ``invalid``), ``rater_ids`` and
    ``levels`` (sorted)."""

    item_ids: list[str]
    rater_ids: list[str]
    levels: list[float]
    fit: DawidSkeneFit

    def summary_dict(self) -> dict:
        names = [level_text(level) for level in self.levels]
        return {
            "iterations": self.fit.iterations,
            "converged": self.fit.converged,
            "levels": names,
            "priors": dict(zip(names, self.fit.priors.tolist(), strict=True)),
            # confusion[rater][true level][answered level] = P(answered | true)
            "confusion": {
                rater: {
                    true: dict(zip(names, row, strict=True))
                    for true, row in zip(names, matrix.tolist(), strict=True)
                }
                for rater, matrix in zip(self.rater_ids, self.fit.confusion, strict=True)
            },
        }


@dataclass(frozen=True, eq=False)
class LabelResult:
    """The labels of a questionnaire and how far its raters agreed.

    - labels: one row per (item, question) answered, columns LABEL_COLUMNS, ordered by
      item id then question (questionnaire order). ``value``: the mean (score), the
      level (ordinal; an int when whole) or the kept tags joined by ``|`` in name order
      ("" for none); None when ``status`` is ``invalid`` or ``tie``. ``n``: answers
      given (``invalid`` ones included). ``std``: the scores' sample standard deviation
      (NaN for one answer and for other kinds).
    - alpha: Krippendorff's alpha per score (interval) and ordinal (ordinal) question;
      tag_alpha: per tags question, per tag (nominal, chosen / not chosen).
    - rater_agreement: per (rater, question) of kind ordinal or tags, the rater's
      decisions on labelled units and how many equal the final label (columns
      RATER_AGREEMENT_COLUMNS; ordinal: the level given on ``ok`` units; tags: chosen or
      not, for every tag some rater chose on the unit).
    - dawid_skene: per ordinal question, the fit (only with method ``dawid-skene``).
    """

    settings: LabelSettings
    labels: pd.DataFrame
    questions: dict[str, str]
    alpha: dict[str, float]
    tag_alpha: dict[str, dict[str, float]]
    rater_agreement: pd.DataFrame
    dawid_skene: dict[str, DawidSkeneQuestion] = field(default_factory=dict)
    n_answers: int = 0
    n_raters: int = 0
    n_items: int = 0

    def ties(self) -> pd.DataFrame:
        """The (item, question) units without a majority level, for expert adjudication."""
        return self.labels.loc[self.labels["status"] == TIE, ["item_id", "question", "n"]]

    def _rater_totals(self) -> dict[str, dict[str, float]]:
        frame = self.rater_agreement
        totals = frame.groupby("rater_id", sort=True)[["decisions", "agreed"]].sum()
        return {
            str(rater): {
                "decisions": int(decisions),
                "agreed": int(agreed),
                "share": agreed / decisions if decisions else float("nan"),
            }
            for rater, decisions, agreed in zip(
                totals.index, totals["decisions"], totals["agreed"], strict=True
            )
        }

    def summary_dict(self) -> dict:
        """JSON-ready summary (str keys; NaN stays float NaN, callers map it to null)."""
        status_counts = self.labels.groupby(["question", "status"], sort=False).size().to_dict()
        return {
            "version": LABELS_VERSION,
            "settings": asdict(self.settings),
            "counts": {
                "answers": self.n_answers,
                "raters": self.n_raters,
                "items": self.n_items,
                "labels": len(self.labels),
            },
            "questions": {
                question: {
                    "kind": kind,
                    **{s: int(status_counts.get((question, s), 0)) for s in STATUSES},
                }
                for question, kind in self.questions.items()
            },
            "alpha": dict(self.alpha),
            "alpha_level": {
                q: "interval" if kind == "score" else "ordinal"
                for q, kind in self.questions.items()
                if q in self.alpha
            },
            "tag_alpha": {q: dict(per_tag) for q, per_tag in self.tag_alpha.items()},
            "rater_agreement": self._rater_totals(),
            "dawid_skene": {q: fit.summary_dict() for q, fit in self.dawid_skene.items()},
        }
