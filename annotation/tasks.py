"""Celery tasks of the journey: thin shells over annotation.services (default queue)."""

from celery import shared_task

from annotation.services.verify_queue import verify_queue_fill, verify_queues_sweep


@shared_task(acks_late=True, reject_on_worker_lost=True)  # idempotent: made once per segment
def fill_verify_queue(item_id: int) -> bool:
    return verify_queue_fill(item_id=item_id) is not None


@shared_task
def sweep_verify_queues() -> int:
    return verify_queues_sweep()
