"""`manage.py import_vocabulary STUDY_SLUG FILE_OR_TEMPLATE`: make an action vocabulary (a
YAML or JSON file, or the shipped ``ava``) a propose-then-verify study's; see
annotation/services/vocabularies.py and docs/admins.md, "Propose, then verify"."""

from django.core.management.base import BaseCommand, CommandError

from annotation.errors import ApplicationError
from annotation.management.study_argument import study_named
from annotation.services.vocabularies import (
    VocabularyError,
    read_vocabulary,
    template_path,
    vocabulary_apply,
)


class Command(BaseCommand):
    help = (
        "Make an action vocabulary (a .yaml/.json file, or a shipped one: ava) a "
        "propose-then-verify study's, replacing the one it has (refused once it has answers)."
    )

    def add_arguments(self, parser):
        parser.add_argument("study", help="slug of the propose-then-verify study")
        parser.add_argument("vocabulary", help="a YAML or JSON file, or a shipped name")

    def handle(self, *args, study: str, vocabulary: str, **options):
        found = study_named(
            study,
            design="propose_verify",
            serves="vocabularies are for propose-then-verify studies",
        )
        try:
            chosen = read_vocabulary(template_path(vocabulary))
            count = vocabulary_apply(study=found, vocabulary=chosen)
        except VocabularyError as exc:
            raise CommandError(str(exc)) from None
        except ApplicationError as exc:
            raise CommandError(f"study '{study}': {exc.message}") from None
        self.stdout.write(self.style.SUCCESS(f"{found.slug}: {count} actions from {chosen.name}"))
