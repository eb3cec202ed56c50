"""Which ratings count: the exclusions of a study, and the rule that takes out each rating.

These rules take answers out of every published number (the analysis run's MOS, alpha,
SRCC curve, scale and figures, and the exports), each recorded with its figures and
reason:

- ``rater_withdrew``: the rater withdrew from the study (all their ratings; the rater's
  own decision, ``annotation.services.withdrawal``, so it comes before an admin's);
- ``admin_excluded_rater``: an admin excluded the rater from the study (all their ratings);
- ``admin_excluded_session``: an admin excluded one session of the rater;
- ``batch_rejected_in_audit``: an expert rejected the session (a questionnaire batch) in
  its audit (``annotation.services.audits``), which excludes it as an admin would;
- ``golden_gate_failed``: the session's golden agreement failed the study's gate (PLCC at
  or below the threshold, GAIA Sec. 3.2: only raters who agreed with the experts were
  kept), unless the study keeps such sessions;
- ``line_clicker``: found by the analysis itself on the ratings the other rules left
  (``quality.stats.screening``);
- ``position_bias``, ``disagrees_with_majority``: the screening of a preference study's
  raters by its analysis (``quality.stats.preference``).

A rating matched by several rules carries the first of this list. Pure: the exclusions are
read from the database by ``quality.selectors.study_exclusions``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import pandas as pd

RATER_WITHDREW = "rater_withdrew"
WITHDRAWN_REASON = "the rater withdrew from the study"
ADMIN_EXCLUDED_RATER = "admin_excluded_rater"
ADMIN_EXCLUDED_SESSION = "admin_excluded_session"
BATCH_REJECTED_IN_AUDIT = "batch_rejected_in_audit"
GOLDEN_GATE_FAILED = "golden_gate_failed"
LINE_CLICKER = "line_clicker"
# The screening rules of the other designs' analyses (quality.stats.preference, ...).
POSITION_BIAS = "position_bias"
DISAGREES_WITH_MAJORITY = "disagrees_with_majority"
RANDOM_RANKER = "mean_tau_loo_not_above_0"  # quality.stats.ranking.screening's rule
RULES = (
    RATER_WITHDREW,
    ADMIN_EXCLUDED_RATER,
    ADMIN_EXCLUDED_SESSION,
    BATCH_REJECTED_IN_AUDIT,
    GOLDEN_GATE_FAILED,
    LINE_CLICKER,
    POSITION_BIAS,
    DISAGREES_WITH_MAJORITY,
    RANDOM_RANKER,
)
RULE_LABELS = {
    RATER_WITHDREW: "rater withdrew from the study",
    ADMIN_EXCLUDED_RATER: "rater excluded by an admin",
    ADMIN_EXCLUDED_SESSION: "session excluded by an admin",
    BATCH_REJECTED_IN_AUDIT: "batch rejected in its audit",
    GOLDEN_GATE_FAILED: "session failed the golden gate",
    LINE_CLICKER: "line clicker (found by the run)",
    POSITION_BIAS: "always the same side (found by the run)",
    DISAGREES_WITH_MAJORITY: "disagrees with the majority (found by the run)",
    RANDOM_RANKER: "ranks at random: no agreement with the consensus (found by the run)",
}
# Rules decided outside the analysis, from the study's state: they are what a run reads
# before it starts, and what makes an earlier run out of date when they change.
PRE_ANALYSIS_RULES = (
    RATER_WITHDREW,
    ADMIN_EXCLUDED_RATER,
    ADMIN_EXCLUDED_SESSION,
    GOLDEN_GATE_FAILED,
)


@dataclass(frozen=True)
class Exclusion:
    """One exclusion: a whole rater (``session`` None) or one of their sessions."""

    rule: str
    rater_id: str
    session: int | None
    reason: str
    figures: dict = field(default_factory=dict)
    decided_by: str | None = None  # the admin's user name; None for a rule of the data
    decided_at: str | None = None  # ISO 8601
    ratings: int = 0  # ratings it took out, filled in by ``count_ratings``

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Exclusion:
        """A stored exclusion; runs before the rules existed stored line clickers only,
        as {rater_id, reason, top_score, share, n_ratings}."""
        if "rule" not in data:
            figures = {k: data[k] for k in ("top_score", "share", "n_ratings") if k in data}
            return cls(LINE_CLICKER, str(data["rater_id"]), None, str(data["reason"]), figures)
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**known)


class ExclusionIndex:
    """The rule (or "") of each rating, looked up by its rater and session."""

    def __init__(self, exclusions: Iterable[Exclusion]):
        self._rules: dict[tuple[str, int | None], str] = {}
        rank = {rule: i for i, rule in enumerate(RULES)}
        for exclusion in sorted(exclusions, key=lambda e: rank.get(e.rule, len(RULES))):
            self._rules.setdefault((exclusion.rater_id, exclusion.session), exclusion.rule)

    def rule(self, rater_id: str, session: int) -> str:
        rules = self._rules
        whole = rules.get((rater_id, None))
        part = rules.get((rater_id, session))
        if whole is None or part is None:
            return whole or part or ""
        return min(whole, part, key=RULES.index)

    def rules(self, rater_ids, sessions) -> np.ndarray:
        """The rule of every rating (object array of str, "" where it counts)."""
        out = np.full(len(rater_ids), "", dtype=object)
        if not self._rules or not len(out):
            return out
        codes, pairs = pd.MultiIndex.from_arrays(
            [np.asarray(rater_ids).astype(str), np.asarray(sessions, dtype=np.int64)]
        ).factorize()
        found = np.array([self.rule(r, int(s)) for r, s in pairs], dtype=object)
        return found[codes]


def count_ratings(
    exclusions: Iterable[Exclusion], rater_ids, sessions, rules: np.ndarray
) -> list[Exclusion]:
    """The exclusions with the number of ratings each took out (a rating counts for the
    first rule that matches it, so the counts add up to the ratings left out)."""
    out = pd.DataFrame(
        {
            "rule": np.asarray(rules, dtype=object),
            "rater": np.asarray(rater_ids).astype(str),
            "session": np.asarray(sessions, dtype=np.int64),
        }
    )
    out = out[out["rule"] != ""]
    per_session = out.groupby(["rule", "rater", "session"]).size().to_dict()
    per_rater = out.groupby(["rule", "rater"]).size().to_dict()
    counted = []
    for e in exclusions:
        if e.session is None:
            n = per_rater.get((e.rule, e.rater_id), 0)
        else:
            n = per_session.get((e.rule, e.rater_id, e.session), 0)
        counted.append(replace(e, ratings=int(n)))
    return counted
