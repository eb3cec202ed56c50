"""Celery tasks of the media pipeline: thin shells over media_pipeline.services."""

import logging

from celery import shared_task

from media_pipeline.job_liveness import (
    SCORE_TIME_LIMIT_S,
    transcode_time_limits,
    visibility_too_short,
)
from media_pipeline.services.job_sweep import requeue_stale_jobs
from media_pipeline.services.score_jobs import score_job_run
from media_pipeline.services.transcode_jobs import TransientProcessingError, transcode_job_run

# Read once, as the worker starts: they follow MOSAIC_TRANSCODE_TIMEOUT_S, so ffmpeg's own
# time-out always ends a long transcode before Celery does.
TRANSCODE_SOFT_LIMIT_S, TRANSCODE_HARD_LIMIT_S = transcode_time_limits()
if (problem := visibility_too_short()) is not None:
    logging.getLogger(__name__).warning(problem)


@shared_task(
    bind=True,
    acks_late=True,  # idempotent: a job killed mid-transcode is redelivered and redone
    reject_on_worker_lost=True,
    max_retries=None,  # the job row counts the attempts (transcode_jobs.TRANSCODE_MAX_ATTEMPTS)
    soft_time_limit=TRANSCODE_SOFT_LIMIT_S,
    time_limit=TRANSCODE_HARD_LIMIT_S,
)
def transcode_stimulus(self, job_id: int) -> None:
    try:
        # In-process (eager) there is no worker to send a retry to later.
        transcode_job_run(job_id=job_id, retry_allowed=not self.request.is_eager)
    except TransientProcessingError as exc:
        raise self.retry(exc=exc, countdown=exc.countdown_s) from exc


@shared_task(
    acks_late=True,  # idempotent per (video, metric, version)
    reject_on_worker_lost=True,
    soft_time_limit=SCORE_TIME_LIMIT_S - 60,
    time_limit=SCORE_TIME_LIMIT_S,
)
def score_stimulus(job_id: int) -> None:
    score_job_run(job_id=job_id)


@shared_task
def requeue_stale(older_than_s: int = 300) -> list[int]:
    return requeue_stale_jobs(older_than_s=older_than_s)
