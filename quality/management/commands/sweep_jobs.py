from django.core.management.base import BaseCommand

from media_pipeline.services.job_sweep import requeue_stale_jobs
from quality.services import sweep_stale_requests


class Command(BaseCommand):
    help = (
        "Send again the processing jobs, analysis runs and export jobs that are due and "
        "not running: queued ones whose send was lost, and running ones whose worker is "
        "gone; fail runs and exports past their time limit. Beat does this every 120 s on "
        "a deployment; without a broker (tasks in-process) scripts/start runs it, so a "
        "start stopped mid-transcode or mid-analysis leaves nothing waiting for ever."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--overdue-s",
            type=int,
            default=0,
            help="send queued rows only once this many seconds past due (default 0)",
        )

    def handle(self, *args, overdue_s: int, **options):
        sent = requeue_stale_jobs(older_than_s=overdue_s)
        self.stdout.write(f"sent {len(sent)} job(s) again")
        swept = sweep_stale_requests(older_than_s=overdue_s)
        for name in ("analysis_runs", "export_jobs"):
            self.stdout.write(
                f"{name.replace('_', ' ')}: {len(swept[f'{name}_sent'])} sent again, "
                f"{len(swept[f'{name}_failed'])} failed"
            )
