"""Whether a running processing job's run can still be going (config.run_liveness), with
the time limits of the media tasks."""

from __future__ import annotations

from datetime import datetime

from config import run_liveness
from media_pipeline.models import ProcessingJob

# Celery's hard time limits of the tasks (tasks.py): a run started longer ago than its
# limit has been stopped.
TRANSCODE_TIME_LIMIT_S = 31 * 60
SCORE_TIME_LIMIT_S = 21 * 60
TIME_LIMITS_S = {
    ProcessingJob.Kind.TRANSCODE: TRANSCODE_TIME_LIMIT_S,
    ProcessingJob.Kind.SCORE: SCORE_TIME_LIMIT_S,
}


def run_abandoned(job: ProcessingJob, *, now: datetime, live_sessions: set[int]) -> bool:
    """Whether the run that marked `job` running cannot still be going."""
    return run_liveness.run_abandoned(
        job, limit_s=TIME_LIMITS_S[job.kind], now=now, live_sessions=live_sessions
    )
