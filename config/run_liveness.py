"""Whether a row marked running (a processing job, an analysis run, an export job) can
still be going, so a task is never run twice at once and never left running after its
worker is gone. The row records who took it (`db_session`) and when; its run is over
when the task's hard time limit has passed or that session has ended."""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import datetime, timedelta

from django.db import connection


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


def run_past_limit(row, *, limit_s: int, now: datetime) -> bool:
    """Whether `row` (with `started_at`) started longer ago than its task's hard time
    limit `limit_s`, so Celery has stopped that run."""
    return row.started_at is None or row.started_at < now - timedelta(seconds=limit_s)


def run_abandoned(row, *, limit_s: int, now: datetime, live_sessions: set[int]) -> bool:
    """Whether the run that marked `row` running (its `started_at`, `runner_session`)
    cannot still be going: it is past its time limit, or the session it took the row
    with has ended (its worker died). Behind a transaction-pooling proxy (PgBouncer) the
    recorded session is a pooled server's and looks alive, so only the time limit
    tells."""
    if run_past_limit(row, limit_s=limit_s, now=now):
        return True
    return row.runner_session is not None and row.runner_session not in live_sessions
