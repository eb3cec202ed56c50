"""`manage.py periodic`: beat's schedule run in-process on the embedded default (no
broker, no beat), beside the web server that scripts/start serves."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from quality.models import AnalysisRun
from tests.quality.test_analysis_runs import rated_study

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.django_db
def test_once_runs_every_scheduled_task_here_among_them_the_running_studies_analysis(
    capsys, settings, django_capture_on_commit_callbacks
):
    # given: a running study with ratings and no analysis run yet
    study, _ = rated_study()
    study.state = "running"
    study.save()
    # when
    with django_capture_on_commit_callbacks(execute=True):
        call_command("periodic", "--once")
    # then: every entry of the schedule ran, and the study was analysed in this process
    assert f"ran {len(settings.CELERY_BEAT_SCHEDULE)} periodic task(s)" in capsys.readouterr().out
    (run,) = AnalysisRun.objects.filter(study=study)
    assert run.status == "done"


@pytest.mark.django_db
def test_a_failing_task_is_logged_and_the_others_still_run(
    settings, caplog, monkeypatch, django_capture_on_commit_callbacks
):
    settings.CELERY_BEAT_SCHEDULE = {
        "broken": {"task": "quality.tasks.sweep_stale_requests", "schedule": 60},
        "analysis": {"task": "quality.tasks.analyse_running_studies", "schedule": 60},
    }
    study, _ = rated_study()
    study.state = "running"
    study.save()
    from quality import tasks

    def broken(*args, **kwargs):
        raise RuntimeError("the sweep broke")

    monkeypatch.setattr(tasks.sweep_stale_requests, "run", broken)
    # when / then: the command says which failed, after running the others
    with (
        pytest.raises(CommandError, match="failed: broken"),
        django_capture_on_commit_callbacks(execute=True),
    ):
        call_command("periodic", "--once")
    assert "periodic broken failed" in caplog.text
    assert AnalysisRun.objects.filter(study=study, status="done").exists()


def test_the_loop_ends_with_the_process_it_serves_beside():
    # given: a shell that starts the loop, watching the shell, and ends a few seconds later
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    command = f"{sys.executable} manage.py periodic --while-alive $$ & echo $!; sleep 3"
    shell = subprocess.Popen(
        ["sh", "-c", command], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
    )
    loop = int(shell.stdout.readline())
    shell.wait(timeout=30)
    # then: the loop notices within a few seconds, and stops
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and running(loop):
        time.sleep(0.2)
    assert not running(loop), "the loop outlived the process it serves beside"


def running(pid: int) -> bool:
    """Whether `pid` runs (an orphan that ended is reaped by init, or is a zombie)."""
    try:
        return "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("pid", ["99999999999", "0", "-1", "me"])
def test_a_while_alive_that_is_not_a_process_id_is_refused(pid):
    # before: 99999999999 overflowed os.kill (a traceback), 0 or -1 named a process group
    with pytest.raises(CommandError, match="not a process id"):
        call_command("periodic", f"--while-alive={pid}")
