"""Whether a running job's run can still be going, so a job is never run twice at once
and never left running after its worker is gone."""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import datetime, timedelta

from django.db import connection

from media_pipeline.models import ProcessingJob

# Celery's hard time limits of the tasks (tasks.py): a run started longer ago than its
# limit has been stopped.
TRANSCODE_TIME_LIMIT_S = 31 * 60
SCORE_TIME_LIMIT_S = 21 * 60
TIME_LIMITS_S = {
    ProcessingJob.Kind.TRANSCODE: TRANSCODE_TIME_LIMIT_S,
    ProcessingJob.Kind.SCORE: SCORE_TIME_LIMIT_S,
}


def db_session() -> int:
    """Who runs a job, recorded when it is claimed: this connection's PostgreSQL session
    (backend pid); on other databases (SQLite: the embedded default, one machine) this
    process's id."""
    if connection.vendor != "postgresql":
        return os.getpid()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def live_db_sessions(sessions: Iterable[int | None]) -> set[int]:
    """Those of `sessions` still there. PostgreSQL ends a session as soon as its client's
    socket closes, which the kernel does when the worker process dies; on SQLite the
    sessions are process ids on this machine."""
    wanted = [session for session in sessions if session is not None]
    if not wanted:
        return set()
    if connection.vendor != "postgresql":
        return live_processes(wanted)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE pid = ANY(%s)", [wanted])
        return {row[0] for row in cursor.fetchall()}


def live_processes(pids: Iterable[int]) -> set[int]:
    """Those of `pids` that are running processes on this machine (signal 0 checks, sends
    nothing). A pid the system has since given to another process counts as alive: the
    job is then taken back only after its time limit, never too early."""
    alive = set()
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        except PermissionError:
            pass  # someone else's process: it exists
        alive.add(pid)
    return alive


def run_abandoned(job: ProcessingJob, *, now: datetime, live_sessions: set[int]) -> bool:
    """Whether the run that marked `job` running cannot still be going: it started longer
    ago than the task's hard time limit (Celery has stopped it), or the session it claimed
    the job with has ended (its worker died). Behind a transaction-pooling proxy
    (PgBouncer) the recorded session is a pooled server's and looks alive, so only the
    time limit tells."""
    limit = timedelta(seconds=TIME_LIMITS_S[job.kind])
    if job.started_at is None or job.started_at < now - limit:
        return True
    return job.runner_session is not None and job.runner_session not in live_sessions
