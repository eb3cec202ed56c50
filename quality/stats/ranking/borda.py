"""Places and Borda scores of rankings with ties.

A ranking is a row of tie-group levels (``QuestionRankings.level``: 0 = best group). Its
conditions take places 1..N; a tied group of t conditions whose best place is p spans places
p..p+t-1, and each member gets the mean of the span (``average_places``), the usual
mid-rank convention for ties (Kendall 1948, Rank Correlation Methods).

Borda count (Borda 1781; see Brandt et al. 2016, Handbook of Computational Social Choice,
Ch. 2): a condition at place p among N gets N - p points (N-1 for first, 0 for last), so a
tied group gets the mean of the points of the places it spans. The Borda score of a
condition on a prompt is its mean points over the prompt's rankings (in [0, N-1]); pooled
over a question's prompts it is the mean of the prompts' Borda scores, so each prompt
weighs the same whatever its number of rankings.
"""

from __future__ import annotations

import numpy as np


def average_places(level: np.ndarray) -> np.ndarray:
    """(rankings x N) mid-rank places, 1 = best, from (rankings x N) tie-group levels."""
    level = np.asarray(level)
    above = (level[:, None, :] < level[:, :, None]).sum(axis=2)  # conditions strictly better
    tied = (level[:, None, :] == level[:, :, None]).sum(axis=2)  # group size, self included
    return above + (tied + 1) / 2.0


def borda_points(level: np.ndarray) -> np.ndarray:
    """(rankings x N) Borda points N - place (mid-rank place for ties)."""
    return level.shape[1] - average_places(level)


def borda_scores(*, level: np.ndarray, prompt: np.ndarray, n_prompts: int) -> np.ndarray:
    """(n_prompts + 1) x N: row p is prompt p's mean Borda points, the last row the mean of
    the prompt rows that have rankings (the pooled score)."""
    points = borda_points(level)
    sums = np.zeros((n_prompts, level.shape[1]))
    np.add.at(sums, prompt, points)
    counts = np.bincount(prompt, minlength=n_prompts).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_prompt = sums / counts[:, None]
    pooled = np.nanmean(per_prompt[counts > 0], axis=0)
    return np.vstack([per_prompt, pooled])


def place_counts(level: np.ndarray) -> np.ndarray:
    """N x N: [c, p] = how many rankings put condition c at place p + 1, a tied group of t
    conditions spreading each member's 1 evenly (1/t) over the t places it spans, so every
    row and every column sums to the number of rankings (the rank-distribution figure)."""
    n = level.shape[1]
    above = (level[:, None, :] < level[:, :, None]).sum(axis=2)
    tied = (level[:, None, :] == level[:, :, None]).sum(axis=2)
    places = np.arange(n)
    inside = (places >= above[..., None]) & (places < (above + tied)[..., None])
    return (inside / tied[..., None]).sum(axis=0)
