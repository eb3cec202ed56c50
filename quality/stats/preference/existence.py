"""When does a count set have a finite maximum-likelihood scale (prior = 0)?

The log-likelihoods are concave and at most 0, so a maximum exists (up to the common
shift of all scores) unless some direction of the parameters leaves every observed
outcome's probability from falling: a recession direction (Rockafellar 1970, Sec. 27).
Moving the scores by v (and the tie parameter by w, eta = log nu or kappa = log theta),
the log-probabilities change asymptotically with slopes, each <= 0:

- half-win models (bradley-terry, thurstone): a tie is half a win each way, so no
  direction exists exactly when the directed graph "a beat or tied b" is strongly
  connected (Zermelo 1929; Ford 1957).
- tie models (davidson, rao-kupper), with at least one tie and one decisive judgment:
  w = 0 gives the same graph condition (a tie pins v_a = v_b); w > 0, scaled so that the
  decisive threshold is 1, needs v_winner - v_loser >= 1 for every decisive result and
  |v_a - v_b| <= 1 for every tied pair: difference constraints, feasible exactly when
  their constraint graph has no negative cycle (Bellman-Ford). So the scale exists when
  the graph is strongly connected AND those constraints are infeasible. Example of the
  second: two conditions, x beat y and they tied, y never won: the fit drives x away
  while the tie parameter keeps the tie probability.

Without ties the tie parameter sits at its boundary (nu = 0, theta = 1) and only the
graph condition remains; with no decisive judgment the tie models have no finite fit.
"""

from __future__ import annotations

import math

import numpy as np


def strongly_connected(
    *, forward: np.ndarray, backward: np.ndarray, pair_a, pair_b, n_conditions: int
) -> np.ndarray:
    """Per row: does the graph with edges a -> b where ``forward`` and b -> a where
    ``backward`` ((B, pairs) booleans) connect every condition to every other?"""
    rows = forward.shape[0]
    reach = np.zeros((rows, n_conditions, n_conditions), dtype=np.float32)
    reach[:, pair_a, pair_b] = forward
    reach[:, pair_b, pair_a] = backward
    reach[:, np.arange(n_conditions), np.arange(n_conditions)] = 1.0
    for _ in range(max(1, math.ceil(math.log2(n_conditions)))):  # paths double each time
        reach = (np.matmul(reach, reach) > 0).astype(np.float32)
    return reach.reshape(rows, n_conditions * n_conditions).all(axis=1)


def ties_can_run_off(
    *, wins_a: np.ndarray, wins_b: np.ndarray, ties: np.ndarray, pair_a, pair_b, n_conditions
) -> np.ndarray:
    """Per row: are the difference constraints of the module docstring feasible?

    Constraint x_j - x_i <= c is an edge i -> j of weight c: a beat b gives a -> b of
    weight -1, a tie gives a -> b and b -> a of weight 1 (the smaller weight wins where
    both apply). Bellman-Ford from a virtual source: feasible iff no negative cycle, i.e.
    the distances settle within n_conditions rounds.
    """
    rows = wins_a.shape[0]
    tied = np.where(ties > 0, 1.0, np.inf)
    weight = np.concatenate(
        [np.where(wins_a > 0, -1.0, tied), np.where(wins_b > 0, -1.0, tied)], axis=1
    )
    source = np.concatenate([pair_a, pair_b])
    target = np.concatenate([pair_b, pair_a])
    order = np.argsort(target, kind="stable")
    source, target, weight = source[order], target[order], weight[:, order]
    targets, starts = np.unique(target, return_index=True)
    distance = np.zeros((rows, n_conditions))
    for _ in range(n_conditions + 1):
        arriving = np.minimum.reduceat(distance[:, source] + weight, starts, axis=1)
        relaxed = distance.copy()
        relaxed[:, targets] = np.minimum(distance[:, targets], arriving)
        changed = (relaxed < distance).any(axis=1)
        distance = relaxed
        if not changed.any():
            break
    return ~changed


def scale_exists(*, tie_model: bool, counts: np.ndarray, pair_a, pair_b, n_conditions: int):
    """The rule of the module docstring per row of ``counts`` (B, 3 * pairs)."""
    wins_a, wins_b, ties = np.split(counts, 3, axis=1)
    exists = strongly_connected(
        forward=wins_a + ties > 0,
        backward=wins_b + ties > 0,
        pair_a=pair_a,
        pair_b=pair_b,
        n_conditions=n_conditions,
    )
    if tie_model:
        exists &= (wins_a + wins_b).sum(axis=1) > 0
        has_ties = ties.sum(axis=1) > 0
        # A pair with decisive results both ways is a negative 2-cycle (-1, -1): the
        # constraints are infeasible at once, no Bellman-Ford needed (the usual case).
        pinned = ((wins_a > 0) & (wins_b > 0)).any(axis=1)
        check = np.flatnonzero(exists & has_ties & ~pinned)
        if check.size:
            exists[check] = ~ties_can_run_off(
                wins_a=wins_a[check],
                wins_b=wins_b[check],
                ties=ties[check],
                pair_a=pair_a,
                pair_b=pair_b,
                n_conditions=n_conditions,
            )
    return exists
