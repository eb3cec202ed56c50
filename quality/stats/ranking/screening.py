"""Flagging raters who rank at random: Kendall's tau-b to the leave-one-out consensus.

For each ranking of a prompt, the consensus of the prompt's OTHER rankings is the exact
Kemeny consensus of their pairwise matrix (``kemeny``; among several optima the one with
the best leave-one-out Borda scores, then condition id). Its tau-b with the ranking
(Kendall 1945) is the rater's agreement on that prompt; leaving the ranking out keeps a
rater from agreeing with a consensus they made (decisive with few raters a prompt).

Rule (one pass, per question): a rater is flagged when the mean of their taus over the
prompts they ranked is not significantly above 0, one-sided at level ``alpha``:

    z = sum_p tau_p / sqrt(sum_p var0(tau_p)),   p = 1 - Phi(z),   flagged if p >= alpha,

with var0 the variance of tau-b under no association (``tau_b_null_variance``, Kendall
1948), the prompts being independent. A rater whose perfect agreement (every tau at its
maximum sqrt((n0 - n1) / n0)) could not reach p < alpha -- few prompts of few conditions
-- is "not testable" and never flagged. Prompts ranked by one rater only, and rankings that
tie every condition, give no tau.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from quality.stats.ranking.borda import borda_points
from quality.stats.ranking.concordance import kendall_tau_b, tau_b_null_variance
from quality.stats.ranking.kemeny import kemeny_orders
from quality.stats.ranking.rankings import QuestionRankings

RANDOM_RANKER_RULE = "mean_tau_loo_not_above_0"
# Rankings whose leave-one-out consensus is solved per batch (bounds the N x N copies).
_BATCH = 4096


@dataclass(frozen=True, eq=False)
class RaterTaus:
    """Per rater of the question (index = rater code): mean tau-b to the leave-one-out
    consensus over ``n_prompts`` prompts (NaN if none), z, one-sided p-value, whether the
    rule could flag them at all, and whether it does."""

    mean_tau: np.ndarray
    n_prompts: np.ndarray
    z: np.ndarray
    p_value: np.ndarray
    testable: np.ndarray
    flagged: np.ndarray


def leave_one_out_taus(rankings: QuestionRankings) -> np.ndarray:
    """(rankings,) tau-b of each ranking to the Kemeny consensus of the other rankings of
    its prompt; NaN where the prompt has no other ranking or the ranking ties everything."""
    level, prompt = rankings.level, rankings.prompt
    m, n = level.shape
    n_prompts = len(rankings.prompts)
    above = level[:, :, None] < level[:, None, :]
    prompt_wins = np.zeros((n_prompts, n, n))
    np.add.at(prompt_wins, prompt, above)
    points = borda_points(level)
    prompt_points = np.zeros((n_prompts, n))
    np.add.at(prompt_points, prompt, points)
    others = np.bincount(prompt, minlength=n_prompts)[prompt] - 1
    taus = np.full(m, np.nan)
    for start in range(0, m, _BATCH):
        rows = np.arange(start, min(start + _BATCH, m))
        rows = rows[others[rows] > 0]
        if rows.size == 0:
            continue
        wins = prompt_wins[prompt[rows]] - above[rows]
        # Preference among optima: higher leave-one-out Borda sum first, then id.
        loo_points = prompt_points[prompt[rows]] - points[rows]
        by_points = np.lexsort((np.broadcast_to(np.arange(n), loo_points.shape), -loo_points))
        preference = np.argsort(by_points, axis=1)
        orders = kemeny_orders(wins=wins, preference=preference)
        consensus_place = np.argsort(orders, axis=1)
        taus[rows] = kendall_tau_b(level[rows], consensus_place)
    return taus


def rater_taus(rankings: QuestionRankings, *, alpha: float) -> RaterTaus:
    """The rule of the module docstring for every rater of the question."""
    taus = leave_one_out_taus(rankings)
    level = rankings.level
    n = level.shape[1]
    n0 = n * (n - 1) / 2
    tied = (level[:, :, None] == level[:, None, :]).sum(axis=(1, 2)) - n  # 2 x tied pairs
    best_tau = np.sqrt((n0 - tied / 2) / n0)
    variance = tau_b_null_variance(level)
    has_tau = np.isfinite(taus)
    raters = len(rankings.raters)

    def per_rater(values: np.ndarray) -> np.ndarray:
        return np.bincount(rankings.rater[has_tau], values[has_tau], minlength=raters)

    count = per_rater(np.ones_like(taus))
    tau_sum, variance_sum, best_sum = per_rater(taus), per_rater(variance), per_rater(best_tau)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_tau = np.where(count > 0, tau_sum / count, np.nan)
        scale = np.sqrt(variance_sum)
        z = np.where(count > 0, tau_sum / scale, np.nan)
        best_p = np.where(count > 0, stats.norm.sf(best_sum / scale), np.nan)
    p_value = stats.norm.sf(z)
    testable = best_p < alpha
    return RaterTaus(
        mean_tau=mean_tau,
        n_prompts=count.astype(np.int64),
        z=z,
        p_value=p_value,
        testable=testable,
        flagged=testable & (p_value >= alpha),
    )
