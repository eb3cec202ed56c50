"""The first repeated key of a long table: a rater who answered the same thing twice."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def first_repeat(codes: Sequence[np.ndarray]) -> tuple[int, int] | None:
    """(row, earlier row) of the first row (in table order) whose codes repeat an earlier
    row's, or None when every row is distinct."""
    order = np.lexsort(tuple(reversed(codes)))  # stable: equal keys keep table order
    same = np.logical_and.reduce([c[order][1:] == c[order][:-1] for c in codes])
    if not same.any():
        return None
    # In a run of equal keys every row after the first repeats it; the run's first row
    # is the earliest, as lexsort keeps table order within equal keys.
    run_start = np.maximum.accumulate(np.where(np.r_[True, ~same], np.arange(order.size), 0))
    repeats = np.flatnonzero(np.r_[False, same])
    row = int(order[repeats].min())
    earlier = int(order[run_start[repeats[np.argmin(order[repeats])]]])
    return row, earlier
