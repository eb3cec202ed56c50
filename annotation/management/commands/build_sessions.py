"""`manage.py build_sessions SLUG`: split a study's stimuli that are in no session yet into
new sessions (after `import_study --no-sessions`, or after uploads)."""

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from annotation.errors import ApplicationError
from annotation.management.study_argument import study_named
from annotation.services.studies import study_build_sessions


class Command(BaseCommand):
    help = "Split the study's stimuli that are in no session yet into new sessions."

    def add_arguments(self, parser):
        parser.add_argument("study", help="slug of the study")

    def handle(self, *args, study: str, **options):
        found = study_named(study)
        try:
            with transaction.atomic():
                sessions = study_build_sessions(study=found)
        except ApplicationError as refused:
            raise CommandError(f"{found.slug}: {refused.message}") from None
        if not sessions:
            self.stdout.write(f"{found.slug}: every stimulus is already in a session")
            return
        indices = ", ".join(str(s.index) for s in sessions)
        self.stdout.write(f"{found.slug}: {len(sessions)} new session(s) ({indices})")
