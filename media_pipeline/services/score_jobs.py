"""Score jobs (gpu queue): every READY stimulus is scored by the baseline metrics, in
batches, idempotently per (video, metric, version)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from config.run_liveness import db_session, live_db_sessions
from config.task_dispatch import send_on_commit
from media_pipeline.job_liveness import run_abandoned
from media_pipeline.models import MetricScore, ProcessingJob

logger = logging.getLogger(__name__)

# A score job runs at most this often: a video whose runs are all lost (it kills or
# outlasts its worker) fails instead of taking a batch down every sweep.
SCORE_MAX_ATTEMPTS = 3


def stimuli_enqueue_scoring(stimulus_ids: Iterable[int]) -> list[int]:
    """Queue metric scoring (gpu queue) for each READY stimulus without an open score job."""
    from media_pipeline.tasks import score_stimulus

    job_ids = []
    with transaction.atomic():  # all stored before the first is sent (and, in-process, run)
        for stimulus_id in stimulus_ids:
            try:
                with transaction.atomic():
                    job = ProcessingJob.objects.create(
                        stimulus_id=stimulus_id, kind=ProcessingJob.Kind.SCORE
                    )
            except IntegrityError:
                continue  # one is queued or running already
            job_ids.append(job.pk)
            send_on_commit(score_stimulus, job.pk)
    return job_ids


def score_job_run(*, job_id: int) -> None:
    """Score the job's video, together with up to MOSAIC_SCORE_BATCH - 1 other queued score
    jobs (oldest first), in one pass over the batch: videos are decoded side by side, each
    decoder going on to the next video while the metrics of the last one finish. The other
    jobs' own messages, delivered later, find them done.

    Idempotent per (video, metric, version): stored scores are skipped, so a redelivered
    task only computes what is missing. Metrics whose weights are absent are recorded
    as unavailable in the job's result with the reason; a video that cannot be decoded, or
    whose metrics fail, fails its job alone.
    """
    from media_pipeline.metrics import registry
    from media_pipeline.metrics.scoring import VideoRequest, score_videos

    jobs = _score_jobs_claim(job_id=job_id, batch=settings.MOSAIC_SCORE_BATCH)
    if not jobs:
        return
    stored: dict[int, set[tuple[str, str]]] = {job.stimulus_id: set() for job in jobs}
    for stimulus_id, metric, version in MetricScore.objects.filter(
        stimulus_id__in=stored
    ).values_list("stimulus_id", "metric", "version"):
        stored[stimulus_id].add((metric, version))
    requests = []
    for job in jobs:
        stimulus, done = job.stimulus, stored[job.stimulus_id]
        wanted = [m.name for m in registry.available_metrics() if (m.name, m.version) not in done]
        path = Path(settings.MEDIA_ROOT) / (stimulus.rendition.name or stimulus.source_file.name)
        requests.append(
            VideoRequest(path=path, prompt=stimulus.prompt or None, metric_names=wanted)
        )
    results = score_videos(
        requests,
        weights_dir=Path(settings.MOSAIC_WEIGHTS_DIR),
        weight_sha256=settings.MOSAIC_WEIGHT_SHA256,
        device=None,
    )
    try:
        for position, job in enumerate(jobs):
            try:
                scored = next(results)
            except Exception as exc:  # the batch's pass itself broke (one video's failure
                # comes as its scored.error): the job waited on fails with the reason
                _score_job_fail(job, exc)
                rest = [j.pk for j in jobs[position + 1 :]]
                ProcessingJob.objects.filter(pk__in=rest).update(
                    # requeue_stale_jobs sends them again
                    status=ProcessingJob.Status.QUEUED,
                    due_at=timezone.now(),
                )
                return
            if scored.error is not None:
                _score_job_fail(job, scored.error)
                continue
            try:
                _score_job_store(job, scored.report)
            except Exception as exc:  # one video's scores refused: the batch goes on
                logger.exception("storing the scores of stimulus %s failed", job.stimulus_id)
                _score_job_fail(job, exc)
    finally:
        results.close()  # stops the decoder threads if this ends early


def _score_jobs_claim(*, job_id: int, batch: int) -> list[ProcessingJob]:
    """The job (unless it is finished, gone or running in another worker: a duplicate
    message, or the job's own message while a batch that took it along is still going)
    and up to batch - 1 queued score jobs that no other worker holds, all marked
    running, in one transaction."""
    with transaction.atomic():
        job = (
            ProcessingJob.objects.select_for_update(of=("self",))
            .select_related("stimulus")
            .filter(pk=job_id)
            .first()
        )
        if job is None or job.status in (ProcessingJob.Status.DONE, ProcessingJob.Status.FAILED):
            return []
        if job.status == ProcessingJob.Status.RUNNING and not run_abandoned(
            job, now=timezone.now(), live_sessions=live_db_sessions([job.runner_session])
        ):
            logger.info("score job %s is running in another worker: not run twice", job.pk)
            return []
        if job.attempts >= SCORE_MAX_ATTEMPTS:
            # every run so far was lost (a worker killed, out of memory, past the time
            # limit): the video would take its batch down again
            _score_job_fail(
                job,
                RuntimeError(
                    f"gave up after {job.attempts} attempts: scoring never finished "
                    "(the worker was lost or stopped each time; its log says why)"
                ),
            )
            return []
        others = list(
            ProcessingJob.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("stimulus")
            .filter(
                kind=ProcessingJob.Kind.SCORE,
                status=ProcessingJob.Status.QUEUED,
                attempts__lt=SCORE_MAX_ATTEMPTS - 1,  # lost twice: only on its own message
            )
            .exclude(pk=job_id)
            .order_by("created_at", "pk")[: max(batch - 1, 0)]
        )
        jobs = [job, *others]
        now, session = timezone.now(), db_session()
        for claimed in jobs:
            claimed.status = ProcessingJob.Status.RUNNING
            claimed.attempts += 1
            claimed.started_at = now
            claimed.runner_session = session
        ProcessingJob.objects.bulk_update(
            jobs, ["status", "attempts", "started_at", "runner_session"]
        )
    return jobs


def _score_job_fail(job: ProcessingJob, error: Exception) -> None:
    """A video that cannot be decoded or scored: recorded, not retried."""
    ProcessingJob.objects.filter(pk=job.pk).update(
        status=ProcessingJob.Status.FAILED, error=str(error), finished_at=timezone.now()
    )
    logger.warning("scoring of stimulus %s failed: %s", job.stimulus_id, error)


def _score_job_store(job: ProcessingJob, report) -> None:
    from media_pipeline.metrics import registry

    versions = {m.name: m.version for m in registry.available_metrics()}
    with transaction.atomic():
        MetricScore.objects.bulk_create(
            [
                MetricScore(
                    stimulus_id=job.stimulus_id,
                    metric=name,
                    version=versions[name],
                    value=value,
                    device=report.device,
                    runtime_s=report.runtimes.get(name, 0.0),
                )
                for name, value in report.values.items()
            ],
            ignore_conflicts=True,
        )
        ProcessingJob.objects.filter(pk=job.pk).update(
            status=ProcessingJob.Status.DONE,
            progress=1.0,
            finished_at=timezone.now(),
            result={
                "device": report.device,
                "values": report.values,
                "unavailable": report.unavailable,
            },
        )
