"""Per-rater figures of a side-by-side study and the screening rule built on them.

- Position bias: the share of "left" among the rater's decisive answers, with the exact
  two-sided binomial test against 1/2 (placement is counterbalanced, so an unbiased
  rater picks left half the time whatever the conditions).
- Agreement with the majority: the share of the rater's decisive judgments that prefer
  the condition preferred by most of the OTHER raters' decisive judgments of the same
  (question, pair). Leave-one-out, so that a rater does not vote on their own yardstick;
  per pair rather than per trial because a trial (content and pair) is often seen by one
  rater only. Pairs where the others are split evenly or absent do not count. Chance is
  1/2; the exact one-sided binomial test asks whether the rater agrees LESS than that.
- Circular triads (Kendall & Babington Smith 1940): per question, the rater's own
  majority preference on each pair they judged (more wins than losses; an even split
  gives no direction) forms a directed graph; a triad i > j > k > i is circular. Counted
  as trace(A^3) / 3 for the adjacency matrix A, summed over questions, beside the number
  of triads whose three pairs all have a direction (``triads``).

Screening (``screen_raters``) excludes a rater who, with at least ``min_answers``
answers counted by the rule, either has a position bias with two-sided p < ``p_value``
(rule "position_bias") or agrees with the others' majority below 1/2 with one-sided
p < ``p_value`` (rule "disagrees_with_majority"). Each rule broken is one exclusion record
(rater_id, rule, share, n, p_value); a rater breaking both has two.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import binom

from quality.stats.preference.counts import PairTensors
from quality.stats.preference.judgments import EQUAL, JudgmentTable

RATER_COLUMNS = (
    "rater_id",
    "n",
    "n_decisive",
    "left_share",
    "position_p_value",
    "agreement",
    "agreement_n",
    "agreement_p_value",
    "circular_triads",
    "triads",
)
POSITION_RULE = "position_bias"
MAJORITY_RULE = "disagrees_with_majority"


def binomial_two_sided_half(*, successes: np.ndarray, trials: np.ndarray) -> np.ndarray:
    """Exact two-sided binomial p-value against 1/2: by symmetry twice the smaller tail,
    at most 1 (equal to scipy.stats.binomtest for p = 1/2). NaN where trials = 0."""
    k, n = np.asarray(successes, float), np.asarray(trials, float)
    tail = np.minimum(binom.cdf(k, n, 0.5), binom.sf(k - 1, n, 0.5))
    return np.where(n > 0, np.minimum(1.0, 2 * tail), np.nan)


def rater_figures(*, table: JudgmentTable, tensors: PairTensors) -> pd.DataFrame:
    """One row per rater of ``tensors`` (RATER_COLUMNS), in rater order."""
    n_raters = tensors.raters.size
    row_of = np.full(table.raters.size, -1)
    row_of[tensors.raters] = np.arange(n_raters)
    row = row_of[table.rater]
    decisive = table.outcome != EQUAL
    n = np.bincount(row, minlength=n_raters)
    n_decisive = np.bincount(row[decisive], minlength=n_raters)
    lefts = np.bincount(row[decisive & table.chose_left], minlength=n_raters)
    agreeing = np.zeros(n_raters)
    countable = np.zeros(n_raters)
    circular = np.zeros(n_raters)
    directed_triads = np.zeros(n_raters)
    for counts in tensors.questions:
        own_a, own_b, _ = np.split(counts.per_rater, 3, axis=1)
        others_a = own_a.sum(axis=0) - own_a
        others_b = own_b.sum(axis=0) - own_b
        agreeing += (own_a * (others_a > others_b) + own_b * (others_b > others_a)).sum(axis=1)
        countable += ((own_a + own_b) * (others_a != others_b)).sum(axis=1)
        cycles, triads = _triads(own_a, own_b, counts.pair_a, counts.pair_b, counts.n_conditions)
        circular += cycles
        directed_triads += triads
    with np.errstate(divide="ignore", invalid="ignore"):
        left_share = np.where(n_decisive > 0, lefts / n_decisive, np.nan)
        agreement = np.where(countable > 0, agreeing / countable, np.nan)
    return pd.DataFrame(
        {
            "rater_id": table.raters[tensors.raters],
            "n": n,
            "n_decisive": n_decisive,
            "left_share": left_share,
            "position_p_value": binomial_two_sided_half(successes=lefts, trials=n_decisive),
            "agreement": agreement,
            "agreement_n": countable.astype(np.int64),
            "agreement_p_value": np.where(
                countable > 0, binom.cdf(agreeing, countable, 0.5), np.nan
            ),
            "circular_triads": np.rint(circular).astype(np.int64),
            "triads": np.rint(directed_triads).astype(np.int64),
        }
    )


def _triads(own_a, own_b, pair_a, pair_b, n_conditions) -> tuple[np.ndarray, np.ndarray]:
    """(circular triads, triads with three directed pairs) per rater, one question."""
    n_raters = own_a.shape[0]
    graph = np.zeros((n_raters, n_conditions, n_conditions))
    graph[:, pair_a, pair_b] = own_a > own_b
    graph[:, pair_b, pair_a] = own_b > own_a
    # A 3-cycle is counted once per starting vertex in trace(A^3).
    cycles = np.einsum("rii->r", graph @ graph @ graph) / 3
    linked = graph + graph.transpose(0, 2, 1)
    # A triangle of the undirected graph is counted 6 times in trace(U^3).
    triangles = np.einsum("rii->r", linked @ linked @ linked) / 6
    return cycles, triangles


def screen_raters(
    *, figures: pd.DataFrame, p_value: float = 0.001, min_answers: int = 20
) -> list[dict]:
    """The exclusion records of the module docstring's rule, sorted by rater then rule."""
    exclusions = []
    for rater in figures.itertuples(index=False):
        if rater.n_decisive >= min_answers and rater.position_p_value < p_value:
            exclusions.append(
                {
                    "rater_id": rater.rater_id,
                    "rule": POSITION_RULE,
                    "share": float(rater.left_share),
                    "n": int(rater.n_decisive),
                    "p_value": float(rater.position_p_value),
                }
            )
        if (
            rater.agreement_n >= min_answers
            and rater.agreement < 0.5
            and rater.agreement_p_value < p_value
        ):
            exclusions.append(
                {
                    "rater_id": rater.rater_id,
                    "rule": MAJORITY_RULE,
                    "share": float(rater.agreement),
                    "n": int(rater.agreement_n),
                    "p_value": float(rater.agreement_p_value),
                }
            )
    return exclusions
