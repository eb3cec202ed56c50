"""Analysis runs: request one, compute it (in a Celery task), store what came out."""

from __future__ import annotations

import logging
import math
import secrets
from datetime import timedelta
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.models import Rating, Study
from config.task_dispatch import send_on_commit
from quality import export
from quality.models import AnalysisRun, ExportJob
from quality.selectors import exclusions_fingerprint, ratings_frame, study_exclusions
from quality.stats.exclusions import (
    LINE_CLICKER,
    RULES,
    Exclusion,
    ExclusionIndex,
    count_ratings,
)

logger = logging.getLogger(__name__)


def analysis_settings_for(study: Study):
    from quality.stats.analysis import AnalysisSettings

    return AnalysisSettings(line_click_share=study.line_click_share, slider_step=study.slider_step)


def analysis_run_request(*, study: Study, requested_by=None) -> AnalysisRun:
    """Queue an analysis of the study's ratings as they are now (computed on commit)."""
    from quality.tasks import run_analysis

    snapshot = _settings_dict(analysis_settings_for(study))
    run = AnalysisRun.objects.create(
        study=study, requested_by=requested_by, settings_snapshot=snapshot
    )
    send_on_commit(run_analysis, run.pk)
    return run


def _settings_dict(analysis_settings) -> dict:
    from dataclasses import asdict

    return asdict(analysis_settings)


def _clean(value):
    """JSON has no NaN: undefined statistics are stored as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def analysis_run_execute(*, run_id: int) -> None:
    """Compute a queued run; a finished run is left alone, so a redelivery is harmless."""
    from quality.stats.analysis import ANALYSIS_VERSION, AnalysisSettings, run_analysis

    with transaction.atomic():
        run = AnalysisRun.objects.select_for_update().filter(pk=run_id).first()
        if run is None or run.status in (AnalysisRun.Status.DONE, AnalysisRun.Status.FAILED):
            return
        run.status = AnalysisRun.Status.RUNNING
        run.started_at = timezone.now()
        run.save(update_fields=["status", "started_at"])
    study = run.study
    try:
        exclusions = study_exclusions(study=study)
        ratings = ratings_frame(study=study)
        AnalysisRun.objects.filter(pk=run.pk).update(progress=0.2, ratings_count=len(ratings))
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
    except Exception as exc:  # a failed analysis is recorded, never retried blindly
        logger.exception("analysis run %s failed", run.pk)
        AnalysisRun.objects.filter(pk=run.pk).update(
            status=AnalysisRun.Status.FAILED, error=str(exc), finished_at=timezone.now()
        )
        return
    summary = result.summary_dict()
    exclusions = _with_line_clickers(exclusions, result.exclusions, ratings, rules)
    summary["exclusions"] = [e.as_dict() for e in exclusions]
    summary["excluded_ratings"] = {
        rule: sum(e.ratings for e in exclusions if e.rule == rule) for rule in RULES
    }
    summary["selection"] = {
        "keep_failed_gate_sessions": study.keep_failed_gate_sessions,
        "golden_gate_plcc": study.golden_gate_plcc,
        "exclusions_fingerprint": exclusions_fingerprint(study=study, exclusions=exclusions),
    }
    summary["metric_agreement"] = metric_agreement_for(study, result.mos, summary["all_combined"])
    summary = _clean(summary)
    AnalysisRun.objects.filter(pk=run.pk).update(
        status=AnalysisRun.Status.DONE,
        progress=1.0,
        code_version=ANALYSIS_VERSION,
        summary=summary,
        exclusions=summary["exclusions"],
        mos=_clean(result.mos.to_dict(orient="records")),
        finished_at=timezone.now(),
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


def analysis_run_staleness(*, run: AnalysisRun) -> list[str]:
    """Why a finished run no longer shows what the study's ratings say now (empty when
    it does): ratings arrived after it, or the exclusions it applied changed since."""
    study = run.study
    reasons = []
    stored = (run.summary.get("selection") or {}).get("exclusions_fingerprint")
    now = exclusions_fingerprint(study=study, exclusions=study_exclusions(study=study))
    if stored != now:
        reasons.append(
            "exclusions changed since this run (a rater or session was excluded or reopened, "
            "or the golden-gate setting changed)"
        )
    since = run.started_at or run.created_at
    if Rating.objects.filter(dimension__study=study, received_at__gt=since).exists():
        reasons.append("ratings arrived since this run")
    return reasons


def analyse_running_studies() -> list[int]:
    """The periodic job: a fresh run for every running study whose latest run is out of
    date (new ratings, or exclusions changed since) and that has none waiting already."""
    queued = []
    for study in Study.objects.filter(state=Study.State.RUNNING):
        if not Rating.objects.filter(dimension__study=study).exists():
            continue
        # One asked for in the last hour is still to come (a lost one does not block).
        waiting = study.analysis_runs.filter(
            status__in=(AnalysisRun.Status.QUEUED, AnalysisRun.Status.RUNNING),
            created_at__gte=timezone.now() - timedelta(hours=1),
        )
        if waiting.exists():
            continue
        last = study.analysis_runs.filter(status=AnalysisRun.Status.DONE).first()
        if last is not None and not analysis_run_staleness(run=last):
            continue
        queued.append(analysis_run_request(study=study).pk)
    return queued


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


def export_job_request(
    *, study: Study, name: str, run: AnalysisRun | None, requested_by=None
) -> ExportJob:
    """Queue an export to be written to a file (sent on commit). Raises ExportUnavailable
    for an unknown name, or a run export without a finished run, before queueing."""
    from quality.tasks import build_export

    export.export_content(study=study, name=name, run=run)  # checks, streams nothing yet
    job = ExportJob.objects.create(study=study, run=run, name=name, requested_by=requested_by)
    send_on_commit(build_export, job.pk)
    return job


def export_job_execute(*, job_id: int) -> None:
    """Write a queued export to its file: into a temporary name first, renamed when
    complete, so a download never sees half a file. A redelivered finished job is left
    alone; an interrupted one starts over."""
    with transaction.atomic():
        job = ExportJob.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.status in (ExportJob.Status.DONE, ExportJob.Status.FAILED):
            return
        job.status = ExportJob.Status.RUNNING
        job.attempts += 1
        job.started_at = timezone.now()
        job.save(update_fields=["status", "attempts", "started_at"])
    relative = f"exports/{job.study.slug}/{job.pk}-{secrets.token_hex(8)}-{job.name}"
    target = Path(settings.MEDIA_ROOT) / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    try:
        content = export.export_content(study=job.study, name=job.name, run=job.run)
        with partial.open("w", encoding="utf-8", newline="") as handle:
            for line in content.lines:
                handle.write(line)
        partial.replace(target)
    except Exception as exc:  # recorded on the row for the researcher, not retried
        logger.exception("export job %s failed", job.pk)
        partial.unlink(missing_ok=True)
        ExportJob.objects.filter(pk=job.pk).update(
            status=ExportJob.Status.FAILED, error=str(exc), finished_at=timezone.now()
        )
        return
    ExportJob.objects.filter(pk=job.pk).update(
        status=ExportJob.Status.DONE,
        file=relative,
        size_bytes=target.stat().st_size,
        finished_at=timezone.now(),
    )
