"""Analysis runs and export jobs: request one, compute it (in a Celery task), store what
came out.

A request made again while its twin still waits (a double click, a replayed request) gets
the waiting row back rather than a second one. A row's task message can be lost (the
broker down when it was sent, or with a worker killed mid-run): `sweep_stale_requests`,
run by beat, sends a waiting row again, takes back a run whose worker died and ends one
past its time limit with its reason. A message delivered twice computes a row once: a
worker takes a row only while no live worker holds it (config.run_liveness).
"""

from __future__ import annotations

import json
import logging
import math
import secrets
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from annotation.models import Answer, Study
from config.run_liveness import db_session, live_db_sessions, run_abandoned, run_past_limit
from config.task_dispatch import send_now, send_on_commit
from quality import export
from quality.designs import analysis_of
from quality.models import AnalysisRun, ExportJob
from quality.selectors import exclusions_fingerprint, study_exclusions

logger = logging.getLogger(__name__)

# The tasks' hard time limits (quality.tasks): a row running longer than this has lost
# its worker.
ANALYSIS_TIME_LIMIT_S = 660
EXPORT_TIME_LIMIT_S = 1860
# A row whose worker died this many times (out of memory on it, say) is given up.
MAX_ATTEMPTS = 3


def analysis_run_request(*, study: Study, requested_by=None) -> AnalysisRun:
    """Queue an analysis of the study's answers, with its design's settings as they are
    now; it sees every answer up to when a worker takes it. While a run of the study with
    the same settings still waits to be taken, that run is returned instead of a second
    one (it will compute the same thing); the study's row lock makes two requests at once
    agree on one run."""
    from quality.tasks import run_analysis

    snapshot = json.loads(
        json.dumps(analysis_of(study).settings_for(study=study), cls=DjangoJSONEncoder)
    )
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=study.pk).first()
        for waiting in study.analysis_runs.filter(status=AnalysisRun.Status.QUEUED):
            if waiting.settings_snapshot == snapshot:
                logger.info("analysis run %s of %s still waits: asked again", waiting.pk, study)
                return waiting
        run = AnalysisRun.objects.create(
            study=study, requested_by=requested_by, settings_snapshot=snapshot
        )
        send_on_commit(run_analysis, run.pk)
    return run


def _taken(model, pk: int, *, limit_s: int):
    """The row, locked and marked running in this worker's name, unless it is done,
    failed or gone, or a live worker runs it (a duplicate message: not computed twice).
    A running row whose worker is gone (the message came back: acks_late,
    reject_on_worker_lost) is started over, up to MAX_ATTEMPTS takes, then failed."""
    row = model.objects.select_for_update().filter(pk=pk).first()
    if row is None or row.status in (model.Status.DONE, model.Status.FAILED):
        return None
    now = timezone.now()
    if row.status == model.Status.RUNNING:
        live = live_db_sessions([row.runner_session])
        if not run_abandoned(row, limit_s=limit_s, now=now, live_sessions=live):
            logger.info("%s is running in another worker: not run twice", row)
            return None
        logger.warning("%s was running since %s, its worker is gone", row, row.started_at)
    if row.attempts >= MAX_ATTEMPTS:
        row.status = model.Status.FAILED
        row.error = _worker_lost_error(row.attempts)
        row.finished_at = now
        row.save(update_fields=["status", "error", "finished_at"])
        logger.error("%s given up: %s", row, row.error)
        return None
    row.status = model.Status.RUNNING
    row.attempts += 1
    row.started_at = now
    row.runner_session = db_session()
    row.save(update_fields=["status", "attempts", "started_at", "runner_session"])
    return row


def _worker_lost_error(attempts: int) -> str:
    return (
        f"its worker stopped before it finished, {attempts} times (killed, restarted or "
        "out of memory); ask for it again"
    )


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
    """Compute a queued run; a finished run is left alone, so a redelivery or a second
    send is harmless."""
    with transaction.atomic():
        run = _taken(AnalysisRun, run_id, limit_s=ANALYSIS_TIME_LIMIT_S)
        if run is None:
            return
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
    for an unknown name, or a run export without a finished run, before queueing. While
    the same export (name and run) still waits to be taken, that job is returned instead
    of a second one."""
    from quality.tasks import build_export

    export.export_content(study=study, name=name, run=run)  # checks, streams nothing yet
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=study.pk).first()
        waiting = ExportJob.objects.filter(
            study=study, run=run, name=name, status=ExportJob.Status.QUEUED
        ).first()
        if waiting is not None:
            logger.info("export job %s of %s still waits: asked again", waiting.pk, study)
            return waiting
        job = ExportJob.objects.create(study=study, run=run, name=name, requested_by=requested_by)
        send_on_commit(build_export, job.pk)
    return job


def export_job_execute(*, job_id: int) -> None:
    """Write a queued export to its file: into a temporary name first, renamed when
    complete, so a download never sees half a file. A redelivered finished job is left
    alone; an interrupted one starts over."""
    with transaction.atomic():
        job = _taken(ExportJob, job_id, limit_s=EXPORT_TIME_LIMIT_S)
        if job is None:
            return
    partial = None
    try:
        content = export.export_content(study=job.study, name=job.name, run=job.run)
        # named as the streamed export is (its run's id included): the download's name
        relative = f"exports/{job.study.slug}/{job.pk}-{secrets.token_hex(8)}-{content.filename}"
        target = Path(settings.MEDIA_ROOT) / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".part")
        with partial.open("w", encoding="utf-8", newline="") as handle:
            for line in content.lines:
                handle.write(line)
        partial.replace(target)
    except Exception as exc:  # recorded on the row for the researcher, not retried
        logger.exception("export job %s failed", job.pk)
        if partial is not None:
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


def sweep_stale_requests(*, older_than_s: int = 300) -> dict[str, list[int]]:
    """Keep analysis runs and export jobs moving. A row still queued `older_than_s`
    seconds after it was asked for lost its message (the broker was down) and is sent
    again. A running row whose worker's session has ended lost its worker (killed,
    restarted, out of memory): it is queued and sent again, or failed once it has been
    taken MAX_ATTEMPTS times. A row running past its task's hard time limit was stopped
    by Celery and is failed with the reason, rather than left running for ever or run in
    a loop. Returns the ids sent again and failed. Sending twice is harmless (`_taken`)."""
    from quality.tasks import build_export, run_analysis

    now = timezone.now()
    swept: dict[str, list[int]] = {}
    for name, model, task, limit_s in (
        ("analysis_runs", AnalysisRun, run_analysis, ANALYSIS_TIME_LIMIT_S),
        ("export_jobs", ExportJob, build_export, EXPORT_TIME_LIMIT_S),
    ):
        running = list(
            model.objects.filter(status=model.Status.RUNNING).only(
                "pk", "started_at", "runner_session", "attempts"
            )
        )
        live = live_db_sessions(row.runner_session for row in running)
        taken_back, failed = [], []
        for row in running:
            if not run_abandoned(row, limit_s=limit_s, now=now, live_sessions=live):
                continue
            past_limit = run_past_limit(row, limit_s=limit_s, now=now)
            if past_limit or row.attempts >= MAX_ATTEMPTS:
                change = {
                    "status": model.Status.FAILED,
                    "finished_at": now,
                    "error": (
                        f"it did not finish within its time limit of {limit_s // 60} min "
                        "(stopped, or its worker was lost); ask for it again"
                        if past_limit
                        else _worker_lost_error(row.attempts)
                    ),
                }
                into = failed
            else:
                change = {"status": model.Status.QUEUED}
                into = taken_back
            # only if no worker took it over meanwhile
            if model.objects.filter(
                pk=row.pk, status=model.Status.RUNNING, started_at=row.started_at
            ).update(**change):
                into.append(row.pk)
        waiting = model.objects.filter(
            Q(pk__in=taken_back) | Q(created_at__lt=now - timedelta(seconds=older_than_s)),
            status=model.Status.QUEUED,
        ).values_list("pk", flat=True)
        swept[f"{name}_sent"] = [pk for pk in waiting if send_now(task, pk)]
        swept[f"{name}_failed"] = failed
    for key, ids in swept.items():
        if ids:
            logger.warning("stale %s: %s", key.replace("_", " "), ids)
    return swept
