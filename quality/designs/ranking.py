"""The analysis of ranking studies (VGA-Bench): per question and prompt, and pooled, Borda
scores, Plackett-Luce strengths with rater-bootstrap intervals, the exact Kemeny
consensus, Kendall's W, each rater's tau to the consensus (random rankers screened out),
and Recall@K of the human consensus against an automatic metric's ranking
(quality.stats.ranking does the arithmetic; `python -m quality rank` runs the same on
the rankings export)."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pandas as pd

from annotation.designs.ranking import settings_of
from annotation.models import Item, RankingPlacement, Study
from annotation.models.session import pseudonym_for
from quality import export
from quality.commands.io import json_ready
from quality.designs.base import Analysis, Computed
from quality.designs.common import finished, with_screened
from quality.export import Export, csv_lines, raw_name, shared_export
from quality.plots import _empty_figure, _png, plt
from quality.selectors import received_by, run_through, study_exclusions
from quality.stats.exclusions import (
    PRE_ANALYSIS_RULES,
    RANDOM_RANKER,
    Exclusion,
    ExclusionIndex,
)
from quality.stats.ranking import RankingSettings, analyse
from quality.stats.ranking.analysis import CONSENSUS_COLUMNS, RANKING_VERSION
from quality.stats.ranking.rankings import format_ranking

RANKINGS_COLUMNS = ("rater_id", "question", "prompt_id", "ranking", "session_id")
RULES_APPLIED = (*PRE_ANALYSIS_RULES, RANDOM_RANKER)
EXPORTS = ("rankings.csv", "consensus.csv", "model_scores.csv", "raters.csv", "provenance.json")
RUN_EXPORTS = ("consensus.csv", "model_scores.csv")
FIGURES = {"rank-distribution": "How often raters put each condition in each place"}
RECALL_DEFINITION = (
    "Recall@K = |top K of the human ranking ∩ top K of the metric's ranking| / K: the "
    "share of the metric's K best conditions that people also put among their K best."
)


def settings_for(*, study: Study) -> dict:
    chosen = settings_of(study)
    return {"bootstrap": chosen.bootstrap, "seed": 0, "against_metric": chosen.against_metric}


def rankings_frame(*, study: Study, through: datetime | None = None) -> pd.DataFrame:
    """A ranking study's session answers to its regular items (received by ``through``)
    in the `python -m quality rank` format (conditions best first, `>` between places,
    `=` within a tied one), with the session index; golden items are quality control, not
    data."""
    placements = RankingPlacement.objects.filter(
        answer__item__study=study,
        answer__item__role=Item.Role.STIMULUS,
        answer__assignment__isnull=False,
    )
    rows = (
        received_by(placements, through)
        .order_by("answer_id", "rank", "stimulus__condition")
        .values_list(
            "answer_id",
            "answer__assignment__rater_id",
            "dimension__key",
            "answer__item__content",
            "stimulus__condition",
            "rank",
            "answer__assignment__session__index",
        )
    )
    answers: dict[int, list] = {}
    for answer, rater, question, prompt, condition, rank, session in rows.iterator():
        entry = answers.setdefault(answer, [rater, question, prompt, {}, session])
        entry[3].setdefault(rank, []).append(condition)
    records = [
        (pseudonym_for(r), q, p, format_ranking([places[k] for k in sorted(places)]), s)
        for r, q, p, places, s in answers.values()
    ]
    frame = pd.DataFrame(records, columns=RANKINGS_COLUMNS)
    frame["session_id"] = frame["session_id"].astype(np.int64)
    return frame


def metric_scores(*, study: Study, metric: str) -> tuple[str, dict[str, float]] | None:
    """The named metric (or the first the study has), its newest version, averaged per
    condition over the study's regular videos; None when the study has none."""
    from media_pipeline.models import MetricScore

    scores = MetricScore.objects.filter(stimulus__study=study, stimulus__role="stimulus").exclude(
        stimulus__condition=""
    )
    if metric:
        scores = scores.filter(metric=metric)
    frame = pd.DataFrame(
        list(scores.values_list("metric", "version", "stimulus__condition", "value")),
        columns=["metric", "version", "condition", "value"],
    )
    if frame.empty:
        return None
    chosen = metric or sorted(frame["metric"].unique())[0]
    frame = frame[frame["metric"] == chosen]
    frame = frame[frame["version"] == max(frame["version"])]
    return chosen, frame.groupby("condition")["value"].mean().to_dict()


def _screened(stats_exclusions: list[dict]) -> list[Exclusion]:
    """The raters the random-ranker rule screened out of a question, as exclusions."""
    return [
        Exclusion(
            rule=e["rule"],
            rater_id=str(e["rater_id"]),
            session=None,
            reason=(
                f"ranked at random in {e['question']}: mean Kendall tau to the consensus "
                f"{e['mean_tau']:.2f} over {e['n_prompts']} prompts (p = {e['p_value']:.2g})"
            ),
            figures={k: e[k] for k in ("mean_tau", "z", "p_value", "n_prompts")},
        )
        for e in stats_exclusions
    ]


def execute(*, run) -> Computed:
    """The study's rankings, less those its exclusions take out, through the ranking
    analysis, against the chosen metric where the study has one; the raters the
    screening leaves out join the exclusions."""
    study = run.study
    exclusions = study_exclusions(study=study)
    rankings = rankings_frame(study=study, through=run_through(run))
    if rankings.empty:
        raise ValueError("the study has no rankings yet")
    rules = ExclusionIndex(exclusions).rules(rankings["rater_id"], rankings["session_id"])
    counted = rankings[rules == ""]
    if counted.empty:
        raise ValueError(f"every one of the study's {len(rankings)} rankings is excluded")
    snapshot = run.settings_snapshot
    against = metric_scores(study=study, metric=snapshot.get("against_metric", ""))
    conditions = {c for r in counted["ranking"] for c in r.replace("=", ">").split(">")}
    if against is not None and not conditions <= set(against[1]):
        against = None  # the metric misses a ranked condition: no comparison
    result = analyse(
        counted[["rater_id", "question", "prompt_id", "ranking"]],
        settings=RankingSettings(bootstrap=snapshot["bootstrap"], seed=snapshot["seed"]),
        model_scores=against[1] if against else None,
    )
    screened = _screened(result.exclusions.to_dict("records"))
    exclusions = with_screened(exclusions, screened, rows=rankings, rules=rules)
    summary = json_ready(result.summary_dict())
    summary["consensus"] = json_ready(result.consensus.to_dict(orient="records"))
    summary["rank_distribution"] = json_ready(result.rank_distribution.to_dict("records"))
    summary["against_metric"] = against[0] if against else None
    # the scores Recall@K was measured against, as they were (model_scores.csv)
    summary["model_scores"] = json_ready(against[1]) if against else None
    return finished(
        study=study, summary=summary, exclusions=exclusions, rules=RULES_APPLIED,
        rows=len(rankings), version=RANKING_VERSION,
    )  # fmt: skip


def export_ranking(*, study: Study, name: str, run) -> Export:
    slug = study.slug
    csv_type = "text/csv; charset=utf-8"
    if name == "rankings.csv":
        index = ExclusionIndex(export.run_exclusions(study=study, run=run))
        frame = rankings_frame(study=study, through=run_through(run))
        rows = ((*row, index.rule(row[0], row[4])) for row in frame.itertuples(index=False))
        lines = csv_lines([*RANKINGS_COLUMNS, "excluded"], rows)
        return Export(lines, raw_name(study, name, run), csv_type)
    if name == "consensus.csv":
        frame = pd.DataFrame(run.summary.get("consensus", []), columns=list(CONSENSUS_COLUMNS))
        lines = csv_lines(CONSENSUS_COLUMNS, frame.itertuples(index=False, name=None))
        return Export(lines, f"{slug}-consensus-run{run.pk}.csv", csv_type)
    if name == "model_scores.csv":  # `python -m quality rank --against`'s input
        scores = run.summary.get("model_scores") or {}
        lines = csv_lines(("condition", "score"), sorted(scores.items()))
        return Export(lines, f"{slug}-model-scores-run{run.pk}.csv", csv_type)
    return shared_export(study=study, name=name, run=run)


def available(summary: dict) -> list[str]:
    return ["rank-distribution"] if summary.get("rank_distribution") else []


def rank_distribution(rows: list[dict]) -> bytes:
    """One panel per question: per condition, the share of rankings that put it in each
    place (stacked, first place darkest)."""
    if not rows:
        return _empty_figure(FIGURES["rank-distribution"], "no ranking yet")
    questions = list(dict.fromkeys(r["question"] for r in rows))
    fig, axes = plt.subplots(
        len(questions), 1, figsize=(7, 1.5 + 2.4 * len(questions)), layout="constrained"
    )
    axes = np.atleast_1d(axes)
    for ax, question in zip(axes, questions, strict=True):
        mine = [r for r in rows if r["question"] == question]
        conditions = sorted({r["condition"] for r in mine})
        places = sorted({int(r["place"]) for r in mine})
        counts = np.zeros((len(conditions), len(places)))
        for r in mine:
            counts[conditions.index(r["condition"]), places.index(int(r["place"]))] += r["count"]
        shares = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
        left = np.zeros(len(conditions))
        colours = plt.cm.viridis(np.linspace(0, 0.9, len(places)))
        for j, place in enumerate(places):
            ax.barh(conditions, shares[:, j], left=left, color=colours[j], label=f"place {place}")
            left += shares[:, j]
        ax.set_xlim(0, 1)
        ax.set_title(question, fontsize="medium")
        # outside, to the right: inside it would cover the bars
        ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    axes[-1].set_xlabel("share of rankings")
    fig.suptitle(FIGURES["rank-distribution"], fontsize="medium")
    return _png(fig)


def draw(*, name: str, run) -> bytes:
    if name == "rank-distribution":
        return rank_distribution(run.summary.get("rank_distribution", []))
    raise KeyError(name)


def _table(kemeny: dict, question: str, prompt: str) -> dict:
    """A consensus table: its rows, and a note where the Kemeny order is not unique."""
    found = kemeny.get(question, {}).get(prompt) or {}
    note = ""
    if found and not found.get("unique", True):
        alternative = " > ".join(found.get("alternative") or [])
        note = f"not unique: {found.get('n_optimal')} orders are as close, e.g. {alternative}"
    return {"prompt": prompt, "rows": [], "note": note}


def results_context(*, run) -> dict:
    """The consensus per question (pooled first, then per prompt), Kendall's W, and the
    Recall@K table against the metric."""
    summary = run.summary
    kemeny = summary.get("kemeny", {})
    blocks: dict[str, dict] = {}
    for row in summary.get("consensus", []):
        question, prompt = row["question"], row["prompt_id"]
        block = blocks.setdefault(question, {"pooled": None, "prompts": {}})
        if prompt == "*":
            table = block["pooled"] = block["pooled"] or _table(kemeny, question, prompt)
        else:
            table = block["prompts"].setdefault(prompt, _table(kemeny, question, prompt))
        table["rows"].append(row)
    taus = [
        {"question": question, "rater_id": rater, **figures}
        for question, by_rater in (summary.get("rater_taus") or {}).items()
        for rater, figures in sorted(by_rater.items())
    ]
    recall = summary.get("recall_at") or {}
    per_rater = summary.get("recall_at_per_rater") or {}
    correlation = summary.get("model_correlation") or {}
    recall_rows = [
        {
            "question": question,
            "k": k,
            "consensus": value,
            "per_rater": per_rater.get(question, {}).get(k, {}),
            "correlation": correlation.get(question, {}),
        }
        for question, by_k in recall.items()
        for k, value in by_k.items()
    ]
    return {
        "consensus_by_question": blocks,
        "rater_taus": taus,
        "kendall_w": summary.get("kendall_w", {}),
        "against_metric": summary.get("against_metric"),
        "recall_rows": recall_rows,
        "recall_definition": RECALL_DEFINITION,
    }


RANKING_ANALYSIS = Analysis(
    key="ranking",
    settings_for=settings_for,
    execute=execute,
    exports=EXPORTS,
    run_exports=RUN_EXPORTS,
    export=export_ranking,
    figures=FIGURES,
    available=available,
    draw=draw,
    results_template="frontend/staff/results/ranking.html",
    results_context=results_context,
    rules=RULES_APPLIED,
    rows_noun="rankings",
)
