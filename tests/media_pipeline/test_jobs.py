"""Processing jobs: in-process (eager) and through a real Celery worker over Redis."""

import csv
import io
import os
import re
import signal
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from annotation.errors import ImportFailed
from annotation.models import Stimulus
from annotation.services.study_import import study_import_manifest
from media_pipeline.ffmpeg.synth import make_clip
from media_pipeline.models import MetricScore, ProcessingJob
from media_pipeline.services.score_jobs import score_job_run
from media_pipeline.services.transcode_jobs import stimuli_enqueue_processing
from tests import celery_worker
from tests.factories import UserFactory, make_study


def manifest_of(folder: Path, files: list[Path]) -> Path:
    manifest = folder / "manifest.csv"
    with open(manifest, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["path", "role", "prompt"])
        for path in files:
            writer.writerow([str(path), "stimulus", "A girl arranges daisies."])
    return manifest


@pytest.mark.django_db
def test_import_transcodes_and_scores_in_process(
    clips, bad_files, tmp_path, django_capture_on_commit_callbacks
):
    # given
    study = make_study()
    manifest = manifest_of(tmp_path, [clips["odd.mp4"], clips["anim.gif"]])
    # when: the import commits, the jobs run (eagerly here)
    with django_capture_on_commit_callbacks(execute=True):
        study_import_manifest(study=study, manifest=manifest, on_commit=stimuli_enqueue_processing)
    # then
    odd = Stimulus.objects.get(original_name="odd.mp4")
    assert (odd.status, odd.width, odd.height, odd.fps, odd.frame_count) == (
        "ready",
        257,
        255,
        12.0,
        12,
    )
    assert odd.metadata["pad_right"] == 1 and odd.metadata["pad_bottom"] == 1
    assert (Path(settings.MEDIA_ROOT) / odd.rendition.name).is_file()
    assert (Path(settings.MEDIA_ROOT) / odd.poster.name).is_file()
    scored = set(MetricScore.objects.filter(stimulus=odd).values_list("metric", flat=True))
    assert {"brightness", "si", "ti", "colorfulness"} <= scored


@pytest.mark.django_db
def test_an_import_naming_a_file_that_is_no_video_is_refused_whole(clips, bad_files, tmp_path):
    # given: a text file among the videos (probed as an upload is)
    study = make_study()
    manifest = manifest_of(tmp_path, [clips["odd.mp4"], bad_files["text"]])
    # when
    with pytest.raises(ImportFailed) as refused:
        study_import_manifest(study=study, manifest=manifest)
    # then: its line named, and nothing imported
    ((line, message),) = refused.value.errors
    assert line == 3 and message.startswith("not a video: notes.mp4")
    assert not Stimulus.objects.filter(study=study).exists()


@pytest.mark.django_db
def test_enqueueing_twice_makes_one_job(clips, tmp_path, django_capture_on_commit_callbacks):
    study = make_study()
    manifest = manifest_of(tmp_path, [clips["square.mp4"]])
    report = study_import_manifest(study=study, manifest=manifest)
    with django_capture_on_commit_callbacks(execute=True):
        stimuli_enqueue_processing(report.created)
        stimuli_enqueue_processing(report.created)
    assert ProcessingJob.objects.filter(kind="transcode").count() == 1
    assert ProcessingJob.objects.get(kind="transcode").attempts == 1


@pytest.fixture
def worker_log(tmp_path):
    celery_worker.flush_broker()
    return tmp_path / "worker.log"


@pytest.mark.celery
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_transcodes_and_scores(clips, tmp_path, worker_log):
    study = make_study()
    manifest = manifest_of(tmp_path, [clips["fast.mp4"]])
    worker = celery_worker.start_worker(queues="media,gpu", log=worker_log)
    try:
        with celery_worker.eager_off():
            study_import_manifest(
                study=study, manifest=manifest, on_commit=stimuli_enqueue_processing
            )
        stimulus = Stimulus.objects.get(study=study)
        celery_worker.wait_for(
            lambda: MetricScore.objects.filter(stimulus=stimulus).count() >= 10,
            timeout=90,
            what=f"scores; worker log:\n{worker_log}",
        )
    finally:
        celery_worker.stop_worker(worker)
    stimulus.refresh_from_db()
    assert (stimulus.status, stimulus.frame_count) == ("ready", 50)
    # logged through MOSaic's LOGGING (MOSAIC_LOG_LEVEL, its format), as web logs: Celery
    # does not take the root logger over at its own level
    line = r"^\S+ \S+ INFO celery\.app\.trace Task media_pipeline\.tasks\.transcode_stimulus\["
    assert re.search(line, worker_log.read_text(), re.MULTILINE), worker_log.read_text()


@pytest.mark.celery
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_transcode_finishes_after_restart(tmp_path, worker_log, monkeypatch):
    # given: a clip that takes a few seconds to encode
    big = make_clip(path=tmp_path / "big.mp4", width=1920, height=1080, fps=30, seconds=4)
    study = make_study()
    manifest = manifest_of(tmp_path, [big])
    monkeypatch.setenv("MOSAIC_VISIBILITY_TIMEOUT_S", "3")
    worker = celery_worker.start_worker(queues="media", log=worker_log)
    try:
        with celery_worker.eager_off():
            study_import_manifest(
                study=study, manifest=manifest, on_commit=stimuli_enqueue_processing
            )
        job = ProcessingJob.objects.get(kind="transcode")
        celery_worker.wait_for(
            lambda: ProcessingJob.objects.filter(pk=job.pk, progress__gt=0).exists(),
            timeout=60,
            what="the transcode to start",
        )
    finally:
        # when: the worker dies with the task in hand (no acknowledgement was sent)
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()
    assert ProcessingJob.objects.get(pk=job.pk).status == "running"
    restarted = celery_worker.start_worker(queues="media", log=worker_log)
    try:
        celery_worker.wait_for(
            lambda: ProcessingJob.objects.get(pk=job.pk).status == "done",
            timeout=120,
            what="the redelivered transcode",
        )
    finally:
        celery_worker.stop_worker(restarted)
    # then: done on the second attempt, one good output and no half-written file
    job.refresh_from_db()
    assert job.attempts == 2
    stimulus = Stimulus.objects.get(pk=job.stimulus_id)
    folder = (Path(settings.MEDIA_ROOT) / stimulus.rendition.name).parent
    assert sorted(p.name for p in folder.iterdir()) == [
        f"{stimulus.checksum}-{stimulus.pk}.jpg",
        f"{stimulus.checksum}-{stimulus.pk}.mp4",
    ]
    assert stimulus.frame_count == 120 and stimulus.status == "ready"


@pytest.mark.django_db
def test_a_score_job_takes_queued_ones_along_and_a_broken_video_fails_alone(
    clips, tmp_path, settings, django_capture_on_commit_callbacks
):
    # given: three processed videos, scores gone, three queued score jobs (oldest first);
    # the second video's rendition has been damaged since it was transcoded
    study = make_study()
    names = ["square.mp4", "slow.mp4", "fast.mp4"]
    manifest = manifest_of(tmp_path, [clips[name] for name in names])
    with django_capture_on_commit_callbacks(execute=True):
        study_import_manifest(study=study, manifest=manifest, on_commit=stimuli_enqueue_processing)
    videos = [Stimulus.objects.get(original_name=name) for name in names]
    MetricScore.objects.all().delete()
    jobs = [ProcessingJob.objects.create(stimulus=v, kind="score") for v in videos]
    (Path(settings.MEDIA_ROOT) / videos[1].rendition.name).write_bytes(b"not a video")
    settings.MOSAIC_SCORE_BATCH = 3
    # when: the last job's task runs first
    score_job_run(job_id=jobs[2].pk)
    # then: all three were taken in one pass; the damaged one failed, the others are scored
    for job in jobs:
        job.refresh_from_db()
    assert [(j.status, j.attempts) for j in jobs] == [("done", 1), ("failed", 1), ("done", 1)]
    assert jobs[1].error.startswith("not a video: ")
    assert MetricScore.objects.filter(stimulus=videos[0], metric="si").exists()
    assert MetricScore.objects.filter(stimulus=videos[2], metric="si").exists()
    assert not MetricScore.objects.filter(stimulus=videos[1]).exists()
    # when: the other jobs' own messages arrive: nothing is scored twice
    stored = MetricScore.objects.count()
    score_job_run(job_id=jobs[0].pk)
    score_job_run(job_id=jobs[1].pk)
    assert MetricScore.objects.count() == stored
    assert [ProcessingJob.objects.get(pk=j.pk).attempts for j in jobs] == [1, 1, 1]


@pytest.mark.django_db
def test_a_pass_that_breaks_fails_its_video_and_puts_the_rest_back_in_the_queue(
    clips, tmp_path, settings, monkeypatch, django_capture_on_commit_callbacks
):
    # given: three queued score jobs; the pass breaks while scoring the second video
    from media_pipeline.metrics import scoring

    study = make_study()
    names = ["square.mp4", "slow.mp4", "fast.mp4"]
    manifest = manifest_of(tmp_path, [clips[name] for name in names])
    with django_capture_on_commit_callbacks(execute=True):
        study_import_manifest(study=study, manifest=manifest, on_commit=stimuli_enqueue_processing)
    MetricScore.objects.all().delete()
    videos = [Stimulus.objects.get(original_name=name) for name in names]
    jobs = [ProcessingJob.objects.create(stimulus=v, kind="score") for v in videos]
    real = scoring.score_videos

    def breaks_at_the_second(requests, **options):
        results = real(requests, **options)
        yield next(results)
        results.close()
        raise RuntimeError("out of GPU memory")

    monkeypatch.setattr(scoring, "score_videos", breaks_at_the_second)
    settings.MOSAIC_SCORE_BATCH = 3
    # when
    score_job_run(job_id=jobs[0].pk)
    # then: the first is stored, the second failed with the reason, the third waits again
    for job in jobs:
        job.refresh_from_db()
    assert [j.status for j in jobs] == ["done", "failed", "queued"]
    assert jobs[1].error == "out of GPU memory"
    assert MetricScore.objects.filter(stimulus=videos[0], metric="si").exists()
    assert not MetricScore.objects.filter(stimulus__in=videos[1:]).exists()


def scored_batch(tmp_path, files: list[Path], django_capture_on_commit_callbacks):
    """The files imported and transcoded, their scores gone, a queued score job each."""
    study = make_study()
    with django_capture_on_commit_callbacks(execute=True):
        study_import_manifest(
            study=study, manifest=manifest_of(tmp_path, files), on_commit=stimuli_enqueue_processing
        )
    MetricScore.objects.all().delete()
    videos = [Stimulus.objects.get(original_name=path.name) for path in files]
    return videos, [ProcessingJob.objects.create(stimulus=v, kind="score") for v in videos]


@pytest.mark.django_db
def test_a_video_too_small_for_a_metric_is_scored_without_it_and_its_batch_goes_on(
    clips, tmp_path, settings, django_capture_on_commit_callbacks
):
    # given: a 2 x 2 video (no Sobel gradient: its SI has no value) between two others
    tiny = make_clip(path=tmp_path / "tiny.mp4", width=2, height=2, fps=10, seconds=1.0).path
    files = [clips["square.mp4"], tiny, clips["fast.mp4"]]
    videos, jobs = scored_batch(tmp_path, files, django_capture_on_commit_callbacks)
    settings.MOSAIC_SCORE_BATCH = 3
    # when
    score_job_run(job_id=jobs[0].pk)
    # then: every job done; the tiny video's SI unavailable with the reason, not NaN
    for job in jobs:
        job.refresh_from_db()
    assert [j.status for j in jobs] == ["done", "done", "done"]
    assert jobs[1].result["unavailable"]["si"] == (
        "not defined for this video (no finite value came out)"
    )
    assert not MetricScore.objects.filter(stimulus=videos[1], metric="si").exists()
    assert MetricScore.objects.filter(stimulus=videos[1], metric="flicker").exists()
    assert MetricScore.objects.filter(stimulus__in=[videos[0], videos[2]], metric="si").count() == 2


@pytest.mark.django_db
def test_scores_that_cannot_be_stored_fail_their_video_alone(
    clips, tmp_path, settings, monkeypatch, django_capture_on_commit_callbacks
):
    from media_pipeline.services import score_jobs

    files = [clips[name] for name in ("square.mp4", "slow.mp4", "fast.mp4")]
    videos, jobs = scored_batch(tmp_path, files, django_capture_on_commit_callbacks)
    real = score_jobs._score_job_store

    def refuses_the_second(job, report):
        if job.pk == jobs[1].pk:
            raise ValueError("the database refused the row")
        real(job, report)

    monkeypatch.setattr(score_jobs, "_score_job_store", refuses_the_second)
    settings.MOSAIC_SCORE_BATCH = 3
    # when
    score_job_run(job_id=jobs[0].pk)
    # then: the second failed with the reason; the others were scored, not left running
    for job in jobs:
        job.refresh_from_db()
    assert [j.status for j in jobs] == ["done", "failed", "done"]
    assert jobs[1].error == "the database refused the row"
    assert MetricScore.objects.filter(stimulus=videos[2], metric="si").exists()


@pytest.mark.django_db
def test_a_score_job_takes_at_most_the_batch_size(
    clips, tmp_path, settings, django_capture_on_commit_callbacks
):
    study = make_study()
    manifest = manifest_of(tmp_path, [clips["square.mp4"], clips["slow.mp4"]])
    with django_capture_on_commit_callbacks(execute=True):
        study_import_manifest(study=study, manifest=manifest, on_commit=stimuli_enqueue_processing)
    MetricScore.objects.all().delete()
    jobs = [ProcessingJob.objects.create(stimulus=v, kind="score") for v in Stimulus.objects.all()]
    settings.MOSAIC_SCORE_BATCH = 1
    score_job_run(job_id=jobs[1].pk)
    assert [ProcessingJob.objects.get(pk=j.pk).status for j in jobs] == ["queued", "done"]


@pytest.mark.django_db
def test_score_videos_computes_only_the_metric_versions_not_stored(
    clips, tmp_path, django_capture_on_commit_callbacks
):
    # given: a processed video whose brightness was scored under an older definition
    study = make_study()
    manifest = manifest_of(tmp_path, [clips["square.mp4"]])
    with django_capture_on_commit_callbacks(execute=True):
        study_import_manifest(study=study, manifest=manifest, on_commit=stimuli_enqueue_processing)
    video = Stimulus.objects.get(original_name="square.mp4")
    MetricScore.objects.filter(stimulus=video, metric="brightness").update(version="0")
    stored = MetricScore.objects.filter(stimulus=video).count()
    # when
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("score_videos", study=study.slug, stdout=out)
    # then: the current brightness was added, nothing else was scored again
    assert "queued 1 of 1 processed videos" in out.getvalue()
    brightness = MetricScore.objects.filter(stimulus=video, metric="brightness")
    assert sorted(brightness.values_list("version", flat=True)) == ["0", "2"]
    assert MetricScore.objects.filter(stimulus=video).count() == stored + 1


@pytest.mark.django_db
def test_score_videos_refuses_an_unknown_study():
    with pytest.raises(CommandError, match="no study with the slug 'nope'"):
        call_command("score_videos", study="nope")


@pytest.mark.django_db
def test_a_failed_transcode_and_a_failed_scoring_can_be_tried_again_from_the_admin(
    clips, tmp_path, client, django_capture_on_commit_callbacks
):
    # given: two processed videos; the first's transcode then failed (a time-out on a
    # busy machine), the second's scoring failed (a lost worker, each time)
    files = [clips["square.mp4"], clips["fast.mp4"]]
    (timed_out, unscored), _ = scored_batch(tmp_path, files, django_capture_on_commit_callbacks)
    ProcessingJob.objects.all().delete()
    ProcessingJob.objects.create(stimulus=timed_out, kind="transcode", status="failed")
    Stimulus.objects.filter(pk=timed_out.pk).update(status="failed", processing_error="timed out")
    ProcessingJob.objects.create(stimulus=unscored, kind="score", status="failed")
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    # when: both selected, with the action
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/admin/annotation/stimulus/",
            {"action": "process_again", "_selected_action": [timed_out.pk, unscored.pk]},
            follow=True,
        )
    # then: transcoded (and scored) anew, and the other scored
    assert "Queued 1 transcode(s) and 1 scoring(s) again." in response.content.decode()
    timed_out.refresh_from_db()
    assert (timed_out.status, timed_out.processing_error) == ("ready", "")
    assert MetricScore.objects.filter(stimulus=timed_out, metric="si").exists()
    assert MetricScore.objects.filter(stimulus=unscored, metric="si").exists()
    # and once nothing failed, the action says so and queues nothing
    jobs = ProcessingJob.objects.count()
    response = client.post(
        "/admin/annotation/stimulus/",
        {"action": "process_again", "_selected_action": [timed_out.pk]},
        follow=True,
    )
    assert "Nothing failed among the selected videos." in response.content.decode()
    assert ProcessingJob.objects.count() == jobs
