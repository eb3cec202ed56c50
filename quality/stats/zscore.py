"""Z-score normalisation of each rater's raw scores (GAIA Sec. 3.3; ITU-T P.913 Sec. 12.5).

z = (score - mean_g) / std_g within each group g = (rater, session, dimension) when the
table has sessions, else (rater, dimension). Per session, because a rater's use of the
slider drifts between sessions taken days apart. std_g is the population standard
deviation (ddof=0), so every group's z has mean 0 and variance 1 exactly. A group whose
scores are all equal (this includes a group of one rating) has no scale: its z is 0,
i.e. the rater's ratings there say "average" and pull no video up or down.
"""

from __future__ import annotations

import numpy as np

from quality.stats.ratings import RatingsTable


def zscore_groups(table: RatingsTable) -> np.ndarray:
    """The group code of every rating: (rater, session, dimension) or (rater, dimension)."""
    n_dims = len(table.dimensions)
    key = table.rater * n_dims + table.dimension
    if table.session is not None:
        n_sessions = int(table.session.max()) + 1
        key = key * n_sessions + table.session
    _, codes = np.unique(key, return_inverse=True)
    return codes.ravel()


def zscores(table: RatingsTable) -> np.ndarray:
    """z of every rating of the table (same order), 0 in groups without variance."""
    groups = zscore_groups(table)
    n_groups = int(groups.max()) + 1 if groups.size else 0
    count = np.bincount(groups, minlength=n_groups)
    mean = np.bincount(groups, weights=table.score, minlength=n_groups) / count
    deviation = table.score - mean[groups]
    # Two passes (mean, then squared deviations): no cancellation in sum(x^2) - n mean^2.
    std = np.sqrt(np.bincount(groups, weights=deviation**2, minlength=n_groups) / count)
    # Exactly-constant groups: min == max, decided on the scores, not on a rounded std.
    low = np.full(n_groups, np.inf)
    high = np.full(n_groups, -np.inf)
    np.minimum.at(low, groups, table.score)
    np.maximum.at(high, groups, table.score)
    constant = low == high
    scale = np.where(constant, 1.0, std)
    return np.where(constant[groups], 0.0, deviation / scale[groups])
