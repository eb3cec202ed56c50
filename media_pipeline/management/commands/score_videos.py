from django.core.management.base import BaseCommand, CommandError

from annotation.models import Stimulus, Study
from media_pipeline.services.score_jobs import stimuli_enqueue_scoring


class Command(BaseCommand):
    help = (
        "Queue metric scoring for the study's processed videos (all studies without --study). "
        "Each job computes only the (metric, version) pairs not stored yet: run this after "
        "installing weights or after a metric's version changed."
    )

    def add_arguments(self, parser):
        parser.add_argument("--study", help="the study's slug")

    def handle(self, *args, study: str | None, **options):
        stimuli = Stimulus.objects.filter(status=Stimulus.Status.READY)
        if study is not None:
            if not Study.objects.filter(slug=study).exists():
                raise CommandError(f"no study with the slug {study!r}")
            stimuli = stimuli.filter(study__slug=study)
        ids = list(stimuli.order_by("pk").values_list("pk", flat=True))
        queued = stimuli_enqueue_scoring(ids)
        self.stdout.write(
            self.style.SUCCESS(
                f"queued {len(queued)} of {len(ids)} processed videos for scoring "
                f"({len(ids) - len(queued)} already queued or running)"
            )
        )
