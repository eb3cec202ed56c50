"""The analysis of side-by-side preference studies (WYD): per condition pair wins, losses,
ties and win rates, a scale of the conditions per question with rater-bootstrap intervals,
and each rater's position bias and agreement (quality.stats.preference does the
arithmetic; `python -m quality compare` runs the same on the judgments export)."""

from __future__ import annotations

import pandas as pd

from annotation.designs.preference import settings_of
from annotation.models import Study
from quality import export, plots_preference
from quality.designs.base import Analysis, Computed
from quality.designs.common import finished, with_screened
from quality.export import Export, csv_lines, raw_name, shared_export
from quality.selectors import JUDGMENTS_COLUMNS, judgments_frame, run_through, study_exclusions
from quality.stats.exclusions import (
    DISAGREES_WITH_MAJORITY,
    POSITION_BIAS,
    PRE_ANALYSIS_RULES,
    Exclusion,
    ExclusionIndex,
)
from quality.stats.preference import (
    PAIR_COLUMNS,
    SCALE_COLUMNS,
    PreferenceSettings,
    analyse,
)
from quality.stats.preference.analysis import PREFERENCE_VERSION

RULES_APPLIED = (*PRE_ANALYSIS_RULES, POSITION_BIAS, DISAGREES_WITH_MAJORITY)
EXPORTS = ("judgments.csv", "scale.csv", "pairs.csv", "raters.csv", "provenance.json")
RUN_EXPORTS = ("scale.csv", "pairs.csv")


def settings_for(*, study: Study) -> dict:
    chosen = settings_of(study)
    return {"model": chosen.scale_model, "bootstrap": chosen.bootstrap, "seed": 0}


def _screened(stats_exclusions: list[dict]) -> list[Exclusion]:
    """The raters the analysis screened out, as exclusions with their figures."""
    reasons = {
        POSITION_BIAS: "chose the {side} side in {share:.0%} of {n} decisive answers "
        "(binomial p = {p_value:.2g})",
        DISAGREES_WITH_MAJORITY: "agreed with the other raters' majority in {share:.0%} of "
        "{n} decisive answers (p = {p_value:.2g})",
    }
    screened = []
    for e in stats_exclusions:
        side = "left" if e["share"] >= 0.5 else "right"
        share = e["share"] if e["rule"] != POSITION_BIAS or side == "left" else 1 - e["share"]
        screened.append(
            Exclusion(
                rule=e["rule"],
                rater_id=str(e["rater_id"]),
                session=None,
                reason=reasons[e["rule"]].format(
                    side=side, share=share, n=e["n"], p_value=e["p_value"]
                ),
                figures={k: e[k] for k in ("share", "n", "p_value")},
            )
        )
    return screened


def execute(*, run) -> Computed:
    """The study's judgments, less those its exclusions take out, through the preference
    analysis; the raters its screening leaves out join the exclusions."""
    study = run.study
    exclusions = study_exclusions(study=study)
    judgments = judgments_frame(study=study, through=run_through(run))
    if judgments.empty:
        raise ValueError("the study has no judgments yet")
    rules = ExclusionIndex(exclusions).rules(judgments["rater_id"], judgments["session_id"])
    counted = judgments[rules == ""]
    if counted.empty:
        raise ValueError(
            f"every one of the study's {len(judgments)} judgments is excluded "
            f"({', '.join(sorted({e.rule for e in exclusions}))})"
        )
    result = analyse(counted, settings=PreferenceSettings(**run.settings_snapshot))
    screened = _screened(result.exclusions)
    exclusions = with_screened(exclusions, screened, rows=judgments, rules=rules)
    summary = result.summary_dict()
    summary["scale"] = result.scale.to_dict(orient="records")
    summary["pairs"] = result.pairs.to_dict(orient="records")
    return finished(
        study=study, summary=summary, exclusions=exclusions, rules=RULES_APPLIED,
        rows=len(judgments), version=PREFERENCE_VERSION,
    )  # fmt: skip


def _judgments_lines(*, study: Study, run) -> object:
    """The `python -m quality compare` input (rater_id,question,content_id,left,right,
    choice) with the session and the rule that left each judgment out of the run
    (empty when it counts)."""
    index = ExclusionIndex(export.run_exclusions(study=study, run=run))
    frame = judgments_frame(study=study, through=run_through(run))
    rows = ((*row, index.rule(row[0], row[6])) for row in frame.itertuples(index=False, name=None))
    return csv_lines([*JUDGMENTS_COLUMNS, "excluded"], rows)


def _table_lines(run, key: str, columns) -> object:
    frame = pd.DataFrame(run.summary.get(key, []), columns=list(columns))
    return csv_lines(columns, frame.itertuples(index=False, name=None))


def export_preference(*, study: Study, name: str, run) -> Export:
    slug = study.slug
    csv_type = "text/csv; charset=utf-8"
    if name == "judgments.csv":
        return Export(_judgments_lines(study=study, run=run), raw_name(study, name, run), csv_type)
    if name == "scale.csv":
        lines = _table_lines(run, "scale", SCALE_COLUMNS)
        return Export(lines, f"{slug}-scale-run{run.pk}.csv", csv_type)
    if name == "pairs.csv":
        lines = _table_lines(run, "pairs", PAIR_COLUMNS)
        return Export(lines, f"{slug}-pairs-run{run.pk}.csv", csv_type)
    return shared_export(study=study, name=name, run=run)


def draw(*, name: str, run) -> bytes:
    return plots_preference.draw(name, summary=run.summary)


def results_context(*, run) -> dict:
    """The scale per question (best first), the pairs and the raters' figures."""
    summary = run.summary
    questions: dict[str, list[dict]] = {}
    for row in summary.get("scale", []):
        questions.setdefault(row["question"], []).append(row)
    return {
        "model": summary.get("model"),
        "unit": summary.get("unit"),
        "scale_by_question": questions,
        "pairs": summary.get("pairs", []),
        "tie_parameter": summary.get("tie_parameter", {}),
        "preference_alpha": summary.get("alpha", {}),
        "preference_raters": summary.get("raters", []),
    }


PREFERENCE_ANALYSIS = Analysis(
    key="preference",
    settings_for=settings_for,
    execute=execute,
    exports=EXPORTS,
    run_exports=RUN_EXPORTS,
    export=export_preference,
    figures=plots_preference.FIGURES,
    available=plots_preference.available,
    draw=draw,
    results_template="frontend/staff/results/preference.html",
    results_context=results_context,
    rules=RULES_APPLIED,
    rows_noun="judgments",
)
