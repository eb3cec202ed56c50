"""The sweep that keeps jobs moving: jobs whose message was lost, whose retry never came
or whose worker died are sent again (beat runs it every two minutes)."""

from __future__ import annotations

import logging

from django.db.models import Q
from django.utils import timezone

from config.run_liveness import live_db_sessions
from config.task_dispatch import send_now
from media_pipeline.job_liveness import run_abandoned
from media_pipeline.models import ProcessingJob

logger = logging.getLogger(__name__)


def requeue_stale_jobs(*, older_than_s: int = 300) -> list[int]:
    """Send again every job still queued `older_than_s` seconds after it was due: its send
    was lost (the broker was down), its message expired or its scheduled retry never
    came. A job waiting for a scheduled retry is due only when the retry fires, so it is
    not sent twice. A running job whose run cannot still be going (past the task's hard
    time limit, or its worker's database session is gone) is queued and sent again.
    Sending twice is harmless: a job runs once (row lock; a running job is not taken)."""
    from media_pipeline.tasks import score_stimulus, transcode_stimulus

    tasks = {
        ProcessingJob.Kind.TRANSCODE: transcode_stimulus,
        ProcessingJob.Kind.SCORE: score_stimulus,
    }
    now = timezone.now()
    running = list(ProcessingJob.objects.filter(status=ProcessingJob.Status.RUNNING))
    live = live_db_sessions(job.runner_session for job in running)
    reclaimed = [
        job.pk
        for job in running
        if run_abandoned(job, now=now, live_sessions=live)
        # only if no worker took it over meanwhile
        and ProcessingJob.objects.filter(
            pk=job.pk, status=ProcessingJob.Status.RUNNING, started_at=job.started_at
        ).update(status=ProcessingJob.Status.QUEUED, due_at=now)
    ]
    if reclaimed:
        logger.warning("took back %d abandoned running job(s): %s", len(reclaimed), reclaimed)
    cutoff = now - timezone.timedelta(seconds=older_than_s)
    stale = ProcessingJob.objects.filter(
        Q(pk__in=reclaimed) | Q(due_at__lt=cutoff), status=ProcessingJob.Status.QUEUED
    ).values_list("pk", "kind")
    sent = [pk for pk, kind in stale if send_now(tasks[kind], pk)]
    if sent:
        logger.info("requeued %d stale job(s)", len(sent))
    return sent
