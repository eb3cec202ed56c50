"""Pairwise-comparison scaling with ties: Thurstone Case V with a tie band, and a Gaussian
(Laplace) posterior of the scale for active pair choice (``pairs.py``).

Model (Thurstone 1927, Case V; the tie band of Glenn & David 1960, "Ties in paired-
comparison experiments using a modified Thurstone-Mosteller model", Biometrics 16(1)):
a judgment of conditions i (left) and j (right) with d = s_i - s_j gives

    P(i preferred) = Phi(d - tau),  P(j preferred) = Phi(-d - tau),
    P(tie) = Phi(d + tau) - Phi(d - tau),

with unit comparison noise (the scale's unit: s_i - s_j = 1 means i is preferred to j
84 % of the time without ties) and tie band tau >= 0. Outcomes are coded +1 (left
preferred), 0 (tie), -1 (right preferred).

Fit: the maximum a posteriori scale under the prior s ~ N(0, prior_sd^2 I) by Newton's
method (the log-likelihood is concave in s: every outcome probability is a normal
probability of an interval, log-concave in d), alternating with the 1-d maximum
likelihood of tau; then the Laplace approximation N(s_MAP, H^{-1}) with H the negative
Hessian of the log-posterior at s_MAP (the Gaussian posterior ASAP also works with:
Mikhailiuk, Wilmot, Perez-Ortiz, Yue & Mantiuk 2020, "Active sampling for pairwise
comparisons via approximate message passing and information gain maximization", ICPR).
The scale is identified by the prior only; compare scales after centring.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

DEFAULT_PRIOR_SD = 3.0
_TAU_RANGE = (1e-3, 5.0)
_NEWTON_STEPS = 50
_ROUNDS = 8  # alternations of the scale's Newton fit and tau's 1-d fit


@dataclass(frozen=True, eq=False)
class ScalePosterior:
    """N(mean, covariance) over the C conditions' scale values, and the tie band tau."""

    mean: np.ndarray
    covariance: np.ndarray
    tie_band: float

    @property
    def n_conditions(self) -> int:
        return self.mean.size


def outcome_probabilities(d: np.ndarray, tau: float) -> np.ndarray:
    """(P(left), P(tie), P(right)) along a new last axis, for differences d = s_l - s_r."""
    d = np.asarray(d, dtype=np.float64)
    left = special.ndtr(d - tau)
    right = special.ndtr(-d - tau)
    # Phi(d + tau) - Phi(d - tau) taken in the tail where it lies keeps its digits
    # (1 - left - right would be all rounding error far from d = 0).
    far = np.abs(d)
    tie = special.ndtr(tau - far) - special.ndtr(-tau - far)
    return np.stack([left, tie, right], axis=-1)


def _mills(x: np.ndarray) -> np.ndarray:
    """phi(x) / Phi(x), accurate far in the lower tail."""
    return np.exp(-0.5 * x * x - 0.5 * np.log(2 * np.pi) - special.log_ndtr(x))


def _derivatives(d: np.ndarray, outcome: np.ndarray, tau: float):
    """Log-likelihood of each judgment and its first and second derivatives in d.

    Left preferred, x = d - tau: log Phi(x), g = m(x), h = -m(x)(x + m(x)) with
    m = phi / Phi; right preferred, y = -d - tau: the same in y with g = -m(y); tie,
    (l, u) = (d - tau, d + tau): log(Phi(u) - Phi(l)), g = (phi(u) - phi(l)) / p,
    h = (l phi(l) - u phi(u)) / p - g^2.
    """
    x = np.where(outcome < 0, -d - tau, d - tau)
    log_p = special.log_ndtr(x)
    mills = _mills(x)
    gradient = np.where(outcome < 0, -mills, mills)
    curvature = -mills * (x + mills)
    tie = outcome == 0
    if tie.any():
        u, low = d[tie] + tau, d[tie] - tau
        # Phi(u) - Phi(l) by the tail it lies in, so that it keeps its digits.
        upper_tail = low > 0
        p = np.where(
            upper_tail,
            special.ndtr(-low) - special.ndtr(-u),
            special.ndtr(u) - special.ndtr(low),
        )
        p = np.maximum(p, 1e-300)
        phi_u = np.exp(-0.5 * u * u) / np.sqrt(2 * np.pi)
        phi_l = np.exp(-0.5 * low * low) / np.sqrt(2 * np.pi)
        g = (phi_u - phi_l) / p
        log_p[tie] = np.log(p)
        gradient[tie] = g
        curvature[tie] = (low * phi_l - u * phi_u) / p - g * g
    return log_p, gradient, curvature


def _log_likelihood(s, left, right, outcome, tau) -> float:
    return float(_derivatives(s[left] - s[right], outcome, tau)[0].sum())


def _newton(s, left, right, outcome, tau, prior_precision) -> tuple[np.ndarray, np.ndarray]:
    """MAP scale for a fixed tau, and the negative Hessian there."""
    size = s.size
    for _ in range(_NEWTON_STEPS):
        _, gradient, curvature = _derivatives(s[left] - s[right], outcome, tau)
        grad = -prior_precision * s
        np.add.at(grad, left, gradient)
        np.add.at(grad, right, -gradient)
        hessian = _information(size, left, right, -curvature, prior_precision)
        step = np.linalg.solve(hessian, grad)
        objective = _log_likelihood(s, left, right, outcome, tau) - 0.5 * prior_precision * s @ s
        scale = 1.0
        while scale > 1e-6:  # step halving keeps every step an ascent (concave objective)
            trial = s + scale * step
            value = (
                _log_likelihood(trial, left, right, outcome, tau)
                - 0.5 * prior_precision * trial @ trial
            )
            if value >= objective - 1e-12:
                break
            scale /= 2
        s = trial
        if np.max(np.abs(scale * step)) < 1e-9:
            break
    _, _, curvature = _derivatives(s[left] - s[right], outcome, tau)
    return s, _information(size, left, right, -curvature, prior_precision)


def _information(size, left, right, weight, prior_precision) -> np.ndarray:
    """prior_precision I + sum_k w_k (e_l - e_r)(e_l - e_r)^T."""
    matrix = np.eye(size) * prior_precision
    np.add.at(matrix, (left, left), weight)
    np.add.at(matrix, (right, right), weight)
    np.add.at(matrix, (left, right), -weight)
    np.add.at(matrix, (right, left), -weight)
    return matrix


def fit_scale(
    *,
    n_conditions: int,
    left,
    right,
    outcome,
    prior_sd: float = DEFAULT_PRIOR_SD,
    tie_band: float | None = None,
) -> ScalePosterior:
    """Laplace posterior of the Thurstone scale with ties (module docstring).

    ``left``/``right`` are condition indices 0..n_conditions-1 and ``outcome`` +1, 0 or -1
    per judgment. ``tie_band`` fixes tau; by default it is fitted (at its lower limit
    1e-3 when there is no tie).
    """
    left = np.asarray(left, dtype=np.int64)
    right = np.asarray(right, dtype=np.int64)
    outcome = np.asarray(outcome, dtype=np.int64)
    if not (left.shape == right.shape == outcome.shape) or left.ndim != 1:
        raise ValueError("left, right and outcome must be 1-d and of equal length")
    if left.size and (
        min(left.min(), right.min()) < 0 or max(left.max(), right.max()) >= n_conditions
    ):
        raise ValueError("condition index out of range")
    if np.any(left == right):
        raise ValueError("a condition cannot be compared with itself")
    if not np.isin(outcome, (-1, 0, 1)).all():
        raise ValueError("outcome must be +1 (left preferred), 0 (tie) or -1 (right)")
    precision = 1.0 / prior_sd**2
    tau = 0.5 if tie_band is None else float(tie_band)
    s = np.zeros(n_conditions)
    for _ in range(_ROUNDS if tie_band is None else 1):
        s, hessian = _newton(s, left, right, outcome, tau, precision)
        if tie_band is None:
            if not np.any(outcome == 0):
                tau = _TAU_RANGE[0]
                continue
            found = optimize.minimize_scalar(
                lambda t, s=s: -_log_likelihood(s, left, right, outcome, t),
                bounds=_TAU_RANGE,
                method="bounded",
                options={"xatol": 1e-6},
            )
            if abs(found.x - tau) < 1e-5:
                tau = float(found.x)
                break
            tau = float(found.x)
    s, hessian = _newton(s, left, right, outcome, tau, precision)
    covariance = np.linalg.inv(hessian)
    return ScalePosterior(mean=s, covariance=(covariance + covariance.T) / 2, tie_band=tau)
