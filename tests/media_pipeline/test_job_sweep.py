"""The sweep run by hand (`manage.py sweep_jobs`, which scripts/start runs where no beat
does) and how a run's liveness is told without PostgreSQL."""

import io
import os
import subprocess
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from config.run_liveness import live_processes
from media_pipeline.models import ProcessingJob
from tests.media_pipeline.test_job_recovery import ENDED_SESSION, job_of, stimulus_of


def ended_process() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_live_processes_tells_a_running_process_from_an_ended_one():
    # given
    running, ended = os.getpid(), ended_process()
    # when
    alive = live_processes([running, ended])
    # then
    assert alive == {running}


@pytest.mark.django_db
def test_sweep_jobs_runs_what_a_stopped_start_left_queued_or_half_done(clips):
    # given: a start stopped mid-transcode: one job left running by the process that is
    # gone, one queued whose in-process send never came
    half_done = job_of(
        stimulus_of(clips["square.mp4"]),
        status="running",
        attempts=1,
        started_at=timezone.now() - timedelta(seconds=30),
        runner_session=ENDED_SESSION,
    )
    never_sent = job_of(stimulus_of(clips["slow.mp4"]))
    out = io.StringIO()
    # when
    call_command("sweep_jobs", stdout=out)
    # then: both ran (in-process here) and their videos are ready
    assert out.getvalue().splitlines()[0] == "sent 2 job(s) again"
    jobs = ProcessingJob.objects.filter(pk__in=[half_done.pk, never_sent.pk])
    assert sorted(jobs.values_list("status", "stimulus__status")) == [("done", "ready")] * 2


@pytest.mark.django_db
def test_sweep_jobs_finishes_an_analysis_and_an_export_a_stopped_start_left():
    # given: a start stopped mid-analysis (the run left running by the process that is
    # gone) and before an export's in-process send
    from quality.models import AnalysisRun, ExportJob
    from tests.quality.test_analysis_runs import rated_study

    study, _ = rated_study(raters=4, stimuli=6)
    run = AnalysisRun.objects.create(
        study=study,
        status="running",
        attempts=1,
        started_at=timezone.now() - timedelta(seconds=30),
        runner_session=ENDED_SESSION,
    )
    export = ExportJob.objects.create(study=study, name="ratings.csv")
    out = io.StringIO()
    # when
    call_command("sweep_jobs", stdout=out)
    # then: both done, here and now
    assert out.getvalue().splitlines()[1:] == [
        "analysis runs: 1 sent again, 0 failed",
        "export jobs: 1 sent again, 0 failed",
    ]
    run.refresh_from_db()
    export.refresh_from_db()
    assert (run.status, export.status) == ("done", "done"), (run.error, export.error)
    assert run.ratings_count == 4 * 6 * 3


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind", ["transcode", "score"])
def test_every_job_is_stored_before_the_first_runs_in_process(clips, monkeypatch, kind):
    # given: three stimuli, and tasks run in-process (each send runs its job at once)
    import media_pipeline.tasks
    from media_pipeline.services.score_jobs import stimuli_enqueue_scoring
    from media_pipeline.services.transcode_jobs import stimuli_enqueue_processing

    stimuli = [stimulus_of(clips[name]) for name in ("square.mp4", "slow.mp4", "fast.mp4")]
    seen = []

    def run(*, job_id, **options):  # what a stop midway would leave behind
        seen.append(ProcessingJob.objects.filter(kind=kind, status="queued").count())

    monkeypatch.setattr(media_pipeline.tasks, f"{kind}_job_run", run)
    enqueue = {"transcode": stimuli_enqueue_processing, "score": stimuli_enqueue_scoring}[kind]
    # when
    enqueue([s.pk for s in stimuli])
    # then: when the first job ran, the other two were already queued for the sweep
    assert seen == [3, 3, 3]
