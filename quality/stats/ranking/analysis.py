"""The analysis of a ranking study (VGA-Bench design) in one call: ``analyse``.

Input: the rankings table (``rankings``: ``rater_id, question, prompt_id, ranking``) and
optionally the scores of an automatic ranking per condition (higher is better). Each
question is analysed on its own (``question``); ``RankingResult`` gathers the tables and
``summary_dict`` the JSON summary that ``python -m quality rank`` writes:

- version, settings, questions;
- counts[q]: conditions, prompts, rankings, rankings_kept, raters, raters_kept;
- kendall_w[q][prompt or "*"]: w, chi2, df, p_value, n_rankings, n_conditions;
- kemeny[q][prompt or "*"]: order (ids best first), distance (total K^(1/2) Kendall
  distance), mean_distance (per ranking), unique, n_optimal, alternative (another optimal
  order or null);
- plackett_luce[q][prompt or "*"]: prior_used (full-data fit),
  bootstrap_replicates_with_prior, bootstrap_replicates_without_estimate, unconverged_fits,
  iterations;
- rater_taus[q][rater]: mean_tau, n_prompts, z, p_value, testable, flagged;
- exclusions: [{question, rater_id, rule, mean_tau, z, p_value, n_prompts}];
- screening_notes[q] (only where screening was skipped), dropped_prompts[q];
- with model scores (else null): recall_at[q]["1"|"3"|"5"] of the pooled Kemeny
  consensus; recall_at_per_rater[q][K]: mean, ci95_low, ci95_high, n_raters;
  model_correlation[q]: kendall_tau, spearman_rho.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from quality.stats.ranking.concordance import Concordance
from quality.stats.ranking.question import QuestionOutcome, analyse_question
from quality.stats.ranking.rankings import QuestionRankings, RankingsError, encode_rankings
from quality.stats.ranking.screening import RANDOM_RANKER_RULE
from quality.stats.ranking.settings import RankingSettings

# Bump when a change to this package changes any number or name a stored result holds.
RANKING_VERSION = "quality.stats.ranking/2"  # 2: consensus.kemeny_unique

CONSENSUS_COLUMNS = (
    "question",
    "prompt_id",
    "condition",
    "borda",
    "pl_strength",
    "pl_ci95_low",
    "pl_ci95_high",
    "kemeny_rank",
    "kemeny_unique",
)
RANK_DISTRIBUTION_COLUMNS = ("question", "condition", "place", "count")
EXCLUSION_COLUMNS = ("question", "rater_id", "rule", "mean_tau", "z", "p_value", "n_prompts")
RATER_TAU_COLUMNS = (
    "question",
    "rater_id",
    "mean_tau",
    "n_prompts",
    "z",
    "p_value",
    "testable",
    "flagged",
)


@dataclass(frozen=True, eq=False)
class RankingResult:
    """consensus: ``CONSENSUS_COLUMNS``, one row per (question, prompt or ``*``, condition),
    each block best Kemeny rank first; rank_distribution: ``RANK_DISTRIBUTION_COLUMNS``;
    exclusions: ``EXCLUSION_COLUMNS``, one row per rater excluded from a question;
    rater_taus: ``RATER_TAU_COLUMNS``, every rater of every question. The dicts are keyed
    by question, then prompt_id (``*`` pooled) or K (as text)."""

    settings: RankingSettings
    questions: list[str]
    consensus: pd.DataFrame
    rank_distribution: pd.DataFrame
    exclusions: pd.DataFrame
    rater_taus: pd.DataFrame
    concordance: dict[str, dict[str, Concordance]]
    kemeny: dict[str, dict[str, dict]]
    plackett_luce: dict[str, dict[str, dict]]
    counts: dict[str, dict[str, int]]
    screening_notes: dict[str, str]
    dropped_prompts: dict[str, list[str]]
    recall_at: dict[str, dict[str, float]] | None
    recall_at_per_rater: dict[str, dict[str, dict[str, float]]] | None
    model_correlation: dict[str, dict[str, float]] | None

    def summary_dict(self) -> dict:
        """JSON-ready summary (str keys; NaN stays float NaN, callers map it to null)."""
        return {
            "version": RANKING_VERSION,
            "settings": {**asdict(self.settings), "recall_ks": list(self.settings.recall_ks)},
            "questions": list(self.questions),
            "counts": self.counts,
            "kendall_w": {
                q: {p: asdict(c) for p, c in by_prompt.items()}
                for q, by_prompt in self.concordance.items()
            },
            "kemeny": self.kemeny,
            "plackett_luce": self.plackett_luce,
            "rater_taus": {
                q: {
                    row["rater_id"]: {k: row[k] for k in RATER_TAU_COLUMNS[2:]}
                    for row in part.to_dict("records")
                }
                for q, part in self.rater_taus.groupby("question", sort=False)
            },
            "exclusions": self.exclusions.to_dict("records"),
            "screening_notes": self.screening_notes,
            "dropped_prompts": self.dropped_prompts,
            "recall_at": self.recall_at,
            "recall_at_per_rater": self.recall_at_per_rater,
            "model_correlation": self.model_correlation,
        }


def _model_vector(rankings: QuestionRankings, model_scores: dict[str, float]) -> np.ndarray:
    missing = [c for c in rankings.conditions if c not in model_scores]
    if missing:
        raise RankingsError(
            f"the model scores miss condition(s) {', '.join(repr(c) for c in missing)} "
            f"of question {rankings.question!r}"
        )
    scores = np.array([float(model_scores[c]) for c in rankings.conditions])
    if not np.isfinite(scores).all():
        raise RankingsError("every model score must be a finite number")
    return scores


def analyse(
    rankings: pd.DataFrame,
    *,
    settings: RankingSettings | None = None,
    model_scores: dict[str, float] | None = None,
) -> RankingResult:
    """Every statistic of the study (module docstring; rules in ``rankings`` and
    ``question``). Raises RankingsError, naming the line, for rankings it cannot use."""
    return analyse_rankings(encode_rankings(rankings), settings=settings, model_scores=model_scores)


def analyse_rankings(
    questions: list[QuestionRankings],
    *,
    settings: RankingSettings | None = None,
    model_scores: dict[str, float] | None = None,
) -> RankingResult:
    """``analyse`` on rankings already checked and encoded (``encode_rankings``)."""
    settings = settings or RankingSettings()
    settings.check()
    models = {
        q.question: None if model_scores is None else _model_vector(q, model_scores)
        for q in questions
    }
    outcomes = [
        analyse_question(q, settings=settings, model_scores=models[q.question]) for q in questions
    ]
    with_model = model_scores is not None
    return RankingResult(
        settings=settings,
        questions=[o.rankings.question for o in outcomes],
        consensus=_consensus_table(outcomes),
        rank_distribution=_rank_distribution_table(outcomes),
        exclusions=_exclusion_table(outcomes),
        rater_taus=_rater_tau_table(outcomes),
        concordance={
            o.rankings.question: {r.prompt: r.concordance for r in o.outcomes} for o in outcomes
        },
        kemeny={o.rankings.question: _kemeny_summary(o) for o in outcomes},
        plackett_luce={o.rankings.question: _pl_summary(o) for o in outcomes},
        counts={o.rankings.question: _counts(o) for o in outcomes},
        screening_notes={
            o.rankings.question: o.screening_note for o in outcomes if o.screening_note
        },
        dropped_prompts={o.rankings.question: o.dropped_prompts for o in outcomes},
        recall_at={o.rankings.question: o.recall for o in outcomes} if with_model else None,
        recall_at_per_rater=(
            {o.rankings.question: o.rater_recall for o in outcomes} if with_model else None
        ),
        model_correlation=(
            {o.rankings.question: o.model_correlation for o in outcomes} if with_model else None
        ),
    )


def _consensus_table(outcomes: list[QuestionOutcome]) -> pd.DataFrame:
    frames = []
    for o in outcomes:
        conditions = np.asarray(o.rankings.conditions, dtype=object)
        for r in o.outcomes:
            order = np.asarray(r.kemeny.order)
            frames.append(
                pd.DataFrame(
                    {
                        "question": o.rankings.question,
                        "prompt_id": r.prompt,
                        "condition": conditions[order],
                        "borda": r.borda[order],
                        "pl_strength": r.pl_strength[order],
                        "pl_ci95_low": r.pl_low[order],
                        "pl_ci95_high": r.pl_high[order],
                        "kemeny_rank": r.kemeny.rank[order],
                        # False: another order is as close to the rankings (summary's
                        # kemeny[q][prompt]: n_optimal, alternative), so ranks may swap
                        "kemeny_unique": r.kemeny.unique,
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)[list(CONSENSUS_COLUMNS)]


def _rank_distribution_table(outcomes: list[QuestionOutcome]) -> pd.DataFrame:
    frames = []
    for o in outcomes:
        n = len(o.rankings.conditions)
        order = np.asarray(o.outcomes[-1].kemeny.order)  # pooled consensus order
        frames.append(
            pd.DataFrame(
                {
                    "question": o.rankings.question,
                    "condition": np.repeat(np.asarray(o.rankings.conditions, object)[order], n),
                    "place": np.tile(np.arange(1, n + 1), n),
                    "count": o.place_counts[order].ravel(),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)[list(RANK_DISTRIBUTION_COLUMNS)]


def _rater_tau_table(outcomes: list[QuestionOutcome]) -> pd.DataFrame:
    frames = []
    for o in outcomes:
        t = o.taus
        frames.append(
            pd.DataFrame(
                {
                    "question": o.rankings.question,
                    "rater_id": list(o.rankings.raters),
                    "mean_tau": t.mean_tau,
                    "n_prompts": t.n_prompts,
                    "z": t.z,
                    "p_value": t.p_value,
                    "testable": t.testable,
                    "flagged": t.flagged,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)[list(RATER_TAU_COLUMNS)]


def _exclusion_table(outcomes: list[QuestionOutcome]) -> pd.DataFrame:
    rows = [
        {
            "question": o.rankings.question,
            "rater_id": o.rankings.raters[r],
            "rule": RANDOM_RANKER_RULE,
            "mean_tau": float(o.taus.mean_tau[r]),
            "z": float(o.taus.z[r]),
            "p_value": float(o.taus.p_value[r]),
            "n_prompts": int(o.taus.n_prompts[r]),
        }
        for o in outcomes
        for r in np.flatnonzero(o.excluded)
    ]
    return pd.DataFrame(rows, columns=list(EXCLUSION_COLUMNS))


def _names(o: QuestionOutcome, order) -> list[str]:
    return [o.rankings.conditions[c] for c in order]


def _kemeny_summary(o: QuestionOutcome) -> dict[str, dict]:
    def alternative(k):
        return None if k.alternative is None else _names(o, k.alternative)

    return {
        r.prompt: {
            "order": _names(o, r.kemeny.order),
            "distance": r.kemeny.distance,
            "mean_distance": r.kemeny.distance / r.concordance.n_rankings,
            "unique": r.kemeny.unique,
            "n_optimal": r.kemeny.n_optimal,
            "alternative": alternative(r.kemeny),
        }
        for r in o.outcomes
    }


def _pl_summary(o: QuestionOutcome) -> dict[str, dict]:
    return {
        r.prompt: {
            "prior_used": bool(r.pl_fit.prior_used[0]),
            "bootstrap_replicates_with_prior": int(r.pl_fit.prior_used[1:].sum()),
            "bootstrap_replicates_without_estimate": int(
                np.isnan(r.pl_fit.strength[1:]).any(axis=1).sum()
            ),
            "unconverged_fits": int(
                (~r.pl_fit.converged & np.isfinite(r.pl_fit.strength).all(axis=1)).sum()
            ),
            "iterations": r.pl_fit.iterations,
        }
        for r in o.outcomes
    }


def _counts(o: QuestionOutcome) -> dict[str, int]:
    return {
        "conditions": len(o.rankings.conditions),
        "prompts": len(o.rankings.prompts),
        "rankings": int(o.rankings.rater.size),
        "rankings_kept": int(o.kept.rater.size),
        "raters": len(o.rankings.raters),
        "raters_kept": int(np.unique(o.kept.rater).size),
    }
