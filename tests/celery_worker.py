"""A real Celery worker over Redis for pipeline tests, against the test database.

The test must use `transactional_db` (the worker is another process and sees only
committed rows). The worker gets the same media folder as the test.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import kombu.pools
import redis
from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parent.parent
BROKER = "redis://127.0.0.1:6379/15"


def worker_env(media_root: Path, broker: str = BROKER) -> dict:
    db = connection.settings_dict
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "CELERY_"))}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.test",
        MOSAIC_TEST_EAGER="0",
        DATABASE_URL=f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/"
        f"{db['NAME']}",
        CELERY_BROKER_URL=broker,
        MOSAIC_MEDIA_ROOT=str(media_root),
        PYTHONUNBUFFERED="1",
    )
    return env


def flush_broker() -> None:
    redis.Redis.from_url(BROKER).flushdb()


def _reset_connections(app) -> None:
    """Drop pooled broker connections so the next send uses the current broker URL.

    kombu keeps its pools in a process-wide registry keyed by broker URL; closing one
    without clearing the registry would hand the closed pool to the next send.
    """
    kombu.pools.reset()
    app._pool = None
    app.amqp._producer_pool = None


@contextlib.contextmanager
def eager_off(broker: str = BROKER) -> Iterator[None]:
    from config.celery_app import app

    previous = app.conf.task_always_eager, app.conf.broker_url
    app.conf.task_always_eager = False
    app.conf.broker_url = broker
    _reset_connections(app)
    try:
        yield
    finally:
        app.conf.task_always_eager, app.conf.broker_url = previous
        _reset_connections(app)


def start_worker(
    *, queues: str, log: Path, media_root: Path | None = None, broker: str = BROKER
) -> subprocess.Popen:
    media_root = media_root or Path(settings.MEDIA_ROOT)
    handle = open(log, "ab")  # noqa: SIM115 (closed with the process)
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config.celery_app",
            "worker",
            "-Q",
            queues,
            "--pool",
            "prefork",
            "--concurrency",
            "1",
            "--prefetch-multiplier",
            "1",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-l",
            "INFO",
            "-n",
            f"test-{os.getpid()}-{time.monotonic_ns()}@%h",
        ],
        cwd=ROOT,
        env=worker_env(media_root, broker),
        stdout=handle,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"worker exited early:\n{log.read_text()[-3000:]}")
        if b"ready." in log.read_bytes():
            return process
        time.sleep(0.2)
    stop_worker(process, hard=True)
    raise RuntimeError(f"worker did not start:\n{log.read_text()[-3000:]}")


def stop_worker(process: subprocess.Popen, *, hard: bool = False) -> None:
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL if hard else signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


def wait_for(predicate, *, timeout: float = 60.0, interval: float = 0.2, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what or predicate}")
