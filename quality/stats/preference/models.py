"""The paired-comparison models: each judgment of the pair (a, b) depends only on the
score difference d = s_a - s_b (and a tie parameter where the model has one).

Every ``*_terms`` function takes the differences ``d`` (replicates, pairs), the tie
parameter (replicates, 1) in its internal form and the counts as its ``*_prepare``
function arranged them from wins_a, wins_b and ties (replicates, pairs), and returns the
log-likelihood per replicate and, with ``derivatives``, its first and second derivatives
per pair (for d) and per replicate (for the tie parameter), which
``quality.stats.preference.fit`` assembles into batched Newton steps.

- ``bradley-terry``: P(a over b) = 1 / (1 + exp(-d)) (Bradley & Terry 1952), s = natural
  log of the strength. A tie counts as half a win each way (the arenas' convention), so
  the likelihood is the "half-win" one, sum (w_a + t/2) log p + (w_b + t/2) log(1 - p).
- ``davidson`` (Davidson 1970): P(a) : P(b) : P(tie) = pi_a : pi_b : nu sqrt(pi_a pi_b),
  pi = exp(s); internal tie parameter eta = log nu.
- ``rao-kupper`` (Rao & Kupper 1967): P(a over b) = pi_a / (pi_a + theta pi_b), a tie
  otherwise, theta >= 1; written as a logistic threshold model, P(a) = sigma(d - kappa),
  P(b) = sigma(-d - kappa), kappa = log theta (internal) > 0.
- ``thurstone``: Thurstone (1927) Case V in JOD units as in pwcmp (Perez-Ortiz & Mantiuk
  2017): P(a over b) = Phi(d / sigma) with sigma = 1 / Phi^-1(0.75) = 1.4826, so that a
  difference of 1 JOD means 75 % prefer a; ties count as half a win each way.

Both tie models' log-likelihoods are jointly concave in (s, internal tie parameter):
Davidson's log-normaliser is a log-sum-exp of linear functions, Rao-Kupper's outcome
probabilities are intervals of the log-concave logistic density (Pratt 1981).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import log_ndtr, ndtri

# Phi^-1(0.75): a difference of 1 JOD is 0.6745 standard deviations of the Case V noise.
JOD_Z = float(ndtri(0.75))
_LOG_SQRT_2PI = 0.5 * np.log(2 * np.pi)


@dataclass(frozen=True, eq=False)
class PairTerms:
    """Log-likelihood (per replicate) and its derivatives (see the module docstring).

    ``d``/``dd``: dL/dd and d2L/dd2 per pair; ``tie``/``tie_tie``: dL/dtau and d2L/dtau2
    per replicate; ``d_tie``: d2L/(dd dtau) per pair. Derivatives are None when not asked
    for; the tie ones are None for models without a tie parameter.
    """

    loglik: np.ndarray
    d: np.ndarray | None = None
    dd: np.ndarray | None = None
    tie: np.ndarray | None = None
    tie_tie: np.ndarray | None = None
    d_tie: np.ndarray | None = None


class Work:
    """Reusable (rows, pairs) arrays for the hot loop of a batched fit.

    A fresh array of replicates x pairs (some 3.5 MB) costs more in page faults than the
    arithmetic on it, so the fit hands the Bradley-Terry terms (the default model, the
    one the benchmark times) views into arrays it allocated once: ``scratch(i)`` for
    temporaries, ``out(i)`` for the derivatives that must outlive the call. Without a
    pool (``Work(None, None, shape)``) every request is a new array.
    """

    def __init__(self, scratch: list | None, out: list | None, shape: tuple[int, int]):
        self._scratch, self._out, self.shape = scratch, out, shape

    def scratch(self, i: int) -> np.ndarray:
        if self._scratch is None:
            return np.empty(self.shape)
        return self._scratch[i][: self.shape[0]]

    def out(self, i: int) -> np.ndarray:
        if self._out is None:
            return np.empty(self.shape)
        return self._out[i][: self.shape[0]]


def _softplus_sigmoid(x: np.ndarray, work: Work | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(log(1 + exp(x)), 1 / (1 + exp(-x))) from one exp, without overflow; the sigmoid
    is exact to 1e-16 absolute (not relative) far in its lower tail, which the
    derivatives, weighted by counts, do not feel."""
    work = work or Work(None, None, x.shape)
    e, softplus, sigmoid = work.scratch(0), work.scratch(1), work.scratch(2)
    np.abs(x, out=e)
    np.negative(e, out=e)
    np.exp(e, out=e)  # exp(-|x|)
    np.log1p(e, out=softplus)
    np.maximum(x, 0.0, out=sigmoid)
    softplus += sigmoid
    np.add(e, 1.0, out=sigmoid)
    np.reciprocal(sigmoid, out=sigmoid)  # sigmoid(|x|)
    sigmoid -= 0.5
    np.copysign(sigmoid, x, out=sigmoid)
    sigmoid += 0.5
    return softplus, sigmoid


def half_win_counts(wins_a, wins_b, ties):
    """(w_a + t/2, w_b + t/2): a tie as half a win each way."""
    return wins_a + ties / 2, wins_b + ties / 2


def bradley_terry_prepare(wins_a, wins_b, ties):
    half_a, half_b = half_win_counts(wins_a, wins_b, ties)
    return half_a, half_a + half_b


def bradley_terry_terms(d, tie, counts, *, derivatives: bool, work=None) -> PairTerms:
    # L = -(h_a softplus(-d) + h_b softplus(d)) = h_a d - n softplus(d).
    half_a, n = counts
    work = work or Work(None, None, d.shape)
    softplus, p = _softplus_sigmoid(d, work)
    loglik = np.vecdot(half_a, d) - np.vecdot(n, softplus)
    if not derivatives:
        return PairTerms(loglik=loglik)
    slope = np.multiply(n, p, out=work.out(0))
    np.subtract(half_a, slope, out=slope)
    curve = np.subtract(p, 1.0, out=work.out(1))
    curve *= p
    curve *= n
    return PairTerms(loglik=loglik, d=slope, dd=curve)


def thurstone_prepare(wins_a, wins_b, ties):
    return half_win_counts(wins_a, wins_b, ties)


def thurstone_terms(d, tie, counts, *, derivatives: bool, work=None) -> PairTerms:
    half_a, half_b = counts
    x = d * JOD_Z
    log_cdf_a, log_cdf_b = log_ndtr(x), log_ndtr(-x)
    loglik = np.einsum("bp,bp->b", half_a, log_cdf_a) + np.einsum("bp,bp->b", half_b, log_cdf_b)
    if not derivatives:
        return PairTerms(loglik=loglik)
    log_pdf = -0.5 * x * x - _LOG_SQRT_2PI
    mills_a, mills_b = np.exp(log_pdf - log_cdf_a), np.exp(log_pdf - log_cdf_b)
    return PairTerms(
        loglik=loglik,
        d=JOD_Z * (half_a * mills_a - half_b * mills_b),
        dd=-(JOD_Z**2) * (half_a * mills_a * (x + mills_a) + half_b * mills_b * (mills_b - x)),
    )


def davidson_prepare(wins_a, wins_b, ties):
    return wins_a - wins_b, wins_a + wins_b + ties, ties.sum(axis=1)


def davidson_terms(d, eta, counts, *, derivatives: bool, work=None) -> PairTerms:
    # With h = d / 2: P(a), P(b), P(tie) = exp(h), exp(-h), nu over D = 2 cosh(h) + nu
    # = exp(|h|) S, S = 1 + e^2 + nu e, e = exp(-|h|): one exp and one log1p.
    difference, n, tie_total = counts
    half = d / 2
    size = np.abs(half)
    e = np.exp(-size)
    nu_e = np.exp(eta) * e
    rest = e * e + nu_e
    log_norm = size + np.log1p(rest)
    with np.errstate(invalid="ignore"):  # eta = -inf (nu = 0) where there is no tie
        tie_part = np.where(tie_total > 0, tie_total * eta[:, 0], 0.0)
    loglik = np.einsum("bp,bp->b", difference, half) - np.einsum("bp,bp->b", n, log_norm)
    loglik += tie_part
    if not derivatives:
        return PairTerms(loglik=loglik)
    r = 1.0 / (1.0 + rest)
    q_tie = nu_e * r
    # The larger of P(a), P(b) is r, the smaller e^2 r; their sum and signed gap:
    both = r * (1.0 + e * e)
    gap = np.copysign(r * (1.0 - e * e), half)
    # log D is a log-sum-exp: its Hessian is the covariance of the coefficient vectors
    # (1/2, 0), (-1/2, 0), (0, 1) under (P(a), P(b), P(tie)).
    return PairTerms(
        loglik=loglik,
        d=difference / 2 - n * gap / 2,
        dd=-n * (both - gap * gap) / 4,
        tie=tie_total - np.einsum("bp,bp->b", n, q_tie),
        tie_tie=-np.einsum("bp,bp->b", n, q_tie * (1 - q_tie)),
        d_tie=n * q_tie * gap / 2,
    )


def rao_kupper_prepare(wins_a, wins_b, ties):
    return wins_a + ties, wins_b + ties, ties.sum(axis=1)


def rao_kupper_terms(d, kappa, counts, *, derivatives: bool, work=None) -> PairTerms:
    # P(a) = sigma(d - k), P(b) = sigma(-d - k), P(tie) = 1 - both; with u = k - d and
    # v = k + d: log P(a) = -softplus(u), log P(b) = -softplus(v) and
    # log P(tie) = log(expm1(2k)) - softplus(u) - softplus(v) (theta^2 - 1 over the two
    # denominators of Rao & Kupper's form), so with_a = w_a + t, with_b = w_b + t suffice.
    with_a, with_b, tie_total = counts
    k = kappa[:, 0]
    softplus_u, a_miss = _softplus_sigmoid(kappa - d)  # a_miss = 1 - P(a)
    softplus_v, b_hit = _softplus_sigmoid(kappa + d)  # b_hit = 1 - P(b)
    with np.errstate(invalid="ignore", divide="ignore"):
        tie_constant = np.where(k > 0, np.log(np.expm1(2 * k)), -np.inf)
        tie_part = np.where(tie_total > 0, tie_total * tie_constant, 0.0)
    loglik = tie_part - np.einsum("bp,bp->b", with_a, softplus_u)
    loglik -= np.einsum("bp,bp->b", with_b, softplus_v)
    if not derivatives:
        return PairTerms(loglik=loglik)
    var_a = a_miss * (1 - a_miss)  # sigma(d - k) sigma(k - d)
    var_b = b_hit * (1 - b_hit)  # sigma(d + k) sigma(-d - k)
    with np.errstate(divide="ignore", invalid="ignore"):
        tie_slope = np.where(tie_total > 0, tie_total * 2 / -np.expm1(-2 * k), 0.0)
        tie_curve = np.where(tie_total > 0, tie_total / np.sinh(k) ** 2, 0.0)
    weighted_a, weighted_b = with_a * var_a, with_b * var_b
    return PairTerms(
        loglik=loglik,
        d=with_a * a_miss - with_b * b_hit,
        dd=-(weighted_a + weighted_b),
        tie=tie_slope
        - np.einsum("bp,bp->b", with_a, a_miss)
        - np.einsum("bp,bp->b", with_b, b_hit),
        tie_tie=-(weighted_a + weighted_b).sum(axis=1) - tie_curve,
        d_tie=weighted_a - weighted_b,
    )


@dataclass(frozen=True)
class PairModel:
    """A model as the fit sees it.

    ``prepare(wins_a, wins_b, ties)``: the count arrays ``terms`` reads (computed once
    per fit; each has replicates as its first axis); ``tie_parameter``: the reported
    name (None: ties count as half a win each way);
    ``tie_start(tie_share)``: the internal tie parameter whose tie probability at d = 0
    is the observed tie share; ``tie_report``: internal -> reported value.
    """

    name: str
    unit: str
    prepare: Callable[..., tuple]
    terms: Callable[..., PairTerms]
    tie_parameter: str | None = None
    tie_start: Callable[[np.ndarray], np.ndarray] | None = None
    tie_report: Callable[[np.ndarray], np.ndarray] | None = None


def _davidson_start(tie_share: np.ndarray) -> np.ndarray:
    # At d = 0, P(tie) = nu / (2 + nu).
    with np.errstate(divide="ignore"):
        return np.log(2 * tie_share / (1 - tie_share))


def _rao_kupper_start(tie_share: np.ndarray) -> np.ndarray:
    # At d = 0, P(tie) = 2 sigma(kappa) - 1.
    with np.errstate(divide="ignore"):
        return np.log((1 + tie_share) / (1 - tie_share))


MODELS: dict[str, PairModel] = {
    "bradley-terry": PairModel(
        name="bradley-terry",
        unit="log-strength",
        prepare=bradley_terry_prepare,
        terms=bradley_terry_terms,
    ),
    "davidson": PairModel(
        name="davidson",
        unit="log-strength",
        prepare=davidson_prepare,
        terms=davidson_terms,
        tie_parameter="nu",
        tie_start=_davidson_start,
        tie_report=np.exp,
    ),
    "rao-kupper": PairModel(
        name="rao-kupper",
        unit="log-strength",
        prepare=rao_kupper_prepare,
        terms=rao_kupper_terms,
        tie_parameter="theta",
        tie_start=_rao_kupper_start,
        tie_report=np.exp,
    ),
    "thurstone": PairModel(
        name="thurstone", unit="JOD", prepare=thurstone_prepare, terms=thurstone_terms
    ),
}
