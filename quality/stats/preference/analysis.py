"""The whole side-by-side analysis in one call: ``analyse(judgments, settings=...)``.

1. check and encode the judgments (``judgments``);
2. per-rater figures on all judgments and, with ``screen``, the exclusions (``raters``);
3. per-rater pair counts of the kept judgments (``counts``), the pair table with Wilson
   intervals, Krippendorff's nominal alpha per question (``reliability``);
4. per question, the scale: the model fitted to all kept judgments (point estimate,
   rank), then to every rater-bootstrap replicate at once, warm-started from the point
   estimate (``bootstrap``, ``fit``): percentile intervals of score and rank.

The same bootstrap weights over raters serve every question, so a replicate keeps a
rater's judgments of all questions together.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from quality.stats.preference.bootstrap import (
    descending_ranks,
    percentile_interval,
    rank_interval,
    rater_weights,
    replicate_counts,
)
from quality.stats.preference.counts import (
    QuestionCounts,
    pair_table,
    pair_tensors,
)
from quality.stats.preference.fit import BatchFit, fit_batch
from quality.stats.preference.judgments import JudgmentsError, JudgmentTable, encode_judgments
from quality.stats.preference.models import MODELS, PairModel
from quality.stats.preference.raters import RATER_COLUMNS, rater_figures, screen_raters
from quality.stats.preference.reliability import preference_alpha

# Bump when a change to this package changes any number or name a stored run holds.
PREFERENCE_VERSION = "quality.stats.preference/1"
REPLICATE_CELLS = 2_000_000  # replicates x pairs per batched fit (analyse's chunks)
SCALE_COLUMNS = (
    "question",
    "condition",
    "score",
    "ci95_low",
    "ci95_high",
    "rank",
    "rank_low",
    "rank_high",
    "n",
)


class ScaleUndefinedError(ValueError):
    """With prior = 0 the maximum-likelihood scale of a question is not finite."""


@dataclass(frozen=True)
class PreferenceSettings:
    """Settings of one side-by-side analysis (defaults documented here, nowhere else).

    model: one of ``MODELS`` (bradley-terry, davidson, rao-kupper, thurstone).
    bootstrap: rater-bootstrap replicates (0: no intervals); seed: their seed.
    prior: precision of the Gaussian prior N(0, 1 / prior) on each score, in the model's
        units (``quality.stats.preference.fit``); 0.01 (sd 10) barely moves a scale with
        data both ways but keeps a condition that never loses finite. 0: plain maximum
        likelihood (an error when it is not finite).
    screen: exclude raters by the rule of ``quality.stats.preference.raters`` before
        fitting, with ``screen_p_value`` and ``screen_min_answers``.
    confidence: level of every interval (Wilson, bootstrap).
    """

    model: str = "bradley-terry"
    bootstrap: int = 1000
    seed: int = 0
    prior: float = 0.01
    screen: bool = True
    confidence: float = 0.95
    screen_p_value: float = 0.001
    screen_min_answers: int = 20

    def __post_init__(self) -> None:
        if self.model not in MODELS:
            raise ValueError(f"model must be one of {', '.join(MODELS)}, not {self.model!r}")
        if self.bootstrap < 0:
            raise ValueError("bootstrap must be 0 or more")
        if not (math.isfinite(self.prior) and self.prior >= 0):
            raise ValueError("prior must be a finite number >= 0")
        if not 0.0 < self.confidence < 1.0:
            raise ValueError("confidence must be in (0, 1)")
        if not 0.0 < self.screen_p_value < 1.0:
            raise ValueError("screen_p_value must be in (0, 1)")
        if self.screen_min_answers < 1:
            raise ValueError("screen_min_answers must be at least 1")


@dataclass(frozen=True, eq=False)
class PreferenceResult:
    """Everything ``analyse`` computed.

    scale: SCALE_COLUMNS, per question best first; pairs: PAIR_COLUMNS plus tie_share;
    raters: RATER_COLUMNS plus ``excluded``; exclusions: screening records (raters module);
    tie_parameter: per question {"name", "value", "ci95_low", "ci95_high"} (name and
    values None / NaN for the half-win models); log_likelihood: per question, the
    model's plain log-likelihood at the point estimate (natural log; half-win models:
    ties as half a win each way); alpha: Krippendorff's nominal alpha per question on the
    kept judgments; bootstrap_scores: per question (replicates, conditions) in the order
    of ``bootstrap_conditions``; bootstrap_undefined: replicates without a finite scale
    (prior = 0 only) or not converged, left out of the intervals.
    """

    settings: PreferenceSettings
    questions: list[str]
    scale: pd.DataFrame
    pairs: pd.DataFrame
    raters: pd.DataFrame
    exclusions: list[dict]
    tie_parameter: dict[str, dict]
    log_likelihood: dict[str, float]
    alpha: dict[str, float]
    iterations: dict[str, int]
    bootstrap_undefined: dict[str, int]
    bootstrap_scores: dict[str, np.ndarray]
    bootstrap_conditions: dict[str, list[str]]
    n_judgments: int
    n_judgments_kept: int
    n_conditions: int
    timings: dict[str, float] = field(default_factory=dict)  # seconds per step, not stored

    def summary_dict(self) -> dict:
        """JSON-ready summary (str keys, Python numbers; NaN stays float NaN, callers map
        it to null as ``quality.commands.io.json_ready`` does)."""
        model = MODELS[self.settings.model]
        return {
            "version": PREFERENCE_VERSION,
            "settings": asdict(self.settings),
            "model": model.name,
            "unit": model.unit,
            "questions": list(self.questions),
            "counts": {
                "judgments": self.n_judgments,
                "judgments_kept": self.n_judgments_kept,
                "raters": int(len(self.raters)),
                "raters_kept": int((~self.raters["excluded"]).sum()),
                "conditions": self.n_conditions,
            },
            "tie_parameter": {q: dict(v) for q, v in self.tie_parameter.items()},
            "log_likelihood": dict(self.log_likelihood),
            "alpha": dict(self.alpha),
            "iterations": dict(self.iterations),
            "bootstrap_undefined": dict(self.bootstrap_undefined),
            "raters": self.raters.to_dict(orient="records"),
            "exclusions": [dict(e) for e in self.exclusions],
        }


def analyse(judgments: pd.DataFrame, *, settings: PreferenceSettings) -> PreferenceResult:
    """The side-by-side analysis of ``judgments`` (module docstring).

    Raises JudgmentsError for unusable judgments (or when screening excludes every
    rater) and ScaleUndefinedError when prior = 0 and a question's scale is not finite.
    """
    timings: dict[str, float] = {}
    clock = time.perf_counter()
    table = encode_judgments(judgments=judgments)
    timings["encode"] = time.perf_counter() - clock

    clock = time.perf_counter()
    all_tensors = pair_tensors(table=table)
    figures = rater_figures(table=table, tensors=all_tensors)
    exclusions = (
        screen_raters(
            figures=figures,
            p_value=settings.screen_p_value,
            min_answers=settings.screen_min_answers,
        )
        if settings.screen
        else []
    )
    excluded_ids = {e["rater_id"] for e in exclusions}
    figures["excluded"] = figures["rater_id"].isin(excluded_ids).to_numpy()
    kept_rater = ~np.isin(table.raters, list(excluded_ids))
    kept = table.subset(kept_rater[table.rater]) if excluded_ids else table
    if kept.n_judgments == 0:
        raise JudgmentsError(
            f"screening excluded every rater ({len(excluded_ids)}); nothing left to analyse"
        )
    tensors = pair_tensors(table=kept) if excluded_ids else all_tensors
    pairs = pair_table(tensors=tensors, table=kept, confidence=settings.confidence)
    alpha = preference_alpha(table=kept)
    timings["raters_pairs_alpha"] = time.perf_counter() - clock

    clock = time.perf_counter()
    model = MODELS[settings.model]
    weights = rater_weights(
        n_raters=tensors.raters.size, replicates=settings.bootstrap, seed=settings.seed
    )
    scales, ties, logliks, iterations, undefined, boot, boot_conditions = [], {}, {}, {}, {}, {}, {}
    for counts in tensors.questions:
        question = str(kept.questions[counts.question])
        point, replicates = _fit_question(counts, kept, model, settings, weights, question)
        conditions = kept.conditions[counts.conditions]
        scales.append(_scale_rows(question, conditions, counts, point, replicates, settings))
        ties[question] = _tie_summary(model, point, replicates, settings)
        logliks[question] = float(point.loglik[0])
        iterations[question] = max(point.iterations, replicates.iterations)
        undefined[question] = int((~replicates.converged).sum())
        boot[question] = replicates.scores
        boot_conditions[question] = [str(c) for c in conditions]
    timings["scale"] = time.perf_counter() - clock

    scale = pd.concat(scales, ignore_index=True)
    return PreferenceResult(
        settings=settings,
        questions=[str(q) for q in kept.questions[[c.question for c in tensors.questions]]],
        scale=scale,
        pairs=pairs,
        raters=figures[[*RATER_COLUMNS, "excluded"]],
        exclusions=exclusions,
        tie_parameter=ties,
        log_likelihood=logliks,
        alpha=alpha,
        iterations=iterations,
        bootstrap_undefined=undefined,
        bootstrap_scores=boot,
        bootstrap_conditions=boot_conditions,
        n_judgments=table.n_judgments,
        n_judgments_kept=kept.n_judgments,
        n_conditions=int(np.unique(np.concatenate([kept.condition_a, kept.condition_b])).size),
        timings=timings,
    )


def _fit_question(
    counts: QuestionCounts,
    table: JudgmentTable,
    model: PairModel,
    settings: PreferenceSettings,
    weights: np.ndarray,
    question: str,
) -> tuple[BatchFit, BatchFit]:
    structure = {
        "model": model,
        "pair_a": counts.pair_a,
        "pair_b": counts.pair_b,
        "n_conditions": counts.n_conditions,
        "prior": settings.prior,
    }
    total = counts.per_rater.sum(axis=0)
    point = fit_batch(counts=total[None, :], **structure)
    if not point.defined[0]:
        raise ScaleUndefinedError(_undefined_message(counts, table, model, question))
    if not point.converged[0]:  # pragma: no cover (the iteration converges on a concave L)
        raise RuntimeError(f"question {question!r}: the {model.name} fit did not converge")
    # Chunks of replicates keep each (replicates x pairs) array near 16 MB, so a study with
    # many conditions does not need gigabytes; the arena-sized one is a single chunk.
    chunk = max(1, REPLICATE_CELLS // max(1, counts.n_pairs))
    parts = [
        fit_batch(
            counts=replicate_counts(
                weights=weights[start : start + chunk], per_rater=counts.per_rater
            ),
            start_scores=point.scores[0],
            start_tie=float(point.tie_internal[0]),
            **structure,
        )
        for start in range(0, weights.shape[0], chunk)
    ]
    return point, _joined(parts, counts.n_conditions)


def _joined(parts: list[BatchFit], n_conditions: int) -> BatchFit:
    if not parts:  # no bootstrap
        empty = np.empty(0)
        return BatchFit(
            scores=np.empty((0, n_conditions)),
            tie=empty,
            tie_internal=empty,
            loglik=empty,
            defined=np.empty(0, dtype=bool),
            converged=np.empty(0, dtype=bool),
            iterations=0,
        )
    if len(parts) == 1:
        return parts[0]
    return BatchFit(
        **{
            name: np.concatenate([getattr(p, name) for p in parts])
            for name in ("scores", "tie", "tie_internal", "loglik", "defined", "converged")
        },
        iterations=max(p.iterations for p in parts),
    )


def _undefined_message(counts, table, model, question) -> str:
    """Why the maximum-likelihood scale is not finite (quality.stats.preference.existence)."""
    wins_a, wins_b, ties = counts.totals()
    n = counts.n_conditions
    names = table.conditions[counts.conditions]

    def per_condition(for_a, for_b):
        return np.bincount(counts.pair_a, for_a, n) + np.bincount(counts.pair_b, for_b, n)

    # A tie is a half win and a half loss: it links its two conditions both ways.
    won, lost = (
        per_condition(wins_a + ties, wins_b + ties),
        per_condition(wins_b + ties, wins_a + ties),
    )
    problems = []
    if (lost == 0).any():
        problems.append(f"never lose: {', '.join(map(str, names[lost == 0]))}")
    if (won == 0).any():
        problems.append(f"never win: {', '.join(map(str, names[won == 0]))}")
    if not problems and model.tie_parameter is not None:
        if (wins_a + wins_b).sum() == 0:
            problems.append("no decisive judgment: the tie parameter has no finite fit")
        else:
            unbeaten = per_condition(wins_b, wins_a) == 0
            problems.append(
                "the scores and the tie parameter can run off together, the ties never "
                "pinning a winner to its losers"
                + (
                    f" (never lose a decisive judgment: {', '.join(map(str, names[unbeaten]))})"
                    if unbeaten.any()
                    else ""
                )
            )
    if not problems:
        problems.append(
            "the comparisons split the conditions into groups that never beat each other both ways"
        )
    return (
        f"question {question!r}: the {model.name} scale has no finite maximum-likelihood "
        f"solution without a prior ({'; '.join(problems)}); use a prior > 0"
    )


def _scale_rows(question, conditions, counts, point, replicates, settings) -> pd.DataFrame:
    wins_a, wins_b, ties = counts.totals()
    per_pair = wins_a + wins_b + ties
    n = np.bincount(counts.pair_a, per_pair, counts.n_conditions) + np.bincount(
        counts.pair_b, per_pair, counts.n_conditions
    )
    score = point.scores[0]
    low, high = percentile_interval(replicates.scores, confidence=settings.confidence)
    rank_low, rank_high = rank_interval(
        descending_ranks(replicates.scores), confidence=settings.confidence
    )
    frame = pd.DataFrame(
        {
            "question": question,
            "condition": conditions,
            "score": score,
            "ci95_low": low,
            "ci95_high": high,
            "rank": descending_ranks(score)[0].astype(np.int64),
            "rank_low": pd.array(rank_low, dtype="Int64"),
            "rank_high": pd.array(rank_high, dtype="Int64"),
            "n": n.astype(np.int64),
        }
    )
    return frame.sort_values(["rank", "condition"], kind="stable", ignore_index=True)


def _tie_summary(model, point, replicates, settings) -> dict:
    if model.tie_parameter is None:
        return {"name": None, "value": math.nan, "ci95_low": math.nan, "ci95_high": math.nan}
    low, high = percentile_interval(replicates.tie[:, None], confidence=settings.confidence)
    return {
        "name": model.tie_parameter,
        "value": float(point.tie[0]),
        "ci95_low": float(low[0]),
        "ci95_high": float(high[0]),
    }
