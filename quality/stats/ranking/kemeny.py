"""The exact Kemeny consensus ranking, by dynamic programming over subsets.

Kemeny (1959), "Mathematics without numbers", Daedalus 88: the consensus of a set of
rankings is the strict order pi with the least total Kendall tau distance to them. With
ties in the rankings the distance is Fagin et al.'s K^(1/2) (2006, "Comparing partial
rankings", SIAM J. Discrete Math. 20): a pair ordered one way by pi and the other way by a
ranking costs 1, a pair the ranking ties costs 1/2 whatever pi does (so ties do not move
the optimum, only the distance).

Only the pairwise matrix W[i, j] = number (or weight) of rankings placing i strictly above
j matters. Placing j first among a set T of still-unplaced conditions costs
A(T, j) = sum_{t in T} W[t, j] (each t in T then comes after j), so with g(empty) = 0

    g(T) = min_{j in T} A(T, j) + g(T - {j}),     distance = g(all) + ties / 2,

the Held-Karp style recursion (Held & Karp 1962) used for Kemeny aggregation by e.g.
Betzler et al. (2009, "Fixed-parameter algorithms for Kemeny rankings", Theor. Comput.
Sci. 410): O(2^N N^2) time, O(2^N) memory. The subsets are processed by size, each size
as one vectorised step. The number of optimal orders follows the same recursion (the sum
of the counts over the minimising j), so non-uniqueness is detected exactly.

Among several optimal orders the one reported is the first in the order of ``preference``
(the best-preferred condition first wherever an optimal completion allows it); callers
pass Borda score then condition id. A second optimal order (``alternative``) is read off
the first step of that walk where another condition could also go first.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

# Subset-values kept per DP chunk (batch x 2^N): bounds the memory of ``kemeny_orders``.
_CHUNK_VALUES = 1 << 21


@dataclass(frozen=True)
class KemenyConsensus:
    """order: condition indices best first; rank[c]: 1-based place of condition c;
    distance: total K^(1/2) Kendall distance to the rankings; n_optimal: how many orders
    attain it; alternative: another optimal order when n_optimal > 1, else None."""

    order: tuple[int, ...]
    rank: np.ndarray
    distance: float
    n_optimal: int
    alternative: tuple[int, ...] | None

    @property
    def unique(self) -> bool:
        return self.n_optimal == 1


def pairwise_wins(level: np.ndarray, *, weights: np.ndarray | None = None) -> np.ndarray:
    """W[i, j] = (weighted) number of rankings placing i strictly above j, from
    (rankings x N) tie-group levels (0 = best)."""
    level = np.asarray(level)
    above = (level[:, :, None] < level[:, None, :]).astype(np.float64)
    if weights is None:
        return above.sum(axis=0)
    return np.tensordot(np.asarray(weights, float), above, axes=1)


def tied_pairs(level: np.ndarray, *, weights: np.ndarray | None = None) -> float:
    """(Weighted) number of (ranking, pair) ties."""
    level = np.asarray(level)
    i, j = np.triu_indices(level.shape[1], k=1)
    per_ranking = (level[:, i] == level[:, j]).sum(axis=1)
    return float(per_ranking.sum() if weights is None else np.dot(weights, per_ranking))


@lru_cache(maxsize=4)
def _subsets_by_size(n: int) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...]:
    """Per size s = 1..n: the subsets T of that size, the position of T minus its lowest
    member among the subsets of size s - 1, and that lowest member."""
    masks = np.arange(1 << n, dtype=np.int64)
    sizes = np.bitwise_count(masks)
    order = np.argsort(sizes, kind="stable")
    bounds = np.searchsorted(sizes[order], np.arange(n + 2))
    position = np.empty(1 << n, dtype=np.int64)
    layers = []
    for s in range(n + 1):
        subsets = order[bounds[s] : bounds[s + 1]]
        position[subsets] = np.arange(subsets.size)
        if s:
            lowest = subsets & -subsets
            layers.append((subsets, position[subsets ^ lowest], np.bitwise_count(lowest - 1)))
    return tuple(layers)


def _tolerance(wins: np.ndarray) -> float:
    # W holds counts (exact in float64) or weights: equal costs within this are ties.
    return 1e-9 * max(1.0, float(np.abs(wins).sum()))


def _solve(wins: np.ndarray, *, count: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """g (2^N x batch) for (batch x N x N) W, and the number of optimal orders of every
    subset when ``count``. The batch is the last axis so that each subset's values are
    one contiguous block for the gathers."""
    batch, n, _ = wins.shape
    by_row = np.ascontiguousarray(wins.transpose(1, 2, 0))  # (N, N, batch)
    bit = np.int64(1) << np.arange(n, dtype=np.int64)
    g = np.full((1 << n, batch), np.inf)
    g[0] = 0.0
    ways = None
    if count:
        ways = np.zeros((1 << n, batch), dtype=np.int64)
        ways[0] = 1
    tolerance = _tolerance(wins)
    first_cost = np.zeros((1, n, batch))  # A(empty set, j) = 0
    for subsets, without_lowest, lowest in _subsets_by_size(n):
        # A(T, j) = A(T - {t}, j) + W[t, j] for T's lowest member t: O(N) per subset.
        first_cost = first_cost[without_lowest] + by_row[lowest]
        rest = subsets[:, None] ^ bit  # T - {j}; a larger set, still inf, where j not in T
        cost = first_cost + g[rest]
        best = cost.min(axis=1)
        g[subsets] = best
        if ways is not None:
            ties = cost <= best[:, None] + tolerance
            ways[subsets] = (ways[rest] * ties).sum(axis=1)
    return g, ways


def _walk(
    wins: np.ndarray, g: np.ndarray, preference: np.ndarray, branch: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Optimal orders (batch x N) read from g front to back, each step taking the most
    preferred condition that can go first. With ``branch``, the first step that has a choice
    takes its second-preferred condition instead (an alternative optimum); returns the
    orders and whether such a step existed."""
    batch, n, _ = wins.shape
    bit = np.int64(1) << np.arange(n, dtype=np.int64)
    rows = np.arange(batch)
    remaining = np.full(batch, (1 << n) - 1, dtype=np.int64)
    orders = np.empty((batch, n), dtype=np.int64)
    branched = np.zeros(batch, dtype=bool)
    tolerance = _tolerance(wins)
    for step in range(n):
        inside = (remaining[:, None] & bit) != 0
        first_cost = np.einsum("bt,btj->bj", inside.astype(np.float64), wins)
        after = g[remaining[:, None] ^ bit, rows[:, None]]
        cost = np.where(inside, first_cost + after, np.inf)
        ties = cost <= cost.min(axis=1, keepdims=True) + tolerance
        ranked = np.where(ties, preference, np.iinfo(np.int64).max)
        choice = np.argmin(ranked, axis=1)
        if branch:
            take_second = ~branched & (ties.sum(axis=1) > 1)
            ranked[rows, choice] = np.iinfo(np.int64).max
            choice = np.where(take_second, np.argmin(ranked, axis=1), choice)
            branched |= take_second
        orders[:, step] = choice
        remaining ^= bit[choice]
    return orders, branched


def _preference(preference: np.ndarray | None, shape: tuple[int, ...]) -> np.ndarray:
    if preference is None:
        return np.broadcast_to(np.arange(shape[-1], dtype=np.int64), shape)
    return np.broadcast_to(np.asarray(preference, dtype=np.int64), shape)


def kemeny_consensus(
    *, wins: np.ndarray, preference: np.ndarray | None = None, ties: float = 0.0
) -> KemenyConsensus:
    """The exact Kemeny consensus of the rankings summarised by W (``pairwise_wins``).

    preference[c]: tie-break position of condition c among optimal orders (0 = first;
    default: index order). ties: (weighted) number of tied (ranking, pair)s, each adding
    1/2 to the distance (``tied_pairs``).
    """
    wins = np.asarray(wins, dtype=np.float64)[None]
    n = wins.shape[1]
    g, ways = _solve(wins, count=True)
    preference = _preference(preference, (1, n))
    orders, _ = _walk(wins, g, preference, branch=False)
    n_optimal = int(ways[-1, 0])
    alternative = None
    if n_optimal > 1:
        other, _ = _walk(wins, g, preference, branch=True)
        alternative = tuple(int(c) for c in other[0])
    order = tuple(int(c) for c in orders[0])
    rank = np.empty(n, dtype=np.int64)
    rank[list(order)] = np.arange(1, n + 1)
    return KemenyConsensus(
        order=order,
        rank=rank,
        distance=float(g[-1, 0]) + ties / 2.0,
        n_optimal=n_optimal,
        alternative=alternative,
    )


def kemeny_orders(*, wins: np.ndarray, preference: np.ndarray | None = None) -> np.ndarray:
    """The consensus orders (batch x N, best first) of a batch of W matrices (batch x N x N)
    with per-matrix preferences (batch x N), as ``kemeny_consensus`` would pick them; in
    chunks so that memory stays bounded."""
    wins = np.asarray(wins, dtype=np.float64)
    batch, n, _ = wins.shape
    preference = _preference(preference, (batch, n))
    chunk = max(1, _CHUNK_VALUES >> n)
    orders = np.empty((batch, n), dtype=np.int64)
    for start in range(0, batch, chunk):
        part = slice(start, start + chunk)
        g, _ = _solve(wins[part], count=False)
        orders[part], _ = _walk(wins[part], g, preference[part], branch=False)
    return orders
