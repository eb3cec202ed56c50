from django.core.management.base import BaseCommand

from media_pipeline.services.job_sweep import requeue_stale_jobs


class Command(BaseCommand):
    help = (
        "Send again the processing jobs that are due and not running: queued jobs whose "
        "send was lost, and running jobs whose worker is gone. Beat does this every 120 s "
        "on a deployment; without a broker (tasks in-process) scripts/start runs it, so a "
        "start stopped mid-transcode leaves no video processing for ever."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--overdue-s",
            type=int,
            default=0,
            help="send queued jobs only once this many seconds past due (default 0)",
        )

    def handle(self, *args, overdue_s: int, **options):
        sent = requeue_stale_jobs(older_than_s=overdue_s)
        self.stdout.write(f"sent {len(sent)} job(s) again")
