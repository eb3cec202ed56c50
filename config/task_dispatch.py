"""Sending a task after commit without ever failing the request that asked for it.

The job row is the source of truth: if the broker is down when the row commits, the
send is logged and skipped, the row stays queued, and the periodic sweep
(`media_pipeline.tasks.requeue_stale_jobs`) sends it again once the broker is back. On the
embedded default (tasks run in-process) a task that fails is logged as a failure, with its
traceback, not as a send that did not happen.
"""

from __future__ import annotations

import logging

from django.db import transaction

logger = logging.getLogger("mosaic.tasks")

# A dead broker must cost a request well under a second, not Celery's default retries.
SEND_RETRY_POLICY = {
    "max_retries": 1,
    "interval_start": 0.1,
    "interval_step": 0.2,
    "interval_max": 0.3,
}


def send_now(task, *args) -> bool:
    try:
        task.apply_async(args=args, retry=True, retry_policy=SEND_RETRY_POLICY)
    except Exception as exc:
        if task.app.conf.task_always_eager:  # the embedded default ran it here and it failed
            logger.exception("task %s%s failed in-process", task.name, args)
        else:  # kombu OperationalError and friends: the broker is away
            logger.warning(
                "could not send %s%s, the sweep will resend it: %s", task.name, args, exc
            )
        return False
    return True


def send_on_commit(task, *args) -> None:
    transaction.on_commit(lambda: send_now(task, *args))
