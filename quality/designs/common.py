"""What every design's analysis records the same way."""

from __future__ import annotations

import numpy as np
import pandas as pd

from annotation.models import Study
from quality.designs.base import Computed
from quality.selectors import exclusions_fingerprint
from quality.stats.exclusions import Exclusion, count_ratings


def selection_summary(*, study: Study, exclusions: list[Exclusion]) -> dict:
    """Which answers a run counted, besides the answers themselves: the gate setting and
    the fingerprint of the admins' exclusions (a run whose fingerprint differs from the
    study's now is out of date)."""
    return {
        "keep_failed_gate_sessions": study.keep_failed_gate_sessions,
        "exclusions_fingerprint": exclusions_fingerprint(study=study, exclusions=exclusions),
    }


def with_screened(
    exclusions: list[Exclusion], screened: list[Exclusion], *, rows: pd.DataFrame, rules: np.ndarray
) -> list[Exclusion]:
    """The study's exclusions and the raters the analysis screened out, each counted with
    the rows (``rater_id``, ``session_id``) it takes out; `rules` is the rule that took
    each row out before the analysis ("" where it counted)."""
    by_rater = {e.rater_id: e.rule for e in screened}
    rules = rules.copy()
    for i, rater in enumerate(rows["rater_id"]):
        if not rules[i] and rater in by_rater:
            rules[i] = by_rater[rater]
    return count_ratings([*exclusions, *screened], rows["rater_id"], rows["session_id"], rules)


def finished(
    *, study: Study, summary: dict, exclusions: list[Exclusion], rules: tuple[str, ...],
    rows: int, version: str,
) -> Computed:  # fmt: skip
    """A run's result: its summary with the exclusions (and the rows each rule of the
    design took out) and the selection, as every design stores it."""
    summary["exclusions"] = [e.as_dict() for e in exclusions]
    summary["excluded_ratings"] = {
        rule: sum(e.ratings for e in exclusions if e.rule == rule) for rule in rules
    }
    summary["selection"] = selection_summary(study=study, exclusions=exclusions)
    return Computed(
        summary=summary, exclusions=summary["exclusions"], ratings_count=rows, code_version=version
    )
