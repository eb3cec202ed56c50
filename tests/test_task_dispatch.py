"""send_now on the embedded default: a task that fails in-process is logged as a failure
(a dead broker is tests/faults/test_broker_outage.py)."""

import logging

from celery import shared_task

from config.task_dispatch import send_now


@shared_task(name="tests.always_fails")
def always_fails(job_id):
    raise RuntimeError(f"job {job_id} broke")


def test_a_task_failing_in_process_is_logged_as_a_failure(caplog):
    # given: the embedded default (tasks run in-process, as CELERY_TASK_ALWAYS_EAGER)
    assert always_fails.app.conf.task_always_eager
    # when
    with caplog.at_level(logging.WARNING, logger="mosaic.tasks"):
        sent = send_now(always_fails, 7)
    # then: the request goes on, and the log names the failure with its traceback
    assert sent is False
    [record] = caplog.records
    assert record.levelno == logging.ERROR
    assert record.getMessage() == "task tests.always_fails(7,) failed in-process"
    assert "job 7 broke" in record.exc_text
