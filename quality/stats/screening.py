"""Line clickers: raters who give (nearly) the same score to everything.

GAIA (Sec. 3.3, Quality Control): "5 line clickers with over 40% of the same ratings"
were removed with all their ratings. Here a rater's scores, over all dimensions, are
rounded to the slider step (half up: floor(score / step + 0.5)); when the most frequent
rounded score covers MORE than ``line_click_share`` of the rater's ratings, the rater is
excluded entirely. Exactly the share is kept; a share of 1.0 turns the rule off.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from quality.stats.ratings import RatingsTable

LINE_CLICKER_REASON = "line_clicker"


@dataclass(frozen=True)
class RaterExclusion:
    """One excluded rater and the figures behind the decision."""

    rater_id: object
    reason: str
    top_score: float
    share: float
    n_ratings: int


def line_clickers(
    *, table: RatingsTable, line_click_share: float = 0.40, slider_step: float = 1.0
) -> list[RaterExclusion]:
    """The raters whose most frequent (rounded) score covers more than the share.

    Ties between equally frequent scores report the lowest score. Sorted by rater id.
    """
    if slider_step <= 0:
        raise ValueError("slider_step must be positive")
    # Rounded scores are numbered by np.unique rather than cast to integers, which
    # overflow (to -2**63, one value for all) once score / step passes 2**63.
    steps, step_code = np.unique(np.floor(table.score / slider_step + 0.5), return_inverse=True)
    step_code = step_code.ravel()
    # One sort of (rater, rounded score) gives every run length at once.
    order = np.lexsort((step_code, table.rater))
    rater_sorted, code_sorted = table.rater[order], step_code[order]
    new_run = np.ones(order.size, dtype=bool)
    new_run[1:] = (rater_sorted[1:] != rater_sorted[:-1]) | (code_sorted[1:] != code_sorted[:-1])
    starts = np.flatnonzero(new_run)
    run_length = np.diff(np.append(starts, order.size))
    run_rater, run_code = rater_sorted[starts], code_sorted[starts]
    n_raters = len(table.raters)
    totals = np.bincount(table.rater, minlength=n_raters)
    top = np.zeros(n_raters, dtype=np.int64)
    np.maximum.at(top, run_rater, run_length)
    # Lowest score among the most frequent: the first run reaching the top count.
    is_top = run_length == top[run_rater]
    top_code = np.full(n_raters, np.iinfo(np.int64).max)
    np.minimum.at(top_code, run_rater[is_top], run_code[is_top])
    exclusions = []
    for rater in range(n_raters):
        if totals[rater] == 0:
            continue
        share = top[rater] / totals[rater]
        if share > line_click_share:
            exclusions.append(
                RaterExclusion(
                    rater_id=_native(table.raters[rater]),
                    reason=LINE_CLICKER_REASON,
                    top_score=float(steps[top_code[rater]] * slider_step),
                    share=float(share),
                    n_ratings=int(totals[rater]),
                )
            )
    return exclusions


def _native(value: object) -> object:
    """Numpy scalars as Python values, so exclusions are JSON-ready."""
    return value.item() if isinstance(value, np.generic) else value
