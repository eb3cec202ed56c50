"""Active pair choice: the next batch of pairs for many raters at once, under the
Thurstone scale with ties (``scaling.py``), by one of two criteria.

Under the Gaussian posterior N(mu, Sigma) the outcome y of comparing i and j depends on
the scale only through d = s_i - s_j ~ N(mu_i - mu_j, v), v = a^T Sigma a, a = e_i - e_j.

- ``information`` (expected information gain): the mutual information between y and d,

      EIG(i, j) = H(E_d[p(y | d)]) - E_d[H(p(y | d))]

  (Lindley 1956, "On a measure of the information provided by an experiment", Ann.
  Math. Stat. 27(4)), with the expectations over d by Gauss-Hermite quadrature
  (``NODES`` points). It is the criterion ASAP maximises (Mikhailiuk, Wilmot,
  Perez-Ortiz, Yue & Mantiuk 2020, "Active sampling for pairwise comparisons via
  approximate message passing and information gain maximization", ICPR), here with
  three outcomes (ties) and computed exactly for the Gaussian posterior rather than
  through message passing. Being D-optimal in spirit (log det), it favours the pairs
  whose outcome is most uncertain.
- ``variance`` (the default): the expected reduction of the posterior's total variance,
  Bayesian A-optimality (Chaloner & Verdinelli 1995, "Bayesian experimental design: a
  review", Stat. Sci. 10(3)): with w the outcome-free expected Fisher information of the
  judgment (below), the Laplace rank-one update removes

      tr(Sigma) - tr(Sigma') = w ||Sigma a||^2 / (1 + w a^T Sigma a)

  the squared error of the scale a judgment of (i, j) is expected to take away. This
  is what the scale's accuracy (its RMSE) measures, and bench/adaptive.py shows it
  saving more judgments than EIG for the same RMSE at 10, 20 and 30 conditions.

Batches (ASAP's batch mode, Mikhailiuk et al. 2020 Sec. 3.4, after Li et al. 2018's
Hybrid-MST): the pairs of a batch are the edges of the maximum spanning tree of the
complete graph of conditions weighted by the criterion, so every condition is compared
in every batch and along its most useful links. Raters are not kept waiting for each
other's answers: when a batch needs more than one tree, the covariance is first updated
as if the tree's pairs had been judged, with the outcome-free expected Fisher
information w = E_{y,d}[(d/dd log p(y | d))^2] (a Laplace update: Sigma <- Sigma -
w Sigma a a^T Sigma / (1 + w a^T Sigma a)), so the next tree goes to the pairs that
remain uncertain after the pending ones rather than repeating them: the "pending
observations" idea of batch Bayesian optimisation (Desautels, Krause & Burdick 2014,
"Parallelizing exploration-exploitation tradeoffs in Gaussian process bandit
optimization", JMLR 15). The bench compares both criteria with random pairs, with
Swiss-system pairing and with the A-optimal design for the true scale (bench/adaptive.py).

Raters. A rater is shown an unordered pair at most ``repeat_limit`` times (past batches and
this one), and for every condition the counts of being shown on the left and on the right
are kept balanced per rater: the condition that has been on the left more often (for this
rater) goes right; an even case is settled at random.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.sparse import csgraph

from quality.stats.adaptive.scaling import ScalePosterior, outcome_probabilities

NODES = 24
CRITERIA = ("variance", "information")
DEFAULT_CRITERION = "variance"
_HERMITE_X, _HERMITE_W = np.polynomial.hermite.hermgauss(NODES)
_HERMITE_W = _HERMITE_W / np.sqrt(np.pi)


@dataclass(frozen=True)
class PairAssignment:
    """Show ``left`` and ``right`` (condition indices) to ``rater``, in that order."""

    rater: Hashable
    left: int
    right: int


def _entropy(p: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.where(p > 0, p * np.log(p), 0.0).sum(axis=-1)


def _difference_nodes(mean: np.ndarray, variance: np.ndarray) -> np.ndarray:
    return mean[:, None] + np.sqrt(2.0 * np.maximum(variance, 0.0))[:, None] * _HERMITE_X


def information_gain(
    *, mean_difference: np.ndarray, variance: np.ndarray, tie_band: float
) -> np.ndarray:
    """EIG in nats of judging pairs whose difference d ~ N(mean_difference, variance)."""
    d = _difference_nodes(np.asarray(mean_difference, float), np.asarray(variance, float))
    p = outcome_probabilities(d, tie_band)  # pairs x nodes x 3
    marginal = np.einsum("q,pqk->pk", _HERMITE_W, p)
    return np.maximum(_entropy(marginal) - _HERMITE_W @ _entropy(p).T, 0.0)


def expected_fisher_information(
    *, mean_difference: np.ndarray, variance: np.ndarray, tie_band: float
) -> np.ndarray:
    """E over d and y of (d/dd log p(y | d))^2, the weight of a pending judgment."""
    d = _difference_nodes(np.asarray(mean_difference, float), np.asarray(variance, float))
    tau = tie_band
    phi_low = np.exp(-0.5 * (d - tau) ** 2) / np.sqrt(2 * np.pi)
    phi_high = np.exp(-0.5 * (d + tau) ** 2) / np.sqrt(2 * np.pi)
    derivatives = np.stack([phi_low, phi_high - phi_low, -phi_high], axis=-1)  # dp/dd
    p = outcome_probabilities(d, tau)
    with np.errstate(divide="ignore", invalid="ignore"):
        # An outcome of probability 0 (underflow) contributes its limit, 0.
        terms = np.where(p > 0, derivatives**2 / p, 0.0)
    return terms.sum(axis=-1) @ _HERMITE_W


def all_pairs(n_conditions: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(n_conditions, k=1)


def variance_reduction(
    *, mean: np.ndarray, covariance: np.ndarray, first, second, tie_band: float
) -> np.ndarray:
    """Expected drop of tr(Sigma) from one judgment of each pair (first[k], second[k]):
    w ||Sigma a||^2 / (1 + w a^T Sigma a) (module docstring)."""
    first, second = np.asarray(first), np.asarray(second)
    diagonal = np.diag(covariance)
    variance = diagonal[first] + diagonal[second] - 2.0 * covariance[first, second]
    weight = expected_fisher_information(
        mean_difference=mean[first] - mean[second], variance=variance, tie_band=tie_band
    )
    squared = covariance @ covariance  # ||Sigma a||^2 = a^T Sigma^2 a
    spread = np.diag(squared)[first] + np.diag(squared)[second] - 2.0 * squared[first, second]
    return weight * spread / (1.0 + weight * variance)


def _gain_of(mean, covariance, first, second, tau, criterion) -> np.ndarray:
    if criterion == "variance":
        return variance_reduction(
            mean=mean, covariance=covariance, first=first, second=second, tie_band=tau
        )
    diagonal = np.diag(covariance)
    variance = diagonal[first] + diagonal[second] - 2.0 * covariance[first, second]
    return information_gain(
        mean_difference=mean[first] - mean[second], variance=variance, tie_band=tau
    )


def spanning_pairs(
    *,
    mean,
    covariance,
    tie_band: float,
    rng: np.random.Generator | None = None,
    criterion: str = DEFAULT_CRITERION,
) -> list[tuple[int, int]]:
    """ASAP's batch: the maximum spanning tree of the complete graph of conditions with the
    pairs' gains (``criterion``) as weights (a minimum spanning tree over 1 / gain),
    highest gain first. ``rng`` breaks exact ties between equal gains (at the start all
    pairs are equal, and without it the tree would be a star around condition 0)."""
    size = mean.size
    first, second = all_pairs(size)
    gain = _gain_of(mean, covariance, first, second, tie_band, criterion)
    if rng is not None:
        gain = gain * (1.0 + 1e-9 * rng.random(gain.size))
    weight = 1.0 / np.maximum(gain, 1e-300)  # > 0: a zero would read as "no edge"
    graph = sparse.coo_matrix((weight, (first, second)), shape=(size, size)).tocsr()
    tree = csgraph.minimum_spanning_tree(graph).tocoo()
    edges = sorted(
        zip(tree.row.tolist(), tree.col.tolist(), strict=True),
        key=lambda edge: -1.0 / graph[min(edge), max(edge)],
    )
    return [(min(i, j), max(i, j)) for i, j in edges]


def choose_pairs(
    *,
    posterior: ScalePosterior,
    requests: Mapping[Hashable, int],
    history: Iterable[tuple[Hashable, int, int]] = (),
    repeat_limit: int = 1,
    seed: int | None = None,
    criterion: str = DEFAULT_CRITERION,
) -> list[PairAssignment]:
    """The next pairs for every rater in ``requests`` ({rater: how many pairs}) at once,
    by ``criterion`` (``CRITERIA``, module docstring).

    ``history`` lists (rater, left, right) of every pair already shown (answered or not),
    for the repeat limit and the left/right balance. Raters are served in turns, one slot
    each per turn, so that a rater asking for many pairs does not take all the best ones;
    each takes the first pair of the current spanning tree that it may still see, or,
    when none is left for it, the allowed pair of highest gain. A rater who has seen every
    pair ``repeat_limit`` times gets fewer than requested.
    """
    if repeat_limit < 1:
        raise ValueError("repeat_limit must be at least 1")
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {', '.join(CRITERIA)}")
    size = posterior.n_conditions
    if size < 2:
        raise ValueError("need at least two conditions")
    first, second = all_pairs(size)
    pair_index = {(int(i), int(j)): k for k, (i, j) in enumerate(zip(first, second, strict=True))}
    seen: dict[Hashable, Counter] = defaultdict(Counter)  # rater -> pair index -> times
    leftness: dict[Hashable, np.ndarray] = defaultdict(lambda: np.zeros(size, dtype=np.int64))
    for rater, left, right in history:
        seen[rater][pair_index[(min(left, right), max(left, right))]] += 1
        leftness[rater][left] += 1
        leftness[rater][right] -= 1
    rng = np.random.default_rng(seed)
    mean = posterior.mean
    covariance = posterior.covariance.copy()
    tau = posterior.tie_band
    remaining = {rater: int(count) for rater, count in requests.items() if count > 0}
    tree: list[tuple[int, int]] = []
    chosen: list[PairAssignment] = []
    while remaining:
        for rater in list(remaining):
            if not tree:
                tree = spanning_pairs(
                    mean=mean, covariance=covariance, tie_band=tau, rng=rng, criterion=criterion
                )
                for i, j in tree:  # the next tree goes where these leave most uncertain
                    covariance = _pending_update(covariance, mean, i, j, tau)
            pick = next((e for e in tree if seen[rater][pair_index[e]] < repeat_limit), None)
            if pick is not None:
                tree.remove(pick)
            else:
                allowed = np.array(
                    [seen[rater][k] < repeat_limit for k in range(first.size)], dtype=bool
                )
                if not allowed.any():
                    del remaining[rater]
                    continue
                gain = _gain_of(mean, covariance, first, second, tau, criterion)
                best = int(np.flatnonzero(allowed)[np.argmax(gain[allowed])])
                pick = (int(first[best]), int(second[best]))
                covariance = _pending_update(covariance, mean, *pick, tau)
            i, j = pick
            balance = leftness[rater][i] - leftness[rater][j]
            if balance > 0 or (balance == 0 and rng.random() < 0.5):
                i, j = j, i
            chosen.append(PairAssignment(rater=rater, left=i, right=j))
            seen[rater][pair_index[pick]] += 1
            leftness[rater][i] += 1
            leftness[rater][j] -= 1
            remaining[rater] -= 1
            if remaining[rater] == 0:
                del remaining[rater]
    return chosen


def with_pending(posterior: ScalePosterior, pairs: Iterable[tuple[int, int]]) -> ScalePosterior:
    """The posterior as if the given pairs, shown and not yet answered (other raters'
    sessions in flight), had been judged: the pending update below per pair, the mean
    unchanged, so the next choice goes where those answers will not already reach."""
    covariance = posterior.covariance.copy()
    for i, j in pairs:
        covariance = _pending_update(covariance, posterior.mean, int(i), int(j), posterior.tie_band)
    return ScalePosterior(mean=posterior.mean, covariance=covariance, tie_band=posterior.tie_band)


def _pending_update(covariance, mean, i, j, tau) -> np.ndarray:
    """Sigma after a pending judgment of (i, j): the Laplace rank-one update (docstring)."""
    column = covariance[:, i] - covariance[:, j]  # Sigma a
    variance = column[i] - column[j]  # a^T Sigma a
    weight = float(
        expected_fisher_information(
            mean_difference=np.array([mean[i] - mean[j]]),
            variance=np.array([variance]),
            tie_band=tau,
        )[0]
    )
    return covariance - np.outer(column, column) * (weight / (1.0 + weight * variance))
