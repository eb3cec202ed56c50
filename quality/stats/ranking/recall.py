"""Recall@K between a human ranking and a model ranking (VGA-Bench's comparison).

Recall@K = |top-K of the human ranking  intersect  top-K of the model ranking| / K,
the model's top K judged against the human top K as relevant set (recall at a cut-off,
Manning, Raghavan & Schütze 2008, Introduction to Information Retrieval, Ch. 8; both sets
have K members, so it is also precision@K). VGA-Bench reports K = 1, 3, 5.

Ties at the K boundary are not broken by an arbitrary rule: a ranking that ties conditions
across the boundary counts each of them as in its top K with the probability it would be
if the tie were broken uniformly at random ((K - above) / group size), on both sides
independently, so Recall@K is the expected overlap / K. Model scores and raters' rankings
may tie; a Kemeny consensus is a strict order (where several orders are optimal, the one
reported is the one the Borda scores, then the condition ids, prefer: ``kemeny``).
"""

from __future__ import annotations

import numpy as np


def top_k_share(places: np.ndarray, *, k: int) -> np.ndarray:
    """(..., N) probability that each condition is in the top k when ties (equal values of
    ``places``, lower = better) are broken uniformly at random."""
    places = np.asarray(places, dtype=np.float64)
    above = (places[..., None, :] < places[..., :, None]).sum(axis=-1)
    group = (places[..., None, :] == places[..., :, None]).sum(axis=-1)
    return np.clip((k - above) / group, 0.0, 1.0)


def recall_at_k(*, human: np.ndarray, model: np.ndarray, k: int) -> np.ndarray:
    """Expected Recall@k of each human ranking (rows of ``human``, lower = better) against
    the model ranking ``model`` (lower = better; pass -score for scores)."""
    if not 1 <= k <= np.shape(human)[-1]:
        raise ValueError(f"k must be between 1 and the number of conditions, got {k}")
    return (top_k_share(human, k=k) * top_k_share(model, k=k)).sum(axis=-1) / k
