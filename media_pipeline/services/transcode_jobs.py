"""Transcode jobs: queue a stimulus for its browser rendition, run the job (idempotently,
with bounded retries) and record the outcome on the stimulus."""

from __future__ import annotations

import errno
import logging
from collections.abc import Iterable
from pathlib import Path

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import (
    DatabaseError,
    IntegrityError,
    InterfaceError,
    OperationalError,
    connection,
    transaction,
)
from django.utils import timezone

from annotation.models import Stimulus
from config.run_liveness import db_session, live_db_sessions
from config.task_dispatch import send_on_commit
from media_pipeline.job_liveness import run_abandoned
from media_pipeline.models import ProcessingJob
from media_pipeline.services.score_jobs import stimuli_enqueue_scoring

logger = logging.getLogger(__name__)

# A transcode runs at most this often (the first run and three retries), however its
# runs end: time-outs, resource errors, workers lost mid-run.
TRANSCODE_MAX_ATTEMPTS = 4
# A retry waits 30 s after the first attempt, 60 s after the second, 120 s after the third.
TRANSCODE_RETRY_BACKOFF_S = 30
# OSError numbers of a resource hiccup worth a retry (a full disk, a network mount away);
# any other OSError (permissions, a path that is not a folder) fails the job at once.
RETRYABLE_ERRNOS = frozenset(
    {
        errno.ENOSPC,
        errno.EDQUOT,
        errno.EIO,
        errno.ESTALE,
        errno.ETIMEDOUT,
        errno.EAGAIN,
        errno.EBUSY,
        errno.EINTR,
        errno.ENOMEM,
        errno.EMFILE,
        errno.ENFILE,
    }
)


class TransientProcessingError(Exception):
    """Worth retrying: a time-out or a resource hiccup, not a bad file. The job is queued
    again, due in `countdown_s` seconds; the task sends it again then."""

    def __init__(self, message: str, *, countdown_s: int):
        super().__init__(message)
        self.countdown_s = countdown_s


def stimuli_process_again(stimulus_ids: Iterable[int]) -> tuple[list[int], list[int]]:
    """Try again what failed, for videos whose failure may have passed (a time-out on a
    busy machine, a worker lost each time, a metric's weights installed since): a video
    whose transcode failed is set back to pending and transcoded anew; a processed video
    whose scoring failed is scored anew. Anything else (processed and scored, or in
    progress) is left as it is. Returns (transcode job ids, score job ids) queued."""
    ids = list(stimulus_ids)
    failed = Stimulus.objects.filter(pk__in=ids, status=Stimulus.Status.FAILED)
    to_transcode = list(failed.values_list("pk", flat=True))
    scored_badly = (
        ProcessingJob.objects.filter(
            stimulus_id__in=ids,
            stimulus__status=Stimulus.Status.READY,
            kind=ProcessingJob.Kind.SCORE,
            status=ProcessingJob.Status.FAILED,
        )
        .values_list("stimulus_id", flat=True)
        .distinct()
    )
    with transaction.atomic():
        failed.update(status=Stimulus.Status.PENDING, processing_error="")
        transcodes = stimuli_enqueue_processing(to_transcode)
        scores = stimuli_enqueue_scoring(list(scored_badly))
    logger.info("processing again: %d transcodes, %d scorings", len(transcodes), len(scores))
    return transcodes, scores


def stimuli_enqueue_processing(stimulus_ids: Iterable[int]) -> list[int]:
    """Queue a transcode job for each stimulus that has neither an open nor a finished one.

    Every job is stored before the first is sent: in-process a send runs the transcode at
    once, and a stop midway must leave the rest queued for the sweep, not unrecorded."""
    from media_pipeline.tasks import transcode_stimulus

    job_ids = []
    with transaction.atomic():
        for stimulus_id in stimulus_ids:
            if ProcessingJob.objects.filter(
                stimulus_id=stimulus_id,
                kind=ProcessingJob.Kind.TRANSCODE,
                status__in=[
                    ProcessingJob.Status.QUEUED,
                    ProcessingJob.Status.RUNNING,
                    ProcessingJob.Status.DONE,
                ],
            ).exists():
                continue
            try:
                with transaction.atomic():
                    job = ProcessingJob.objects.create(
                        stimulus_id=stimulus_id, kind=ProcessingJob.Kind.TRANSCODE
                    )
            except IntegrityError:
                continue  # another process queued it at the same moment
            job_ids.append(job.pk)
            send_on_commit(transcode_stimulus, job.pk)
    return job_ids


def _claim(job_id: int) -> ProcessingJob | None:
    """Lock the job and mark it running; None when there is nothing left to do.

    A job another worker is running is not taken: a duplicate message is dropped (if
    that worker dies, its own unacknowledged message is delivered again and finds the
    job abandoned). A job out of attempts fails instead of running once more.
    """
    now = timezone.now()
    with transaction.atomic():
        job = (
            ProcessingJob.objects.select_for_update()
            .select_related("stimulus__study")
            .filter(pk=job_id)
            .first()
        )
        if job is None or job.status in (ProcessingJob.Status.DONE, ProcessingJob.Status.FAILED):
            return None
        if job.status == ProcessingJob.Status.RUNNING and not run_abandoned(
            job, now=now, live_sessions=live_db_sessions([job.runner_session])
        ):
            logger.info("transcode job %s is running in another worker: not run twice", job.pk)
            return None
        if job.attempts >= TRANSCODE_MAX_ATTEMPTS:
            last = f"; the last: {job.error}" if job.error else ""
            _fail(
                job,
                f"gave up after {job.attempts} attempts: the transcode never finished "
                f"(the worker was lost or stopped){last}",
            )
            return None
        job.status = ProcessingJob.Status.RUNNING
        job.attempts += 1
        job.started_at = now
        job.runner_session = db_session()
        job.save(update_fields=["status", "attempts", "started_at", "runner_session"])
        Stimulus.objects.filter(pk=job.stimulus_id).update(status=Stimulus.Status.PROCESSING)
    return job


def _fail(job: ProcessingJob, message: str) -> None:
    with transaction.atomic():
        ProcessingJob.objects.filter(pk=job.pk).update(
            status=ProcessingJob.Status.FAILED, error=message, finished_at=timezone.now()
        )
        Stimulus.objects.filter(pk=job.stimulus_id).update(
            status=Stimulus.Status.FAILED, processing_error=message
        )
    logger.warning("transcode of stimulus %s failed: %s", job.stimulus_id, message)


def _retry_or_fail(job: ProcessingJob, message: str, *, retry_allowed: bool) -> None:
    """Queue the job again, due after a back-off, and raise TransientProcessingError for
    the task to send it then; fail it when it is out of attempts or nobody can retry."""
    if not retry_allowed:
        _fail(job, f"{message} (not retried: tasks run in-process, with no worker to retry)")
        return
    if job.attempts >= TRANSCODE_MAX_ATTEMPTS:
        _fail(job, f"gave up after {job.attempts} attempts; the last: {message}")
        return
    countdown_s = TRANSCODE_RETRY_BACKOFF_S * 2 ** (job.attempts - 1)
    ProcessingJob.objects.filter(pk=job.pk).update(
        status=ProcessingJob.Status.QUEUED,
        error=message,
        due_at=timezone.now() + timezone.timedelta(seconds=countdown_s),
    )
    raise TransientProcessingError(message, countdown_s=countdown_s)


def rendition_stem(stimulus: Stimulus) -> str:
    """The rendition's and poster's file name: the content checksum and the stimulus. A
    stimulus owns its files: the same video in two studies (one with `drop_audio`) gets
    two renditions, and no run ever writes, cleans up or replaces another's."""
    return f"{stimulus.checksum}-{stimulus.pk}"


def _segment_of(stimulus: Stimulus) -> tuple[float, float] | None:
    """(keyframe, seconds) of a stimulus that is a segment of its file (propose-then-
    verify: the rater sees the part around the keyframe, not the film)."""
    segment = stimulus.segment or {}
    if "keyframe" not in segment:
        return None
    return float(segment["keyframe"]), float(segment.get("seconds", 3.0))


def transcode_job_run(*, job_id: int, retry_allowed: bool = True) -> None:
    """Transcode a stimulus into its browser rendition; safe to run again at any point.

    A finished job, or one running in another worker, is skipped. The rendition is
    written under `rendition_stem`, atomically, so a re-run after a crash overwrites
    nothing good. A bad file (corrupt, empty, not a video) or an error that no retry
    mends (permissions, an unexpected exception) ends the job as FAILED with an admin's
    message; a time-out or a resource hiccup (a full disk) queues it again and raises
    TransientProcessingError for the task to retry, up to TRANSCODE_MAX_ATTEMPTS runs
    (`retry_allowed=False`, for tasks run in-process, fails it at once).
    """
    from media_pipeline import ffmpeg

    job = _claim(job_id)
    if job is None:
        return
    stimulus = job.stimulus

    runner = {"session": job.runner_session, "lost": False}

    def on_progress(fraction: float) -> None:
        # Progress is for the monitor only: a database hiccup while writing it must not
        # end a transcode that is going well (the outcome is written after it). A dropped
        # connection (a database restart or fail-over) is opened again, and the job names
        # the new session as its runner, so that the sweep does not take it for a lost
        # worker's and run it a second time beside this one.
        try:
            ProcessingJob.objects.filter(pk=job.pk).update(progress=round(fraction, 3))
        except DatabaseError as exc:
            if not runner["lost"]:
                logger.warning("progress of transcode job %s not recorded: %s", job.pk, exc)
            runner["lost"] = True
            if connection.in_atomic_block:
                return  # not a connection of its own to open again (a caller's transaction)
            connection.close()  # the next query opens a new connection
            try:
                runner["session"] = _runner_again(job.pk, runner["session"])
                runner["lost"] = False
            except DatabaseError:
                pass  # still away: tried again at the next progress

    try:
        result = ffmpeg.transcode(
            src=Path(stimulus.source_file.path),
            out_dir=Path(settings.MEDIA_ROOT) / "renditions" / stimulus.checksum[:2],
            keep_audio=not stimulus.study.drop_audio,
            on_progress=on_progress,
            timeout_s=settings.MOSAIC_TRANSCODE_TIMEOUT_S,
            stem=rendition_stem(stimulus),
            around=_segment_of(stimulus),
            max_pixels=settings.MOSAIC_MAX_DECODED_PIXELS,
        )
    except ffmpeg.MediaError as exc:
        # Name the file as the admin knows it, not by its storage name or path (ffmpeg's
        # messages name the input by its full path).
        message = str(exc)
        for stored in (stimulus.source_file.path, Path(stimulus.source_file.name).name):
            message = message.replace(stored, stimulus.original_name or stimulus.source_file.name)
        _fail(job, message)
        return
    except (ffmpeg.TransientMediaError, SoftTimeLimitExceeded) as exc:
        _retry_or_fail(job, str(exc) or "transcode timed out", retry_allowed=retry_allowed)
        return
    except OSError as exc:
        message = f"transcode failed: {exc}"
        if exc.errno in RETRYABLE_ERRNOS:
            _retry_or_fail(job, message, retry_allowed=retry_allowed)
        else:
            _fail(job, message)
        return
    except Exception as exc:
        logger.exception("transcode of stimulus %s broke", stimulus.pk)
        _fail(
            job,
            f"transcode failed: unexpected {type(exc).__name__}: {exc} "
            "(the worker's log has the traceback)",
        )
        return

    try:
        _store_rendition(job, stimulus, result)
    except (OperationalError, InterfaceError) as exc:
        # the connection dropped during the encode: the rendition is written and good,
        # so it is recorded over a new connection rather than made again
        logger.warning("transcode job %s: storing over a new connection (%s)", job.pk, exc)
        connection.close()
        _store_rendition(job, stimulus, result)


def _runner_again(job_id: int, old_session: int | None) -> int:
    """After a reconnect: this connection's session becomes the job's runner, where the
    job is still this worker's (running under the session it had)."""
    session = db_session()
    ProcessingJob.objects.filter(
        pk=job_id, status=ProcessingJob.Status.RUNNING, runner_session=old_session
    ).update(runner_session=session)
    logger.info("transcode job %s: reconnected, database session %s", job_id, session)
    return session


def _store_rendition(job: ProcessingJob, stimulus: Stimulus, result) -> None:
    media_root = Path(settings.MEDIA_ROOT)
    source = result.source
    with transaction.atomic():
        Stimulus.objects.filter(pk=stimulus.pk).update(
            status=Stimulus.Status.READY,
            processing_error="",
            rendition=str(Path(result.output).relative_to(media_root)),
            poster=str(Path(result.poster).relative_to(media_root)),
            width=source.width,
            height=source.height,
            fps=source.fps,
            frame_count=source.frames,
            duration_s=result.duration,  # what plays: a header may claim more
            codec=source.codec,
            metadata=result.as_dict(),
        )
        ProcessingJob.objects.filter(pk=job.pk).update(
            status=ProcessingJob.Status.DONE,
            progress=1.0,
            error="",
            result=result.as_dict(),
            finished_at=timezone.now(),
        )
        # Every processed video is scored by the baseline metrics (gpu queue).
        transaction.on_commit(lambda: stimuli_enqueue_scoring([stimulus.pk]))
