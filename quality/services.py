"""Analysis runs: request one, compute it (in a Celery task), store what came out."""

from __future__ import annotations

import logging
import math
import secrets
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.models import Answer, Study
from config.task_dispatch import send_on_commit
from quality import export
from quality.designs import analysis_of
from quality.models import AnalysisRun, ExportJob
from quality.selectors import exclusions_fingerprint, study_exclusions

logger = logging.getLogger(__name__)


def analysis_run_request(*, study: Study, requested_by=None) -> AnalysisRun:
    """Queue an analysis of the study's answers as they are now (computed on commit), with
    its design's settings as they are now."""
    from quality.tasks import run_analysis

    snapshot = analysis_of(study).settings_for(study=study)
    run = AnalysisRun.objects.create(
        study=study, requested_by=requested_by, settings_snapshot=snapshot
    )
    send_on_commit(run_analysis, run.pk)
    return run


def clean(value):
    """JSON has no NaN: undefined statistics are stored as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean(v) for v in value]
    return value


def analysis_run_execute(*, run_id: int) -> None:
    """Compute a queued run; a finished run is left alone, so a redelivery is harmless."""
    with transaction.atomic():
        run = AnalysisRun.objects.select_for_update().filter(pk=run_id).first()
        if run is None or run.status in (AnalysisRun.Status.DONE, AnalysisRun.Status.FAILED):
            return
        run.status = AnalysisRun.Status.RUNNING
        run.started_at = timezone.now()
        run.save(update_fields=["status", "started_at"])
    try:
        computed = analysis_of(run.study).execute(run=run)
    except Exception as exc:  # a failed analysis is recorded, never retried blindly
        logger.exception("analysis run %s failed", run.pk)
        AnalysisRun.objects.filter(pk=run.pk).update(
            status=AnalysisRun.Status.FAILED, error=str(exc), finished_at=timezone.now()
        )
        return
    AnalysisRun.objects.filter(pk=run.pk).update(
        status=AnalysisRun.Status.DONE,
        progress=1.0,
        code_version=computed.code_version,
        ratings_count=computed.ratings_count,
        summary=clean(computed.summary),
        exclusions=clean(computed.exclusions),
        mos=clean(computed.mos),
        finished_at=timezone.now(),
    )


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
    answers = Answer.objects.filter(item__study=study, assignment__isnull=False)
    if answers.filter(received_at__gt=since).exists():
        reasons.append("ratings arrived since this run")
    return reasons


def analyse_running_studies() -> list[int]:
    """The periodic job: a fresh run for every running study whose latest run is out of
    date (new ratings, or exclusions changed since) and that has none waiting already."""
    queued = []
    for study in Study.objects.filter(state=Study.State.RUNNING):
        if not Answer.objects.filter(item__study=study, assignment__isnull=False).exists():
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
