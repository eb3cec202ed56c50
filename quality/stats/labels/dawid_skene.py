"""Dawid-Skene: each rater's confusion matrix and each item's true class, by EM.

Dawid & Skene, "Maximum Likelihood Estimation of Observer Error-Rates Using the EM
Algorithm", Applied Statistics 28(1), 1979. With T_ic the posterior that item i's true
class is c, p_c the class priors and e_w[c, k] = P(rater w answers k | true class c):

- start: T_ic = share of item i's answers that are c (the majority-vote distribution);
- M-step: p_c = mean_i T_ic; e_w[c, k] proportional to the sum of T_ic over w's
  answers k, normalised over k (the answers w gave);
- E-step: T_ic proportional to p_c * prod over i's answers (w, k) of e_w[c, k].

Numerical conventions and the stopping rule are those of crowd-kit's ``DawidSkene``
(Ustalov et al., crowd-kit 1.4, 2024), so that both give the same posteriors: an
M-step entry of an answer the rater gave is at least 1e-10 before normalising (one never
given stays 0), the priors are at least 1e-10 in the E-step, the E-step works in logs
shifted by each item's maximum, and after each iteration (E-step, priors, M-step) the
objective

    L = [sum over answers (i, w, k) sum_c T_ic (log e_w[c, k] + log p_c)
         - sum_i sum_c T'_ic log T'_ic] / number of answers,   T' = max(T, 1e-10)

is computed; EM stops when L rose by less than ``tolerance`` or after
``max_iterations`` iterations. (L counts the prior once per answer, as crowd-kit does;
it serves only to decide when to stop.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FLOOR = 1e-10


@dataclass(frozen=True, eq=False)
class DawidSkeneFit:
    """posteriors[i, c] = P(item i is class c); priors[c]; confusion[w, c, k] = P(rater
    w answers k | class c) (rows sum to 1); iterations: EM iterations run; converged:
    stopped by the tolerance rather than by the iteration limit."""

    posteriors: np.ndarray
    priors: np.ndarray
    confusion: np.ndarray
    iterations: int
    converged: bool

    @property
    def labels(self) -> np.ndarray:
        """The most probable class of every item (the lowest code on an exact tie)."""
        return np.argmax(self.posteriors, axis=1)


def _grouped_sums(groups: np.ndarray, rows: np.ndarray, n_groups: int) -> np.ndarray:
    """Sum of the (answers x classes) ``rows`` per group code: (n_groups x classes)."""
    n_classes = rows.shape[1]
    flat = (groups[:, None] * np.int64(n_classes) + np.arange(n_classes)).ravel()
    sums = np.bincount(flat, weights=rows.ravel(), minlength=n_groups * n_classes)
    return sums.reshape(n_groups, n_classes)


def fit_dawid_skene(
    *,
    item: np.ndarray,
    rater: np.ndarray,
    answer: np.ndarray,
    n_items: int,
    n_raters: int,
    n_classes: int,
    max_iterations: int = 100,
    tolerance: float = 1e-5,
) -> DawidSkeneFit:
    """EM fit of the model in the module docstring on answers given as parallel code
    arrays (every item 0..n_items-1 needs at least one answer)."""
    item = np.asarray(item, dtype=np.int64)
    rater = np.asarray(rater, dtype=np.int64)
    answer = np.asarray(answer, dtype=np.int64)
    if np.bincount(item, minlength=n_items).min(initial=1) == 0:
        raise ValueError("every item needs at least one answer")
    rater_answer = rater * np.int64(n_classes) + answer  # code of (w, k)
    given = (
        np.bincount(rater_answer, minlength=n_raters * n_classes).reshape(n_raters, n_classes) > 0
    )

    def m_step(posteriors: np.ndarray) -> np.ndarray:
        # sums[w * K + k, c] = sum of T_ic over w's answers k
        sums = _grouped_sums(rater_answer, posteriors[item], n_raters * n_classes)
        sums = sums.reshape(n_raters, n_classes, n_classes).transpose(0, 2, 1)  # [w, c, k]
        sums = np.where(given[:, None, :], np.maximum(sums, FLOOR), 0.0)
        return sums / sums.sum(axis=2, keepdims=True)

    def answer_logs(confusion: np.ndarray) -> np.ndarray:
        # log e_w[c, k] of every answer, (answers x classes)
        with np.errstate(divide="ignore"):
            logs = np.log(confusion)
        return logs[rater, :, answer]

    posteriors = _grouped_sums(item, np.eye(n_classes)[answer], n_items)
    posteriors /= posteriors.sum(axis=1, keepdims=True)
    priors = posteriors.mean(axis=0)
    confusion = m_step(posteriors)
    loss, iterations, converged = -np.inf, 0, False
    for _ in range(max_iterations):
        log_priors = np.log(np.maximum(priors, FLOOR))
        logs = answer_logs(confusion)
        log_likelihood = log_priors + _grouped_sums(item, logs, n_items)
        posteriors = np.exp(log_likelihood - log_likelihood.max(axis=1, keepdims=True))
        posteriors /= posteriors.sum(axis=1, keepdims=True)
        priors = posteriors.mean(axis=0)
        confusion = m_step(posteriors)
        iterations += 1
        logs = answer_logs(confusion)
        floored = np.maximum(posteriors, FLOOR)
        expected = np.sum(posteriors[item] * (logs + np.log(np.maximum(priors, FLOOR))))
        new_loss = (expected - np.sum(floored * np.log(floored))) / item.size
        if new_loss - loss < tolerance:
            converged = True
            break
        loss = new_loss
    return DawidSkeneFit(
        posteriors=posteriors,
        priors=priors,
        confusion=confusion,
        iterations=iterations,
        converged=converged,
    )
