"""Transcode jobs that go wrong: time-outs, errors no retry mends, lost workers, duplicate
messages, and the same video in two studies. Each must end (done or failed, with the
reason for the admin), run once at a time and touch no other stimulus's files."""

import errno
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files import File
from django.db import OperationalError, connection
from django.db.models import QuerySet
from django.utils import timezone

import media_pipeline.ffmpeg
from annotation.models import Stimulus
from media_pipeline.ffmpeg import sha256_file
from media_pipeline.job_liveness import transcode_time_limits
from media_pipeline.models import ProcessingJob
from media_pipeline.services.job_sweep import requeue_stale_jobs
from media_pipeline.services.transcode_jobs import (
    TransientProcessingError,
    stimuli_enqueue_processing,
    transcode_job_run,
)
from tests.factories import make_study

pytestmark = pytest.mark.django_db

TIMED_OUT = (
    "transcode timed out: ffmpeg ran past its limit of 0.001 s and was stopped; "
    "worth retrying when the machine is less busy"
)
ENDED_SESSION = 2**31 - 1  # no PostgreSQL backend has this pid


def stimulus_of(path: Path, study=None) -> Stimulus:
    stimulus = Stimulus(
        study=study or make_study(),
        role="stimulus",
        checksum=sha256_file(path),
        original_name=path.name,
    )
    with open(path, "rb") as handle:
        stimulus.source_file.save(path.name, File(handle), save=False)
    stimulus.save()
    return stimulus


def job_of(stimulus: Stimulus, **fields) -> ProcessingJob:
    return ProcessingJob.objects.create(stimulus=stimulus, kind="transcode", **fields)


def this_session() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def audio_streams(path: Path) -> list[str]:
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "a", "-show_entries", "stream=codec_name"]
        + ["-of", "csv=p=0", str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.split()


def test_the_same_video_in_two_studies_gets_a_rendition_each(extra_clips):
    # given: one video with sound in a silent study and in one that keeps sound
    silent = stimulus_of(extra_clips["audio"], make_study(drop_audio=True))
    loud = stimulus_of(extra_clips["audio"], make_study(drop_audio=False))
    transcode_job_run(job_id=job_of(silent).pk)
    silent.refresh_from_db()
    silent_file = Path(settings.MEDIA_ROOT) / silent.rendition.name
    silent_bytes = silent_file.read_bytes()
    # when
    transcode_job_run(job_id=job_of(loud).pk)
    # then: two files; the silent study's rendition is untouched and still silent
    loud.refresh_from_db()
    assert (
        silent.rendition.name
        == f"renditions/{silent.checksum[:2]}/{silent.checksum}-{silent.pk}.mp4"
    )
    assert loud.rendition.name == f"renditions/{loud.checksum[:2]}/{loud.checksum}-{loud.pk}.mp4"
    assert silent_file.read_bytes() == silent_bytes
    assert audio_streams(silent_file) == []
    assert audio_streams(Path(settings.MEDIA_ROOT) / loud.rendition.name) == ["aac"]


def test_a_timed_out_transcode_is_retried_with_back_off_then_fails(clips, settings):
    # given: a limit no transcode can meet
    settings.MOSAIC_TRANSCODE_TIMEOUT_S = 0.001
    stimulus = stimulus_of(clips["square.mp4"])
    job = job_of(stimulus)
    # when / then: three runs time out and are queued again, each due later than the last
    for countdown in (30, 60, 120):
        before = timezone.now()
        with pytest.raises(TransientProcessingError) as caught:
            transcode_job_run(job_id=job.pk)
        job.refresh_from_db()
        stimulus.refresh_from_db()
        assert caught.value.countdown_s == countdown
        assert (job.status, job.error, stimulus.status) == ("queued", TIMED_OUT, "processing")
        assert before + timedelta(seconds=countdown) <= job.due_at
        assert job.due_at <= timezone.now() + timedelta(seconds=countdown)
    # when: the fourth and last attempt times out too
    transcode_job_run(job_id=job.pk)
    # then: the job and the stimulus fail, with the reason for the admin
    job.refresh_from_db()
    stimulus.refresh_from_db()
    message = f"gave up after 4 attempts; the last: {TIMED_OUT}"
    assert (job.status, job.attempts, job.error) == ("failed", 4, message)
    assert (stimulus.status, stimulus.processing_error) == ("failed", message)
    # and a late message changes nothing
    transcode_job_run(job_id=job.pk)
    assert ProcessingJob.objects.get(pk=job.pk).attempts == 4


def test_in_process_a_timed_out_transcode_fails_at_once(
    clips, settings, django_capture_on_commit_callbacks
):
    # given: tasks run in-process (no broker): nobody would ever send a retry
    settings.MOSAIC_TRANSCODE_TIMEOUT_S = 0.001
    stimulus = stimulus_of(clips["square.mp4"])
    # when: the job is queued, and so run, when the transaction commits
    with django_capture_on_commit_callbacks(execute=True):
        (job_id,) = stimuli_enqueue_processing([stimulus.pk])
    # then
    job = ProcessingJob.objects.get(pk=job_id)
    stimulus.refresh_from_db()
    message = f"{TIMED_OUT} (not retried: tasks run in-process, with no worker to retry)"
    assert (job.status, job.attempts, job.error) == ("failed", 1, message)
    assert (stimulus.status, stimulus.processing_error) == ("failed", message)


def test_the_sweep_leaves_a_job_alone_until_its_retry_is_overdue(clips, settings):
    # given: a job that timed out, its retry scheduled in 30 s
    settings.MOSAIC_TRANSCODE_TIMEOUT_S = 0.001
    job = job_of(stimulus_of(clips["square.mp4"]), created_at=timezone.now())
    ProcessingJob.objects.filter(pk=job.pk).update(created_at=timezone.now() - timedelta(hours=1))
    with pytest.raises(TransientProcessingError):
        transcode_job_run(job_id=job.pk)
    # when: the sweep runs, even with no grace at all
    sent = requeue_stale_jobs(older_than_s=0)
    # then: the job is not sent beside its retry
    assert sent == []
    assert ProcessingJob.objects.get(pk=job.pk).attempts == 1
    # when: the retry never came (its message was lost) and is 300 s overdue
    ProcessingJob.objects.filter(pk=job.pk).update(due_at=timezone.now() - timedelta(seconds=301))
    settings.MOSAIC_TRANSCODE_TIMEOUT_S = 60
    # then: the sweep sends it (in-process here, so it runs at once)
    assert requeue_stale_jobs(older_than_s=300) == [job.pk]
    job.refresh_from_db()
    assert (job.status, job.attempts) == ("done", 2)


def test_an_error_no_retry_mends_fails_the_job_with_its_message(clips):
    # given: the renditions folder cannot be made (a file stands in its way, as a bad
    # mount or a wrong permission would)
    stimulus = stimulus_of(clips["square.mp4"])
    (Path(settings.MEDIA_ROOT) / "renditions").mkdir()
    blocker = Path(settings.MEDIA_ROOT) / "renditions" / stimulus.checksum[:2]
    blocker.write_text("in the way")
    job = job_of(stimulus)
    # when
    transcode_job_run(job_id=job.pk)
    # then: failed at once, not left running
    job.refresh_from_db()
    stimulus.refresh_from_db()
    message = f"transcode failed: [Errno 17] File exists: '{blocker}'"
    assert (job.status, job.attempts, job.error) == ("failed", 1, message)
    assert (stimulus.status, stimulus.processing_error) == ("failed", message)


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (
            OSError(errno.ENOSPC, "No space left on device"),
            "transcode failed: [Errno 28] No space left on device",
        ),
        (
            media_pipeline.ffmpeg.DiskFull("transcode failed: no space left (...)"),
            "transcode failed: no space left (...)",
        ),
    ],
    ids=["python-writing", "ffmpeg-writing"],
)
def test_a_full_disk_queues_the_job_again(clips, monkeypatch, error, message):
    # given
    def full_disk(**options):
        raise error

    monkeypatch.setattr(media_pipeline.ffmpeg, "transcode", full_disk)
    job = job_of(stimulus_of(clips["square.mp4"]))
    # when
    with pytest.raises(TransientProcessingError) as caught:
        transcode_job_run(job_id=job.pk)
    # then
    job.refresh_from_db()
    assert caught.value.countdown_s == 30
    assert (job.status, job.error) == ("queued", message)


def test_an_unexpected_exception_fails_the_job_instead_of_leaving_it_running(clips, monkeypatch):
    def broken(**options):
        raise KeyError("width")

    monkeypatch.setattr(media_pipeline.ffmpeg, "transcode", broken)
    job = job_of(stimulus_of(clips["square.mp4"]))
    transcode_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert (job.status, job.error) == (
        "failed",
        "transcode failed: unexpected KeyError: 'width' (the worker's log has the traceback)",
    )


def test_a_database_hiccup_while_recording_progress_does_not_end_the_transcode(clips, monkeypatch):
    # given: the first progress write fails (say, the database restarts mid-transcode)
    real_transcode, real_update = media_pipeline.ffmpeg.transcode, QuerySet.update
    hiccups = []

    def update_once_failing(queryset, **fields):
        if "progress" in fields and fields["progress"] < 1 and not hiccups:
            hiccups.append(fields["progress"])
            raise OperationalError("server closed the connection unexpectedly")
        return real_update(queryset, **fields)

    def transcode(**options):
        options["on_progress"](0.5)
        return real_transcode(**options)

    monkeypatch.setattr(QuerySet, "update", update_once_failing)
    monkeypatch.setattr(media_pipeline.ffmpeg, "transcode", transcode)
    job = job_of(stimulus_of(clips["square.mp4"]))
    # when
    transcode_job_run(job_id=job.pk)
    # then: the hiccup happened, and the job still finished with its rendition
    job.refresh_from_db()
    assert hiccups == [0.5]
    assert (job.status, job.error, job.progress) == ("done", "", 1.0)
    assert Stimulus.objects.get(pk=job.stimulus_id).status == "ready"


def test_a_job_another_worker_is_running_is_not_run_twice(clips):
    # given: a job marked running a minute ago by a session that is still connected
    stimulus = stimulus_of(clips["square.mp4"])
    job = job_of(
        stimulus,
        status="running",
        attempts=1,
        started_at=timezone.now() - timedelta(minutes=1),
        runner_session=this_session(),
    )
    # when: a duplicate message arrives
    transcode_job_run(job_id=job.pk)
    # then: nothing ran
    job.refresh_from_db()
    assert (job.status, job.attempts) == ("running", 1)
    assert not (Path(settings.MEDIA_ROOT) / "renditions").exists()


@pytest.mark.parametrize(
    ("started_s_ago", "session"),
    [(60, ENDED_SESSION), (transcode_time_limits()[1] + 1, "this")],
    ids=["its-worker-died", "past-the-time-limit"],
)
def test_a_job_whose_run_cannot_still_be_going_is_taken_over(clips, started_s_ago, session):
    # given: a running job whose worker's session has ended, or that started longer ago
    # than Celery lets a transcode run
    job = job_of(
        stimulus_of(clips["square.mp4"]),
        status="running",
        attempts=1,
        started_at=timezone.now() - timedelta(seconds=started_s_ago),
        runner_session=this_session() if session == "this" else session,
    )
    # when: its message is delivered again
    transcode_job_run(job_id=job.pk)
    # then
    job.refresh_from_db()
    assert (job.status, job.attempts) == ("done", 2)


def test_the_sweep_takes_back_running_jobs_whose_run_is_over(clips):
    # given: one job whose worker died, one past the time limit, one running fine
    stimuli = [stimulus_of(clips[name]) for name in ("square.mp4", "slow.mp4", "fast.mp4")]
    now = timezone.now()
    dead, old, alive = (
        job_of(
            s,
            status="running",
            attempts=1,
            started_at=now - timedelta(seconds=ago),
            runner_session=session,
        )
        for s, ago, session in (
            (stimuli[0], 60, ENDED_SESSION),
            (stimuli[1], transcode_time_limits()[1] + 1, None),
            (stimuli[2], 60, this_session()),
        )
    )
    # when
    sent = requeue_stale_jobs()
    # then: the first two are sent again (and, in-process, done); the third is left alone
    assert sorted(sent) == sorted([dead.pk, old.pk])
    statuses = [ProcessingJob.objects.get(pk=j.pk).status for j in (dead, old, alive)]
    assert statuses == ["done", "done", "running"]


def test_a_worker_lost_on_every_attempt_ends_the_job(clips):
    # given: a job whose four runs were all cut short (the worker killed each time)
    job = job_of(
        stimulus_of(clips["square.mp4"]),
        status="running",
        attempts=4,
        started_at=timezone.now() - timedelta(minutes=1),
        runner_session=ENDED_SESSION,
    )
    # when: its message is delivered once more
    transcode_job_run(job_id=job.pk)
    # then
    job.refresh_from_db()
    assert (job.status, job.attempts, job.error) == (
        "failed",
        4,
        "gave up after 4 attempts: the transcode never finished (the worker was lost or stopped)",
    )
    assert Stimulus.objects.get(pk=job.stimulus_id).status == "failed"


@pytest.mark.parametrize(
    ("session", "runs"), [("this", False), (ENDED_SESSION, True)], ids=["alive", "worker-died"]
)
def test_a_score_job_another_worker_is_running_is_not_scored_twice(clips, session, runs):
    from media_pipeline.models import MetricScore
    from media_pipeline.services.score_jobs import score_job_run

    # given: a score job marked running a minute ago (say, taken along into another
    # worker's batch), whose worker's database session is still there, or is gone
    stimulus = stimulus_of(clips["square.mp4"])
    job = ProcessingJob.objects.create(
        stimulus=stimulus,
        kind="score",
        status="running",
        attempts=1,
        started_at=timezone.now() - timedelta(minutes=1),
        runner_session=this_session() if session == "this" else session,
    )
    # when: its own message arrives
    score_job_run(job_id=job.pk)
    # then: scored only if the run holding it cannot still be going
    job.refresh_from_db()
    assert (job.status, job.attempts) == (("done", 2) if runs else ("running", 1))
    assert MetricScore.objects.filter(stimulus=stimulus).exists() == runs


def test_a_score_job_whose_runs_are_all_lost_fails_in_the_end(clips):
    from media_pipeline.models import MetricScore
    from media_pipeline.services.score_jobs import SCORE_MAX_ATTEMPTS, score_job_run

    # given: a score job whose every run so far was lost with its worker
    stimulus = stimulus_of(clips["square.mp4"])
    job = ProcessingJob.objects.create(
        stimulus=stimulus,
        kind="score",
        status="running",
        attempts=SCORE_MAX_ATTEMPTS,
        started_at=timezone.now() - timedelta(minutes=1),
        runner_session=ENDED_SESSION,
    )
    # when: the sweep takes it back and its message runs
    assert requeue_stale_jobs() == [job.pk]
    score_job_run(job_id=job.pk)
    # then: it fails with the reason instead of running a fourth time
    job.refresh_from_db()
    assert (job.status, job.attempts) == ("failed", SCORE_MAX_ATTEMPTS)
    assert job.error.startswith(f"gave up after {SCORE_MAX_ATTEMPTS} attempts: scoring")
    assert not MetricScore.objects.filter(stimulus=stimulus).exists()


def end_session(session: int) -> None:
    """What a database restart or fail-over does to a worker: its session is ended."""
    import psycopg

    config = connection.settings_dict
    with psycopg.connect(
        host=config["HOST"], port=config["PORT"], user=config["USER"],
        password=config["PASSWORD"], dbname=config["NAME"], autocommit=True,
    ) as other:  # fmt: skip
        other.execute("SELECT pg_terminate_backend(%s)", [session])


@pytest.mark.django_db(transaction=True)
def test_a_connection_dropped_mid_transcode_is_opened_again_and_the_rendition_kept(
    clips, monkeypatch
):
    # given: the worker's database session is ended during the encode, and again just
    # before the outcome is written
    real_transcode = media_pipeline.ffmpeg.transcode
    sessions = []

    def transcode(**options):
        sessions.append(this_session())
        end_session(sessions[-1])
        options["on_progress"](0.5)  # reconnects
        sessions.append(this_session())
        result = real_transcode(**options)
        end_session(sessions[-1])
        return result

    monkeypatch.setattr(media_pipeline.ffmpeg, "transcode", transcode)
    job = job_of(stimulus_of(clips["square.mp4"]))
    # when
    transcode_job_run(job_id=job.pk)
    # then: one run, its rendition recorded; while it ran, the job named its new session
    # (the sweep would otherwise have taken the job for a lost worker's)
    job.refresh_from_db()
    assert (job.status, job.attempts, job.error) == ("done", 1, "")
    assert Stimulus.objects.get(pk=job.stimulus_id).status == "ready"
    assert sessions[0] != sessions[1]
    assert job.runner_session == sessions[1]
