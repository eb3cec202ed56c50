"""Celery tasks of the quality app: thin shells over quality.services."""

from celery import shared_task

from quality import services


@shared_task(
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=services.ANALYSIS_TIME_LIMIT_S - 60,
    time_limit=services.ANALYSIS_TIME_LIMIT_S,
)
def run_analysis(run_id: int) -> None:
    services.analysis_run_execute(run_id=run_id)


@shared_task
def analyse_running_studies() -> list[int]:
    return services.analyse_running_studies()


@shared_task(
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=services.EXPORT_TIME_LIMIT_S - 60,
    time_limit=services.EXPORT_TIME_LIMIT_S,
)
def build_export(job_id: int) -> None:
    services.export_job_execute(job_id=job_id)


@shared_task
def sweep_stale_requests() -> dict[str, list[int]]:
    return services.sweep_stale_requests()
