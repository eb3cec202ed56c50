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


def test_every_periodic_task_beat_sends_is_a_registered_task(settings):
    # a name beat sends that no worker knows is dropped with a log line on the worker
    from config.celery_app import app

    app.loader.import_default_modules()  # the apps' tasks modules, as a worker loads them
    names = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert "quality.tasks.sweep_stale_requests" in names
    assert names - set(app.tasks) == set()
