"""The analysis of single-stimulus slider studies (GAIA Sec. 3.3): exclusions, Z-scored
MOS, alpha, the SRCC curve, correlations between dimensions and the agreement of the
automatic metrics with MOS (quality.stats.analysis does the arithmetic)."""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import pandas as pd

from annotation.models import Stimulus, Study
from quality import export, plots
from quality.designs.base import Analysis, Computed
from quality.designs.common import selection_summary
from quality.designs.slider_adaptive import adaptive_intervals
from quality.selectors import ratings_frame, run_through, study_exclusions
from quality.stats.analysis import ANALYSIS_VERSION, AnalysisSettings, run_analysis
from quality.stats.exclusions import (
    LINE_CLICKER,
    PRE_ANALYSIS_RULES,
    Exclusion,
    ExclusionIndex,
    count_ratings,
)
from quality.stats.mos import MOS_COLUMNS

RULES_APPLIED = (*PRE_ANALYSIS_RULES, LINE_CLICKER)


def settings_for(*, study: Study) -> dict:
    return asdict(
        AnalysisSettings(line_click_share=study.line_click_share, slider_step=study.slider_step)
    )


def execute(*, run) -> Computed:
    """Every rating of the study's sessions, less those the study's exclusions take out,
    through run_analysis; the line clickers it finds join the exclusions."""
    study = run.study
    exclusions = study_exclusions(study=study)
    through = run_through(run)
    ratings = ratings_frame(study=study, through=through)
    if ratings.empty:
        raise ValueError("the study has no ratings yet")
    rules = ExclusionIndex(exclusions).rules(ratings["rater_id"], ratings["session_id"])
    counted = ratings[rules == ""]
    if counted.empty:
        raise ValueError(
            f"every one of the study's {len(ratings)} ratings is excluded "
            f"({', '.join(sorted({e.rule for e in exclusions}))})"
        )
    result = run_analysis(ratings=counted, settings=AnalysisSettings(**run.settings_snapshot))
    summary = result.summary_dict()
    exclusions = _with_line_clickers(exclusions, result.exclusions, ratings, rules)
    summary["exclusions"] = [e.as_dict() for e in exclusions]
    summary["excluded_ratings"] = {
        rule: sum(e.ratings for e in exclusions if e.rule == rule) for rule in RULES_APPLIED
    }
    summary["selection"] = selection_summary(study=study, exclusions=exclusions)
    summary["metric_agreement"] = metric_agreement_for(study, result.mos, summary["all_combined"])
    intervals = adaptive_intervals(study=study, exclusions=exclusions, through=through)
    if intervals is not None:  # the study collects adaptively
        summary["adaptive"] = intervals
    return Computed(
        summary=summary,
        exclusions=summary["exclusions"],
        ratings_count=len(ratings),
        mos=result.mos.to_dict(orient="records"),
        code_version=ANALYSIS_VERSION,
    )


def _with_line_clickers(exclusions: list, line_clickers: list, ratings, rules) -> list:
    """The run's whole list of exclusions: those decided before it, then the line clickers
    it found, each with the number of ratings it took out."""
    clickers = [
        Exclusion(
            rule=LINE_CLICKER,
            rater_id=str(e.rater_id),
            session=None,
            reason=f"line clicker: {e.share:.0%} of {e.n_ratings} ratings at {e.top_score:g}",
            figures={"top_score": e.top_score, "share": e.share, "n_ratings": e.n_ratings},
        )
        for e in line_clickers
    ]
    found = {e.rater_id for e in clickers}
    rater_ids = ratings["rater_id"].astype(str).to_numpy()
    rules = rules.copy()
    rules[(rules == "") & np.isin(rater_ids, list(found))] = LINE_CLICKER
    return count_ratings([*exclusions, *clickers], rater_ids, ratings["session_id"], rules)


CONTENT_FEATURES = ["brightness", "contrast", "colorfulness", "sharpness", "si", "ti"]


def _newest_versions(scores) -> dict[str, str]:
    """{metric: its newest stored version}: a metric whose definition changed (a version
    bump) is compared with people on the new definition only, never on a mix of two.
    Versions are numbers kept as text: the longer, then the greater, is newer ("10" > "9")."""
    by_metric = scores.groupby("metric")["version"]
    return by_metric.agg(lambda versions: max(versions, key=lambda v: (len(v), v))).to_dict()


def metric_agreement_for(study: Study, mos, all_combined: dict) -> dict | None:
    """Agreement of every stored metric with every MOS dimension and All-Combined. Each
    (metric, target) row uses the stimuli that have both and reports its n; the ridge
    predictor uses those with every feature (see ``metric_benchmark``). None when no
    metric has MIN_STIMULI (5) stimuli with a MOS."""
    import pandas as pd

    from media_pipeline.models import MetricScore
    from quality.stats.metric_agreement import MIN_STIMULI, metric_benchmark

    scores = pd.DataFrame(
        list(
            MetricScore.objects.filter(stimulus__study=study).values_list(
                "stimulus_id", "metric", "version", "value"
            )
        ),
        columns=["video_id", "metric", "version", "value"],
    )
    if scores.empty or mos.empty:
        return None
    scores = scores[scores["version"] == scores["metric"].map(_newest_versions(scores))]
    metrics = scores.pivot_table(index="video_id", columns="metric", values="value")
    targets = mos.pivot_table(index="video_id", columns="dimension", values="mos", observed=True)
    targets.index = targets.index.astype(int)
    targets["all_combined"] = pd.Series({int(k): v for k, v in all_combined.items()})
    # Stimuli with some metric and some MOS; NaN marks what one of them lacks.
    stimuli = metrics.index.intersection(targets.index)
    metrics, targets = metrics.reindex(stimuli), targets.reindex(stimuli)
    result = metric_benchmark(
        metrics={m: metrics[m].to_numpy(float) for m in metrics.columns},
        targets={str(t): targets[t].to_numpy(float) for t in targets.columns},
        draws=1000,
        seed=0,
        ridge_features=[f for f in CONTENT_FEATURES if f in metrics.columns],
        min_n=MIN_STIMULI,
    )
    if not result["rows"]:
        return None
    return result | {"stimuli": int(len(stimuli))}


def run_mos_frame(run) -> pd.DataFrame:
    """The run's MOS rows (MOS_COLUMNS, null statistics as NaN) with each stimulus's
    source model and action class; the same columns when the run has no MOS."""
    mos = pd.DataFrame(run.mos, columns=list(MOS_COLUMNS))
    mos = mos.astype({"video_id": "int64", "dimension": object})
    numbers = [c for c in MOS_COLUMNS if c not in ("video_id", "dimension")]
    mos[numbers] = mos[numbers].astype(float)  # None (stored NaN) becomes NaN
    labels = pd.DataFrame(
        list(
            Stimulus.objects.filter(study=run.study).values_list(
                "id", "source_model", "action_class"
            )
        ),
        columns=["video_id", "source_model", "action_class"],
    )
    return mos.merge(labels, on="video_id", how="left")


def draw(*, name: str, run) -> bytes:
    return plots.draw(name, mos=run_mos_frame(run), summary=run.summary)


def agreement_table(agreement: dict | None) -> dict | None:
    """GAIA Tab. 5 for the template: one row per metric, one (SRCC, PLCC, n) cell per
    target, then the trained predictor's rows (n: the stimuli with every feature)."""
    if not agreement:
        return None
    targets = list(dict.fromkeys(row["target"] for row in agreement["rows"]))
    cells: dict[str, dict[str, dict]] = {}
    for row in agreement["rows"]:
        cells.setdefault(row["metric"], {})[row["target"]] = row
    rows = [
        {"metric": metric, "cells": [by_target.get(t) for t in targets]}
        for metric, by_target in sorted(cells.items())
    ]
    trained = agreement.get("ridge") or {}
    if trained:
        features = next(iter(trained.values()))["features"]
        rows.append(
            {
                "metric": "ridge (" + ", ".join(features) + ")",
                "trained": True,
                "cells": [
                    {
                        "srcc": trained[t]["srcc_mean"],
                        "plcc": trained[t]["plcc_mean"],
                        "n": trained[t].get("n", agreement.get("n")),
                    }
                    if t in trained
                    else None
                    for t in targets
                ],
            }
        )
    return {"targets": targets, "rows": rows, "stimuli": agreement.get("stimuli")}


def results_context(*, run) -> dict:
    summary = run.summary
    return {
        "alpha": summary.get("alpha", {}),
        "correlation": summary.get("dimension_correlation", []),
        "agreement": agreement_table(summary.get("metric_agreement")),
        "adaptive": summary.get("adaptive"),
    }


SLIDER_ANALYSIS = Analysis(
    key="slider",
    settings_for=settings_for,
    execute=execute,
    exports=export.EXPORT_NAMES,
    run_exports=export.RUN_EXPORTS,
    export=export.slider_export,
    figures=plots.FIGURES,
    available=plots.available,
    draw=draw,
    results_template="frontend/staff/results/slider.html",
    results_context=results_context,
    rules=RULES_APPLIED,
)
