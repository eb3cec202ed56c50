"""Celery tasks of the journey: thin shells over annotation.services (default queue)."""

from celery import shared_task

from annotation.models import Study
from annotation.services.adaptive import adaptive_review, adaptive_sweep
from annotation.services.verify_queue import verify_queue_fill, verify_queues_sweep


@shared_task(acks_late=True, reject_on_worker_lost=True)  # idempotent: made once per segment
def fill_verify_queue(item_id: int) -> bool:
    return verify_queue_fill(item_id=item_id) is not None


@shared_task
def sweep_verify_queues() -> int:
    return verify_queues_sweep()


@shared_task(acks_late=True, reject_on_worker_lost=True)  # idempotent: settles a video once
def review_adaptive(study_id: int) -> int:
    """Settle the study's videos the stopping rule stops now (annotation.services.adaptive);
    the number settled. A study deleted meanwhile is nothing to do."""
    study = Study.objects.filter(pk=study_id).first()
    review = adaptive_review(study=study) if study is not None else None
    return len(review.settled_now) if review is not None else 0


@shared_task
def sweep_adaptive() -> int:
    return adaptive_sweep()
