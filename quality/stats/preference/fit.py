"""Fitting a paired-comparison model to many count sets at once (the point estimate and
every bootstrap replicate): a batched, damped Newton iteration on the penalised
log-likelihood

    L(s, tau) - (prior / 2) sum_i s_i^2,

L from ``quality.stats.preference.models``; the Gaussian prior N(0, 1 / prior) on each
score (in the model's units) keeps a condition that never loses (or never wins) finite
and, the likelihood depending on differences only, puts the optimum at mean score 0. With
prior = 0 this is the plain maximum-likelihood scale (for Bradley-Terry: what
``choix.opt_pairwise`` gives on the half-win data), centred to mean 0.

Each step solves (M + 1 1^T) delta = g for every replicate, M the negative Hessian, the
1 1^T block on the scores making the system regular with prior = 0 (the likelihood is
flat along 1, and g and delta stay orthogonal to it); a step is halved until it gains at
least 1e-4 of the predicted increase (Armijo), which with the concave likelihoods makes
the iteration converge from any start. A step below 1e-4 in every parameter is taken
whole: there the quadratic model is exact to far below the step, the gain is certain,
and comparing objectives of some 1e5 would only compare their rounding. A replicate
stops when its full Newton step is below ``STEP_TOLERANCE`` (1e-8, in the model's units,
tie parameter included) in every parameter; Newton converging quadratically, its error
after that step is of the order of the step squared.

With prior = 0 a count set without a finite maximum-likelihood scale (the exact rule is
in ``quality.stats.preference.existence``) gets NaN scores. For the tie models an
all-ties count set with a prior has scores 0 and an infinite tie parameter (the
supremum), and a count set without ties has the tie parameter at its boundary (nu = 0,
theta = 1: plain Bradley-Terry on the decisive judgments).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from quality.stats.preference.existence import scale_exists
from quality.stats.preference.models import PairModel, PairTerms, Work

STEP_TOLERANCE = 1e-8
MAX_ITERATIONS = 200
_ARMIJO = 1e-4
_MAX_HALVINGS = 60
_TINY_STEP = 1e-4  # steps below this are taken whole (module docstring)


@dataclass(frozen=True, eq=False)
class BatchFit:
    """Fits of B count sets to C conditions.

    scores: (B, C), mean 0 per row, NaN where the scale is undefined or did not converge;
    tie: (B,) the reported tie parameter (nu, theta; NaN for half-win models); tie_internal:
    its internal value (a warm start for other fits); loglik: (B,) the plain (unpenalised)
    log-likelihood; defined: the existence check passed; converged: the iteration met the
    tolerance; iterations: the most Newton steps any count set took.
    """

    scores: np.ndarray
    tie: np.ndarray
    tie_internal: np.ndarray
    loglik: np.ndarray
    defined: np.ndarray
    converged: np.ndarray
    iterations: int


def incidence(*, pair_a: np.ndarray, pair_b: np.ndarray, n_conditions: int) -> np.ndarray:
    """(pairs, conditions): +1 at a, -1 at b, so that d = s @ incidence.T."""
    matrix = np.zeros((pair_a.size, n_conditions))
    matrix[np.arange(pair_a.size), pair_a] = 1.0
    matrix[np.arange(pair_a.size), pair_b] = -1.0
    return matrix


class _Problem:
    """The counts and structure shared by every Newton step of one batched fit."""

    def __init__(self, model, counts, pair_a, pair_b, n_conditions, prior):
        self.model, self.prior = model, prior
        self.raw = np.split(counts, 3, axis=1)  # wins_a, wins_b, ties
        self.counts = model.prepare(*self.raw)
        self.pair_a, self.pair_b, self.n = pair_a, pair_b, n_conditions
        self.incidence = incidence(pair_a=pair_a, pair_b=pair_b, n_conditions=n_conditions)
        self.incidence_t = np.ascontiguousarray(self.incidence.T)
        self.degree = np.abs(self.incidence)
        self.has_tie = model.tie_parameter is not None
        shape = (counts.shape[0], pair_a.size)
        # Arrays reused by every step (models.Work): 3 + d scratch, 2 slots of 2 outputs.
        self._scratch = [np.empty(shape) for _ in range(4)]
        self._slots = [[np.empty(shape) for _ in range(2)] for _ in range(2)]

    def terms(self, counts, scores, tie, *, derivatives: bool, slot: int | None = None):
        """The model's terms and the penalised objective at (scores, tie), per row; with a
        ``slot`` (0 or 1) the derivatives live in that slot's reused arrays, valid until
        the slot is used again."""
        shape = (scores.shape[0], self.pair_a.size)
        work = None
        if slot is not None:
            work = Work(self._scratch, self._slots[slot], shape)
        d = np.matmul(
            scores, self.incidence_t, out=None if work is None else self._scratch[3][: shape[0]]
        )
        terms = self.model.terms(d, tie[:, None], counts, derivatives=derivatives, work=work)
        penalised = terms.loglik - self.prior / 2 * np.einsum("bc,bc->b", scores, scores)
        return terms, penalised

    def newton_step(self, terms, scores, free_tie):
        """The Newton direction for every row, (scores delta, tie delta) and g . delta."""
        rows, n = scores.shape[0], self.n
        size = n + 1 if self.has_tie else n
        gradient = np.empty((rows, size))
        gradient[:, :n] = terms.d @ self.incidence - self.prior * scores
        # M = -Hessian, plus 1 1^T on the scores; d2L/ds_a ds_b = -dd, so M_ab = dd.
        system = np.ones((rows, size * size))
        off_diagonal = terms.dd + 1.0
        system[:, self.pair_a * size + self.pair_b] = off_diagonal
        system[:, self.pair_b * size + self.pair_a] = off_diagonal
        system[:, np.arange(n) * (size + 1)] = 1.0 + self.prior - terms.dd @ self.degree
        system = system.reshape(rows, size, size)
        if self.has_tie:
            cross = -(terms.d_tie @ self.incidence)
            cross[~free_tie] = 0.0
            system[:, :n, n] = cross
            system[:, n, :n] = cross
            system[:, n, n] = np.where(free_tie, -terms.tie_tie, 1.0)
            gradient[:, n] = np.where(free_tie, terms.tie, 0.0)
        delta = np.linalg.solve(system, gradient[..., None])[..., 0]
        slope = np.einsum("bk,bk->b", gradient, delta)
        if self.has_tie:
            return delta[:, :n], delta[:, n], slope
        return delta, np.zeros(rows), slope


def _rows(terms: PairTerms, rows) -> PairTerms:
    return PairTerms(**{f.name: _pick(getattr(terms, f.name), rows) for f in fields(PairTerms)})


def _pick(values, rows):
    return None if values is None else values[rows]


def _put(terms: PairTerms, rows, other: PairTerms) -> None:
    for f in fields(PairTerms):
        target = getattr(terms, f.name)
        if target is not None:
            target[rows] = getattr(other, f.name)


def fit_batch(
    *,
    model: PairModel,
    counts: np.ndarray,
    pair_a: np.ndarray,
    pair_b: np.ndarray,
    n_conditions: int,
    prior: float,
    start_scores: np.ndarray | None = None,
    start_tie: float | None = None,
) -> BatchFit:
    """Fit ``model`` to each row of ``counts`` (B, 3 * pairs; ``QuestionCounts`` layout).

    ``start_scores`` (C,) and ``start_tie`` (internal) warm-start every row, e.g. the
    bootstrap from the point estimate; the result does not depend on them beyond the
    tolerance.
    """
    counts = np.atleast_2d(np.asarray(counts, dtype=np.float64))
    rows = counts.shape[0]
    problem = _Problem(model, counts, pair_a, pair_b, n_conditions, prior)
    scores = np.full((rows, n_conditions), np.nan)
    tie = np.full(rows, np.nan)
    loglik = np.full(rows, np.nan)
    converged = np.zeros(rows, dtype=bool)
    if prior == 0:
        defined = scale_exists(
            tie_model=model.tie_parameter is not None,
            counts=counts,
            pair_a=pair_a,
            pair_b=pair_b,
            n_conditions=n_conditions,
        )
    else:
        defined = np.ones(rows, dtype=bool)
    free_tie = np.zeros(rows, dtype=bool)
    if problem.has_tie:
        wins_a, wins_b, ties = problem.raw
        decisive = (wins_a + wins_b).sum(axis=1)
        tie_total = ties.sum(axis=1)
        all_ties = defined & (decisive == 0)
        scores[all_ties], tie[all_ties], loglik[all_ties] = 0.0, np.inf, 0.0
        converged[all_ties] = True
        free_tie = tie_total > 0
        with np.errstate(invalid="ignore"):
            tie_share = tie_total / (decisive + tie_total)
        tie = np.where(all_ties, np.inf, model.tie_start(np.where(free_tie, tie_share, 0.0)))
        if start_tie is not None and np.isfinite(start_tie):
            tie = np.where(free_tie & ~all_ties, start_tie, tie)
        todo = defined & ~all_ties
    else:
        tie = np.zeros(rows)
        todo = defined.copy()
    start = np.zeros(n_conditions) if start_scores is None else np.asarray(start_scores, float)
    scores[todo] = start - start.mean()
    iterations = _newton(problem, scores, tie, free_tie, converged, np.flatnonzero(todo))
    final = np.flatnonzero(converged & todo)
    if final.size:
        counts_final = [c[final] for c in problem.counts]
        terms, _ = problem.terms(counts_final, scores[final], tie[final], derivatives=False)
        loglik[final] = terms.loglik
    scores[~converged] = np.nan
    tie_internal = np.where(converged, tie, np.nan) if problem.has_tie else np.full(rows, np.nan)
    reported = model.tie_report(tie_internal) if problem.has_tie else tie_internal
    return BatchFit(
        scores=scores,
        tie=reported,
        tie_internal=tie_internal,
        loglik=loglik,
        defined=defined,
        converged=converged,
        iterations=iterations,
    )


def _newton(problem, scores, tie, free_tie, converged, active) -> int:
    """Iterate the rows ``active`` in place until each meets the tolerance.

    The objective and derivatives at an accepted point serve the next step, so a step
    costs one model evaluation unless it has to be halved.
    """
    iterations = 0
    s, t, free = scores[active], tie[active], free_tie[active]
    counts = [c[active] for c in problem.counts]
    slot = 0  # the current point's derivatives live in this slot, a trial's in the other
    terms, value = problem.terms(counts, s, t, derivatives=True, slot=slot)
    while active.size and iterations < MAX_ITERATIONS:
        iterations += 1
        delta_s, delta_t, slope = problem.newton_step(terms, s, free)
        largest = np.maximum(np.abs(delta_s).max(axis=1), np.abs(delta_t))
        done = largest < STEP_TOLERANCE
        if done.any():
            finished = active[done]
            final_s = s[done] + delta_s[done]
            scores[finished] = final_s - final_s.mean(axis=1, keepdims=True)
            tie[finished] = t[done] + delta_t[done]
            converged[finished] = True
            go_on = ~done
            active, s, t, free = active[go_on], s[go_on], t[go_on], free[go_on]
            delta_s, delta_t, slope, largest = (
                delta_s[go_on],
                delta_t[go_on],
                slope[go_on],
                largest[go_on],
            )
            counts = [c[go_on] for c in counts]
            terms, value = _rows(terms, go_on), value[go_on]
            if not active.size:
                break
        step = np.ones(active.size)
        new_s, new_t = s + delta_s, t + delta_t
        slot = 1 - slot
        new_terms, new_value = problem.terms(counts, new_s, new_t, derivatives=True, slot=slot)
        pending = np.flatnonzero(~_accepted(new_value, value, slope, step, largest))
        for _ in range(_MAX_HALVINGS):
            if not pending.size:
                break
            step[pending] /= 2
            new_s[pending] = s[pending] + step[pending, None] * delta_s[pending]
            new_t[pending] = t[pending] + step[pending] * delta_t[pending]
            retry, retry_value = problem.terms(
                [c[pending] for c in counts], new_s[pending], new_t[pending], derivatives=True
            )
            _put(new_terms, pending, retry)
            new_value[pending] = retry_value
            ok = _accepted(
                retry_value, value[pending], slope[pending], step[pending], largest[pending]
            )
            pending = pending[~ok]
        if pending.size:  # no better point along the step: stay (a later step may move)
            new_s[pending], new_t[pending] = s[pending], t[pending]
            _put(new_terms, pending, _rows(terms, pending))
            new_value[pending] = value[pending]
        shift = new_s.mean(axis=1, keepdims=True)  # only prior = 0 can drift along 1
        s, t, terms, value = new_s - shift, new_t, new_terms, new_value
        scores[active], tie[active] = s, t
    return iterations


def _accepted(new_value, value, slope, step, largest) -> np.ndarray:
    """Armijo's rule, or a step so small that rounding hides its gain."""
    return np.isfinite(new_value) & (
        (new_value >= value + _ARMIJO * step * slope) | (step * largest < _TINY_STEP)
    )
