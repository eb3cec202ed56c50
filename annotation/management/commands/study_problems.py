"""`manage.py study_problems SLUG`: what a study still lacks before raters arrive
(annotation.readiness), as the Studies page says it, for a newcomer after
`import_study` and for scripts: exit status 1 when something blocks raters."""

from django.core.management.base import BaseCommand, CommandError

from annotation.management.study_argument import study_named
from annotation.readiness import study_problems


class Command(BaseCommand):
    help = "Say what the study still lacks before raters arrive (status 1 if raters are blocked)."

    def add_arguments(self, parser):
        parser.add_argument("study", help="slug of the study")

    def handle(self, *args, study: str, **options):
        found = study_named(study)
        problems = study_problems(study=found)
        if not problems:
            self.stdout.write(f"{found.slug}: ready")
            return
        for problem in problems:
            mark = "blocks" if problem.blocks else "weaker"
            self.stdout.write(f"{found.slug}: [{mark}] {problem.text}")
        blocking = sum(p.blocks for p in problems)
        if blocking:
            raise CommandError(f"{found.slug}: {blocking} problem(s) block raters")
