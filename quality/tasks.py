"""Celery tasks of the quality app: thin shells over quality.services."""

from celery import shared_task

from quality import services


@shared_task(acks_late=True, reject_on_worker_lost=True, soft_time_limit=600, time_limit=660)
def run_analysis(run_id: int) -> None:
    services.analysis_run_execute(run_id=run_id)


@shared_task
def analyse_running_studies() -> list[int]:
    return services.analyse_running_studies()


@shared_task(acks_late=True, reject_on_worker_lost=True, soft_time_limit=1800, time_limit=1860)
def build_export(job_id: int) -> None:
    services.export_job_execute(job_id=job_id)
