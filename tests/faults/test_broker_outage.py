"""Faults that happen in practice: the broker goes away while raters rate."""

import contextlib
import subprocess
import time
from pathlib import Path

import pytest
import redis

from media_pipeline.models import ProcessingJob
from media_pipeline.services.job_sweep import requeue_stale_jobs
from media_pipeline.services.transcode_jobs import stimuli_enqueue_processing
from tests import celery_worker
from tests.annotation.rater_fixtures import (
    answer,
    onboard,
    rater_client,
    session_ratings,
    tiny_study,
)

PORT = 6391
BROKER = f"redis://127.0.0.1:{PORT}/0"


def start_redis() -> subprocess.Popen:
    process = subprocess.Popen(
        [
            "redis-server",
            "--port",
            str(PORT),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    client = redis.Redis(port=PORT)
    celery_worker.wait_for(lambda: _pings(client), timeout=10, what="redis")
    return process


@contextlib.contextmanager
def broker_back_with_a_worker(*, queues: str, log: Path):
    """The broker started again and a real worker on `queues`; both stopped after."""
    broker = start_redis()
    worker = celery_worker.start_worker(queues=queues, log=log, broker=BROKER)
    try:
        yield
    finally:
        celery_worker.stop_worker(worker)
        broker.terminate()
        broker.wait()


def _pings(client) -> bool:
    try:
        return client.ping()
    except redis.ConnectionError:
        return False


@pytest.mark.celery
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_rating_goes_on_while_the_broker_is_down_and_jobs_are_sent_once_it_is_back(clips, tmp_path):
    # given: a running study and a broker that has just died
    tiny = tiny_study(rest_every=0)
    client, _ = rater_client()
    broker = start_redis()
    broker.terminate()
    broker.wait()
    with celery_worker.eager_off(BROKER):
        # when: raters rate and an admin's new video is queued
        onboard(client, tiny)
        for _ in range(3):
            item = client.get(tiny.base + "next/").json()["item"]["id"]
            started = time.monotonic()
            assert (
                client.post(tiny.base + "answers/", answer(item), format="json").status_code == 201
            )
            assert time.monotonic() - started < 2.0
        stimulus = tiny.study.stimuli.filter(role="stimulus").first()
        stimulus.source_file.save("v.mp4", open(clips["square.mp4"], "rb"))  # noqa: SIM115
        ProcessingJob.objects.all().delete()
        stimuli_enqueue_processing([stimulus.pk])  # the send fails: logged, not raised
        # then: every answer is stored, the job waits in its row
        assert session_ratings().count() == 3 * 3
        job = ProcessingJob.objects.get()
        assert job.status == "queued"
        # when: the broker is back and the sweep runs
        with broker_back_with_a_worker(queues="media", log=tmp_path / "w.log"):
            assert requeue_stale_jobs(older_than_s=0) == [job.pk]
            celery_worker.wait_for(
                lambda: ProcessingJob.objects.get(pk=job.pk).status == "done",
                timeout=60,
                what="the requeued transcode",
            )
    assert Path(stimulus.source_file.path).is_file()


@pytest.mark.celery
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_an_analysis_run_asked_for_while_the_broker_is_down_is_computed_once_it_is_back(
    tmp_path,
):
    from quality.models import AnalysisRun
    from quality.services import sweep_stale_requests
    from tests.quality.test_analysis_runs import rated_study, researcher

    # given: a rated study and a broker that has just died
    study, _ = rated_study(raters=4, stimuli=6)
    broker = start_redis()
    broker.terminate()
    broker.wait()
    with celery_worker.eager_off(BROKER):
        # when: a researcher asks for a run
        response = researcher().post(f"/api/studies/{study.slug}/analysis-runs/")
        # then: the request is answered, the run waits in its row
        assert response.status_code == 202
        run = AnalysisRun.objects.get(pk=response.json()["id"])
        assert run.status == "queued"
        # when: the broker is back and the sweep runs
        with broker_back_with_a_worker(queues="default", log=tmp_path / "w.log"):
            swept = sweep_stale_requests(older_than_s=0)
            assert swept["analysis_runs_sent"] == [run.pk]
            celery_worker.wait_for(
                lambda: AnalysisRun.objects.get(pk=run.pk).status == "done",
                timeout=60,
                what="the analysis run sent again",
            )
