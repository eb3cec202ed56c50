"""`manage.py build_sessions SLUG`: split a study's stimuli that are in no session yet into
new sessions (after `import_study --no-sessions`, or after uploads), and give sessions no
rater has started the golden items they lack."""

from django.core.management.base import BaseCommand, CommandError

from annotation.errors import ApplicationError
from annotation.management.study_argument import study_named
from annotation.services.studies import study_split


class Command(BaseCommand):
    help = "Split the study's stimuli that are in no session yet into new sessions."

    def add_arguments(self, parser):
        parser.add_argument("study", help="slug of the study")

    def handle(self, *args, study: str, **options):
        found = study_named(study)
        try:
            split = study_split(study=found)
        except ApplicationError as refused:
            raise CommandError(f"{found.slug}: {refused.message}") from None
        self.stdout.write(f"{found.slug}: {split.said()}")
