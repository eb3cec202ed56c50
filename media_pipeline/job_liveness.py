"""Whether a running processing job's run can still be going (config.run_liveness), with
the time limits of the media tasks."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from config import run_liveness
from media_pipeline.models import ProcessingJob

# A transcode task has this long beyond ffmpeg's own limit (MOSAIC_TRANSCODE_TIMEOUT_S),
# for the probe, the checksum, the re-probe and storing the result, so that ffmpeg's
# time-out, with its clear message and its retry, always comes before Celery's. Celery's
# soft limit (the job is queued again) comes then, its hard one (the worker process is
# killed) a minute later.
TRANSCODE_TASK_MARGIN_S = 5 * 60
SOFT_TO_HARD_S = 60
# Celery's hard time limit of a scoring task (tasks.py).
SCORE_TIME_LIMIT_S = 21 * 60


def transcode_time_limits() -> tuple[int, int]:
    """Celery's (soft, hard) time limits of a transcode task, following
    MOSAIC_TRANSCODE_TIMEOUT_S (25 minutes: 30 and 31); ImproperlyConfigured, at the start
    of every process that loads the tasks, for a time-out that is not positive."""
    timeout_s = settings.MOSAIC_TRANSCODE_TIMEOUT_S
    if timeout_s <= 0:
        raise ImproperlyConfigured(
            f"MOSAIC_TRANSCODE_TIMEOUT_S must be a positive number of seconds, got {timeout_s}"
        )
    soft = timeout_s + TRANSCODE_TASK_MARGIN_S
    return soft, soft + SOFT_TO_HARD_S


def visibility_too_short() -> str | None:
    """Why the broker's visibility time-out is too short for a transcode, if it is: Redis
    hands a task not acknowledged by then to another worker, so a transcode still running
    is delivered again (and dropped there, since its job is taken, but it holds a worker
    each time). A warning, not an error: the pipeline tests shorten it on purpose."""
    hard = transcode_time_limits()[1]
    visibility = settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("visibility_timeout")
    if visibility is None or visibility > hard:
        return None
    timeout_s = settings.MOSAIC_TRANSCODE_TIMEOUT_S
    return (
        f"MOSAIC_VISIBILITY_TIMEOUT_S ({visibility} s) is not longer than a transcode task "
        f"may run ({hard} s: MOSAIC_TRANSCODE_TIMEOUT_S {timeout_s} s and "
        f"{hard - timeout_s} s more), so Redis hands a transcode still running to another "
        "worker; leave it unset to have it follow"
    )


def time_limit_s(kind: str) -> int:
    """Celery's hard time limit of a task of `kind`: a run started longer ago than it
    has been stopped."""
    if kind == ProcessingJob.Kind.TRANSCODE:
        return transcode_time_limits()[1]
    return SCORE_TIME_LIMIT_S


def run_abandoned(job: ProcessingJob, *, now: datetime, live_sessions: set[int]) -> bool:
    """Whether the run that marked `job` running cannot still be going."""
    return run_liveness.run_abandoned(
        job, limit_s=time_limit_s(job.kind), now=now, live_sessions=live_sessions
    )
