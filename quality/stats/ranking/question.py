"""Every statistic of one question: screening, then per prompt and pooled consensus.

Steps (``analyse_question``):

1. each rater's tau-b to the leave-one-out consensus and the random-ranker rule
   (``screening``); with ``screen`` the flagged raters' rankings are set aside, unless that
   would set aside every rater (then nobody is, and a note says so);
2. per prompt with rankings left, and pooled over the question's prompts: Borda score
   (``borda``), Kendall's W (``concordance``), exact Kemeny consensus (``kemeny``; optima
   tie-broken by Borda score then condition id), Plackett-Luce strengths with a
   percentile interval from a bootstrap over raters (``plackett_luce``). Pooled Kemeny,
   Plackett-Luce and W weigh every ranking the same; the pooled Borda score is the mean of
   the prompts' scores (each prompt the same). The pooled W takes every ranking as a
   judge; its chi-square p-value assumes independent rankings, which one rater's rankings
   of several prompts are not, so read it as descriptive;
3. the rank distribution of the kept rankings;
4. against model scores: Recall@K of the pooled consensus and of each kept rater (mean
   over the rater's rankings; mean over raters with a percentile interval from the pooled
   bootstrap's rater draws), Kendall's tau-b and Spearman's rho of the pooled consensus.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, replace

import numpy as np

from quality.stats.ranking.borda import borda_scores, place_counts
from quality.stats.ranking.concordance import (
    Concordance,
    kendall_tau_b,
    kendall_w,
    spearman_rho,
)
from quality.stats.ranking.kemeny import (
    KemenyConsensus,
    kemeny_consensus,
    pairwise_wins,
    tied_pairs,
)
from quality.stats.ranking.plackett_luce import (
    PlackettLuceFit,
    choice_data,
    fit_plackett_luce,
    rater_bootstrap_weights,
)
from quality.stats.ranking.rankings import POOLED, QuestionRankings
from quality.stats.ranking.recall import recall_at_k
from quality.stats.ranking.screening import RaterTaus, rater_taus
from quality.stats.ranking.settings import RankingSettings

CONFIDENCE_PERCENTILES = (2.5, 97.5)  # the 95 % percentile interval


@dataclass(frozen=True, eq=False)
class RankingOutcome:
    """One (question, prompt) or the question pooled (prompt ``*``); arrays per condition."""

    prompt: str
    borda: np.ndarray
    pl_strength: np.ndarray
    pl_low: np.ndarray
    pl_high: np.ndarray
    pl_fit: PlackettLuceFit
    kemeny: KemenyConsensus
    concordance: Concordance


@dataclass(frozen=True, eq=False)
class QuestionOutcome:
    rankings: QuestionRankings
    taus: RaterTaus
    excluded: np.ndarray  # per rater code
    screening_note: str | None
    kept: QuestionRankings
    outcomes: list[RankingOutcome]  # prompts with rankings, then the pooled one
    dropped_prompts: list[str]
    place_counts: np.ndarray
    recall: dict[str, float] | None = None
    rater_recall: dict[str, dict[str, float]] | None = None
    model_correlation: dict[str, float] | None = None


def _stream(question: str, prompt: str, seed: int) -> np.random.Generator:
    """Each (question, prompt) its own random stream (CRC-32 of the names), so that its
    draws do not depend on which other questions or prompts the study has."""
    key = tuple(zlib.crc32(name.encode("utf-8")) for name in (question, prompt))
    return np.random.default_rng(np.random.SeedSequence(entropy=seed, spawn_key=key))


def _preference(borda: np.ndarray) -> np.ndarray:
    """Tie-break positions: higher Borda score first, then condition id (index order)."""
    order = np.lexsort((np.arange(borda.size), -np.round(borda, 9)))
    preference = np.empty(borda.size, dtype=np.int64)
    preference[order] = np.arange(borda.size)
    return preference


def _plackett_luce(
    level: np.ndarray, rater: np.ndarray, *, settings: RankingSettings, rng: np.random.Generator
) -> tuple[PlackettLuceFit, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Point estimate (all raters once) and bootstrap replicates (raters redrawn): the fit,
    the interval ends, the raters (codes) and the (1 + replicates) x raters weights."""
    raters, local = np.unique(rater, return_inverse=True)
    data = choice_data(level=level, rater=local.ravel(), n_raters=raters.size)
    draws = rater_bootstrap_weights(n_raters=raters.size, replicates=settings.bootstrap, rng=rng)
    weights = np.vstack([np.ones((1, raters.size)), draws])
    fit = fit_plackett_luce(data, weights=weights, prior_weight=settings.pl_prior_weight)
    if settings.bootstrap > 0:
        low, high = np.percentile(fit.strength[1:], CONFIDENCE_PERCENTILES, axis=0)
    else:
        low = high = np.full(level.shape[1], np.nan)
    return fit, low, high, raters, weights


def _outcome(
    prompt: str,
    level: np.ndarray,
    rater: np.ndarray,
    borda: np.ndarray,
    *,
    question: str,
    settings: RankingSettings,
) -> tuple[RankingOutcome, tuple[np.ndarray, np.ndarray]]:
    fit, low, high, raters, weights = _plackett_luce(
        level, rater, settings=settings, rng=_stream(question, prompt, settings.seed)
    )
    kemeny = kemeny_consensus(
        wins=pairwise_wins(level), preference=_preference(borda), ties=tied_pairs(level)
    )
    outcome = RankingOutcome(
        prompt=prompt,
        borda=borda,
        pl_strength=fit.strength[0],
        pl_low=low,
        pl_high=high,
        pl_fit=fit,
        kemeny=kemeny,
        concordance=kendall_w(level),
    )
    return outcome, (raters, weights)


def analyse_question(
    rankings: QuestionRankings, *, settings: RankingSettings, model_scores: np.ndarray | None
) -> QuestionOutcome:
    """The module docstring's steps; ``model_scores`` per condition (higher is better)."""
    taus = rater_taus(rankings, alpha=settings.screen_alpha)
    excluded = np.zeros(len(rankings.raters), dtype=bool)
    note = None
    if settings.screen and taus.flagged.any():
        if taus.flagged.all():
            note = "the rule flags every rater: nobody was excluded"
        else:
            excluded = taus.flagged.copy()
    kept = rankings.subset(~excluded[rankings.rater])
    borda = borda_scores(level=kept.level, prompt=kept.prompt, n_prompts=len(rankings.prompts))
    outcomes = []
    for p, prompt in enumerate(rankings.prompts):
        rows = kept.prompt == p
        if rows.any():
            outcome, _ = _outcome(
                prompt,
                kept.level[rows],
                kept.rater[rows],
                borda[p],
                question=rankings.question,
                settings=settings,
            )
            outcomes.append(outcome)
    pooled, (raters, weights) = _outcome(
        POOLED, kept.level, kept.rater, borda[-1], question=rankings.question, settings=settings
    )
    outcomes.append(pooled)
    present = {o.prompt for o in outcomes}
    result = QuestionOutcome(
        rankings=rankings,
        taus=taus,
        excluded=excluded,
        screening_note=note,
        kept=kept,
        outcomes=outcomes,
        dropped_prompts=[p for p in rankings.prompts if p not in present],
        place_counts=place_counts(kept.level),
    )
    if model_scores is None:
        return result
    return _against_model(result, pooled, raters, weights, model_scores, settings)


def _against_model(
    result: QuestionOutcome,
    pooled: RankingOutcome,
    raters: np.ndarray,
    weights: np.ndarray,
    model_scores: np.ndarray,
    settings: RankingSettings,
) -> QuestionOutcome:
    kept, model = result.kept, -np.asarray(model_scores, dtype=np.float64)
    n = kept.level.shape[1]
    _, local = np.unique(kept.rater, return_inverse=True)
    per_rank = np.bincount(local.ravel(), minlength=raters.size).astype(np.float64)
    recall, rater_recall = {}, {}
    for k in (k for k in settings.recall_ks if k <= n):
        recall[str(k)] = float(recall_at_k(human=pooled.kemeny.rank, model=model, k=k))
        per_ranking = recall_at_k(human=kept.level, model=model, k=k)
        per_rater = np.bincount(local.ravel(), per_ranking, minlength=raters.size) / per_rank
        replicates = weights[1:] @ per_rater / weights[1:].sum(axis=1)
        low, high = (
            np.percentile(replicates, CONFIDENCE_PERCENTILES)
            if replicates.size
            else (np.nan, np.nan)
        )
        rater_recall[str(k)] = {
            "mean": float(per_rater.mean()),
            "ci95_low": float(low),
            "ci95_high": float(high),
            "n_raters": int(raters.size),
        }
    correlation = {
        "kendall_tau": float(kendall_tau_b(pooled.kemeny.rank, model)),
        "spearman_rho": spearman_rho(pooled.kemeny.rank, model),
    }
    return replace(result, recall=recall, rater_recall=rater_recall, model_correlation=correlation)
