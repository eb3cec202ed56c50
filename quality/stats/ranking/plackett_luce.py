"""Plackett-Luce strengths by maximum likelihood, for many rater-weightings at once.

Model (Luce 1959; Plackett 1975): a ranking is built best to worst, each place taken by
condition i out of the still-unranked set R with probability gamma_i / sum_{k in R} gamma_k.
The strength reported is log(gamma), centred to mean 0 over the conditions.

Ties: a tied group D taken at the stage where R is unranked counts as |D| choices, each
member chosen out of the same R (the group included), i.e. the stage contributes
prod_{i in D} gamma_i / (sum_{k in R} gamma_k)^|D| -- Breslow's (1974) treatment of tied
event times in Cox's partial likelihood. Without ties this is exactly Plackett-Luce (the
last, single condition contributes 1 and is dropped); a tied last group still contributes
(its members are chosen among themselves), pulling them towards equal strength.

Every stage is thus a set of Luce choices (i out of R), and the likelihood only needs, per
distinct set R, how many choices were made out of it, plus each condition's number of
choices won. The maximum is found with Hunter's (2004) MM algorithm for Plackett-Luce ("MM
algorithms for generalized Bradley-Terry models", Ann. Statist. 32):

    gamma_i <- w_i / sum_R c_R [i in R] / sum_{k in R} gamma_k,

run for all bootstrap replicates together: a replicate is a weighting of the raters
(how often each was drawn), so its set counts c_R and wins w_i are matrix products of the
per-rater counts, and each MM step is two matrix products over (replicates x sets).

Existence (Ford 1957 for paired comparisons; Hunter 2004 for Plackett-Luce): the maximum is
finite iff the graph with an edge i -> j whenever i was chosen while j was still unranked
is strongly connected. Where it is not (a condition always first, or always last; checked
for every replicate), a weak prior is added to that fit only: ``prior_weight``
pseudo-wins and as many pseudo-losses of each condition in pairwise comparisons with one
extra "ghost" condition whose strength is fitted too, in the spirit of the pseudo-rankings
of Turner et al. (2020, "Modelling rankings in R: the PlackettLuce package", Comput. Stat.
35). With ``prior_weight = 0`` such a fit is NaN.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

# (replicate x choice set) values handled at once: bounds the memory of a fit.
_CHUNK_VALUES = 1 << 22


@dataclass(frozen=True, eq=False)
class ChoiceData:
    """Per-rater sufficient statistics of the Luce choices in the rankings.

    sets: (U x N) 0/1 membership of each distinct choice set R; set_counts: sparse
    (raters x U) number of choices out of each set; wins: (raters x N) choices won;
    edges: (raters x N*N) 0/1, i -> j when i was chosen while j was unranked.
    """

    sets: np.ndarray
    set_counts: sparse.csr_matrix
    wins: np.ndarray
    edges: np.ndarray

    @property
    def n_conditions(self) -> int:
        return self.sets.shape[1]


@dataclass(frozen=True, eq=False)
class PlackettLuceFit:
    """strength: (replicates x N) centred log-strengths (NaN where no estimate exists);
    prior_used: (replicates,) whether that fit needed the ghost prior; converged:
    (replicates,) whether MM met the tolerance within max_iterations (False where no
    estimate exists); iterations: MM steps of the slowest replicate."""

    strength: np.ndarray
    prior_used: np.ndarray
    converged: np.ndarray
    iterations: int


def choice_data(*, level: np.ndarray, rater: np.ndarray, n_raters: int) -> ChoiceData:
    """The Luce choices of (rankings x N) tie-group levels by raters ``rater``."""
    level = np.asarray(level)
    m, n = level.shape
    bit = np.int64(1) << np.arange(n, dtype=np.int64)
    last = level.max(axis=1)
    stage_set, stage_size, stage_rater = [], [], []
    for group in range(n):
        chosen = level == group
        size = chosen.sum(axis=1)
        # A lone last condition is chosen with probability 1: no information.
        counted = (size > 0) & ~((group == last) & (size == 1))
        stage_set.append(((level >= group) * bit).sum(axis=1)[counted])
        stage_size.append(size[counted])
        stage_rater.append(np.asarray(rater)[counted])
    masks, set_index = np.unique(np.concatenate(stage_set), return_inverse=True)
    set_counts = sparse.csr_matrix(
        (
            np.concatenate(stage_size).astype(np.float64),
            (np.concatenate(stage_rater), set_index.ravel()),
        ),
        shape=(n_raters, masks.size),
    )  # duplicates are summed
    alone_last = (level == last[:, None]) & ((level == last[:, None]).sum(axis=1) == 1)[:, None]
    wins = np.zeros((n_raters, n))
    np.add.at(wins, rater, (~alone_last).astype(np.float64))
    edge = (level[:, :, None] <= level[:, None, :]) & ~np.eye(n, dtype=bool)
    edges = np.zeros((n_raters, n * n))
    np.add.at(edges, rater, edge.reshape(m, n * n).astype(np.float64))
    return ChoiceData(
        sets=((masks[:, None] & bit) != 0).astype(np.float64),
        set_counts=set_counts,
        wins=wins,
        edges=(edges > 0).astype(np.float64),
    )


def mle_exists(data: ChoiceData, *, weights: np.ndarray) -> np.ndarray:
    """(replicates,) whether the comparison graph of each rater-weighting is strongly
    connected (the maximum likelihood estimate is then finite)."""
    n = data.n_conditions
    reach = (weights @ data.edges).reshape(-1, n, n) > 0
    reach |= np.eye(n, dtype=bool)
    steps = 1
    while steps < n:  # reach of paths up to 2^k edges
        reach = (reach.astype(np.float64) @ reach.astype(np.float64)) > 0
        steps *= 2
    return reach.all(axis=(1, 2))


def fit_plackett_luce(
    data: ChoiceData,
    *,
    weights: np.ndarray,
    prior_weight: float = 0.5,
    tolerance: float = 1e-10,
    max_iterations: int = 100_000,
) -> PlackettLuceFit:
    """Centred log-strengths for each row of ``weights`` (replicates x raters: how much
    each rater's rankings count), by Hunter's MM until no log-strength moves by more than
    ``tolerance`` in a step. Module docstring for ties and the prior."""
    weights = np.atleast_2d(np.asarray(weights, dtype=np.float64))
    replicates, n = weights.shape[0], data.n_conditions
    exists = mle_exists(data, weights=weights)
    prior_used = ~exists if prior_weight > 0 else np.zeros(replicates, dtype=bool)
    fitted = exists | prior_used
    strength = np.full((replicates, n), np.nan)
    converged = np.zeros(replicates, dtype=bool)
    iterations = 0
    fitted_rows = np.flatnonzero(fitted)
    # Replicates in chunks of about _CHUNK_VALUES (replicate, set) counts each.
    chunk = max(1, _CHUNK_VALUES // max(1, data.sets.shape[0]))
    for start in range(0, fitted_rows.size, chunk):
        rows = fitted_rows[start : start + chunk]
        counts = np.asarray((data.set_counts.T @ weights[rows].T).T)  # (rows x U)
        wins = weights[rows] @ data.wins
        sets = data.sets
        if prior_used[rows].any():
            sets, counts, wins = _with_ghost(sets, counts, wins, prior_used[rows], prior_weight)
        strength[rows], converged[rows], steps = _mm(
            sets, counts, wins, n, tolerance, max_iterations
        )
        iterations = max(iterations, steps)
    return PlackettLuceFit(
        strength=strength, prior_used=prior_used, converged=converged, iterations=iterations
    )


def _with_ghost(sets, counts, wins, needs, prior_weight):
    """Add the ghost condition (last column) and a pair set {i, ghost} per condition: each
    fit that ``needs`` it gets prior_weight choices of i and of the ghost out of each."""
    u, n = sets.shape
    pairs = np.hstack([np.eye(n), np.ones((n, 1))])
    sets = np.vstack([np.hstack([sets, np.zeros((u, 1))]), pairs])
    weight = prior_weight * needs.astype(np.float64)[:, None]
    counts = np.hstack([counts, np.repeat(2.0 * weight, n, axis=1)])
    wins = np.hstack([wins + weight, n * weight])
    return sets, counts, wins


def _mm(sets, counts, wins, n_real, tolerance, max_iterations):
    """Hunter's MM for all rows at once; converged rows are set aside as they finish."""
    rows, width = wins.shape
    gamma = np.ones((rows, width))
    result = np.empty((rows, n_real))
    converged = np.zeros(rows, dtype=bool)
    active = np.arange(rows)
    iterations = 0
    while active.size and iterations < max_iterations:
        iterations += 1
        totals = gamma @ sets.T
        denominator = (counts / totals) @ sets
        unused = denominator == 0  # the ghost of a fit without prior
        new = np.where(unused, 1.0, wins / np.where(unused, 1.0, denominator))
        # Fix the scale: geometric mean 1 over the real conditions.
        new /= np.exp(np.log(new[:, :n_real]).mean(axis=1, keepdims=True))
        step = np.abs(np.log(new[:, :n_real]) - np.log(gamma[:, :n_real])).max(axis=1)
        gamma = new
        done = step < tolerance
        if done.any() or iterations == max_iterations:
            finished = done | (iterations == max_iterations)
            result[active[finished]] = np.log(gamma[finished, :n_real])
            converged[active[done]] = True
            keep = ~finished
            active, gamma, counts, wins = active[keep], gamma[keep], counts[keep], wins[keep]
    result -= result.mean(axis=1, keepdims=True)
    return result, converged, iterations


def rater_bootstrap_weights(*, n_raters: int, replicates: int, rng) -> np.ndarray:
    """(replicates x n_raters) how often each rater is drawn in n_raters draws with
    replacement (Efron 1979; resampling raters keeps each rater's rankings together)."""
    draws = rng.integers(0, n_raters, size=(replicates, n_raters))
    offsets = (np.arange(replicates) * n_raters)[:, None]
    counts = np.bincount((draws + offsets).ravel(), minlength=replicates * n_raters)
    return counts.reshape(replicates, n_raters).astype(np.float64)
