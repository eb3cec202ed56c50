"""The transcode task's Celery time limits follow MOSAIC_TRANSCODE_TIMEOUT_S, so ffmpeg's
own time-out (a clear message, a retry) always ends a long transcode before Celery kills
it; settings that cannot work are named as a worker starts. Settings are
read as a process starts: those cases run in a fresh Python process with its environment
set."""

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.core import checks
from django.utils import timezone

from media_pipeline.job_liveness import run_abandoned
from media_pipeline.tasks import transcode_stimulus
from tests.media_pipeline.test_job_recovery import job_of, stimulus_of

ROOT = Path(__file__).resolve().parents[2]
STARTED_WORKER = """
import django
django.setup()
from django.conf import settings
from media_pipeline.tasks import transcode_stimulus as task
print(task.soft_time_limit, task.time_limit,
      settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"])
"""


def start_with(**environment: str) -> subprocess.CompletedProcess:
    """A process that loads the settings and the tasks as a worker does, under
    `environment`."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test", **environment}
    return subprocess.run(
        [sys.executable, "-c", STARTED_WORKER], cwd=ROOT, env=env, capture_output=True, text=True
    )


def test_by_default_ffmpeg_times_out_five_minutes_before_celery_steps_in(settings):
    assert settings.MOSAIC_TRANSCODE_TIMEOUT_S == 25 * 60
    assert (transcode_stimulus.soft_time_limit, transcode_stimulus.time_limit) == (1800, 1860)


def test_a_longer_transcode_time_out_moves_the_tasks_limits_and_visibility():
    # when: a worker starts with a 2-hour transcode time-out (before, Celery's fixed
    # 30-minute limit killed the task long before ffmpeg's own time-out)
    started = start_with(MOSAIC_TRANSCODE_TIMEOUT_S="7200")
    # then: Celery steps in 5 and 6 minutes after ffmpeg's limit, and Redis waits an hour
    # longer than that before handing the task to another worker
    assert started.returncode == 0, started.stderr
    assert started.stdout.split() == ["7500", "7560", "10800"]


def test_a_time_out_that_is_not_positive_stops_a_worker_at_its_start():
    started = start_with(MOSAIC_TRANSCODE_TIMEOUT_S="0")
    assert started.returncode != 0
    assert (
        "ImproperlyConfigured: MOSAIC_TRANSCODE_TIMEOUT_S must be a positive number of "
        "seconds, got 0"
    ) in started.stderr


def test_a_visibility_time_out_shorter_than_a_transcode_is_warned_of_at_the_start():
    started = start_with(MOSAIC_TRANSCODE_TIMEOUT_S="7200", MOSAIC_VISIBILITY_TIMEOUT_S="3600")
    assert started.returncode == 0, started.stderr
    assert started.stdout.split() == ["7500", "7560", "3600"]
    assert (
        "WARNING media_pipeline.tasks MOSAIC_VISIBILITY_TIMEOUT_S (3600 s) is not longer "
        "than a transcode task may run (7560 s: MOSAIC_TRANSCODE_TIMEOUT_S 7200 s and 360 s "
        "more), so Redis hands a transcode still running to another worker"
    ) in started.stderr


def test_the_system_check_names_the_settings(settings):
    def media_checks() -> list[tuple[str, str]]:
        return [(e.id, e.msg) for e in checks.run_checks() if e.id.startswith("media")]

    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 1860}
    ((code, message),) = media_checks()
    assert code == "media_pipeline.W001"
    assert message.startswith("MOSAIC_VISIBILITY_TIMEOUT_S (1860 s) is not longer than a ")
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 1861}
    assert media_checks() == []
    settings.MOSAIC_TRANSCODE_TIMEOUT_S = -1
    assert media_checks() == [
        (
            "media_pipeline.E001",
            "MOSAIC_TRANSCODE_TIMEOUT_S must be a positive number of seconds, got -1",
        )
    ]


@pytest.mark.django_db
def test_a_transcode_running_within_a_longer_limit_is_not_taken_for_abandoned(clips, settings):
    # given: a 2-hour transcode time-out, and a job its live worker started an hour ago
    settings.MOSAIC_TRANSCODE_TIMEOUT_S = 7200
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 10800}
    now = timezone.now()
    job = job_of(
        stimulus_of(clips["square.mp4"]),
        status="running",
        attempts=1,
        started_at=now - timedelta(hours=1),
        runner_session=1,
    )
    # then: the sweep leaves it to its worker until the task's own hard limit has passed
    assert not run_abandoned(job, now=now, live_sessions={1})
    assert not run_abandoned(job, now=job.started_at + timedelta(seconds=7560), live_sessions={1})
    assert run_abandoned(job, now=job.started_at + timedelta(seconds=7561), live_sessions={1})
