"""Celery tasks of the media pipeline: thin shells over media_pipeline.services."""

from celery import shared_task

from media_pipeline.services import (
    TransientProcessingError,
    requeue_stale_jobs,
    score_job_run,
    transcode_job_run,
)


@shared_task(
    bind=True,
    acks_late=True,  # idempotent: a job killed mid-transcode is redelivered and redone
    reject_on_worker_lost=True,
    autoretry_for=(TransientProcessingError,),
    retry_backoff=30,
    max_retries=3,
    soft_time_limit=30 * 60,
    time_limit=31 * 60,
)
def transcode_stimulus(self, job_id: int) -> None:
    transcode_job_run(job_id=job_id)


@shared_task(
    acks_late=True,  # idempotent per (video, metric, version)
    reject_on_worker_lost=True,
    soft_time_limit=20 * 60,
    time_limit=21 * 60,
)
def score_stimulus(job_id: int) -> None:
    score_job_run(job_id=job_id)


@shared_task
def requeue_stale(older_than_s: int = 300) -> list[int]:
    return requeue_stale_jobs(older_than_s=older_than_s)
