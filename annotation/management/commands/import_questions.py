"""`manage.py import_questions STUDY_SLUG FILE_OR_TEMPLATE`: make a question set (a YAML or
JSON file, or a shipped template such as ``vga-bench``) a questionnaire study's questions;
see annotation/services/question_sets.py and docs/admins.md, "Questionnaire labelling"."""

from django.core.management.base import BaseCommand, CommandError

from annotation.errors import ApplicationError
from annotation.management.study_argument import study_named
from annotation.services.question_sets import (
    QuestionSetError,
    question_set_apply,
    read_question_set,
    template_path,
)


class Command(BaseCommand):
    help = (
        "Make a question set (a .yaml/.yml/.json file, or a shipped template: vga-bench) a "
        "questionnaire study's questions, replacing those it has (refused once it has answers)."
    )

    def add_arguments(self, parser):
        parser.add_argument("study", help="slug of the questionnaire study")
        parser.add_argument("question_set", help="a YAML or JSON file, or a template name")

    def handle(self, *args, study: str, question_set: str, **options):
        found = study_named(
            study, design="questionnaire", serves="question sets are for questionnaire studies"
        )
        try:
            chosen = read_question_set(template_path(question_set))
            applied = question_set_apply(study=found, question_set=chosen)
        except QuestionSetError as exc:
            raise CommandError(str(exc)) from None
        except ApplicationError as exc:  # the study has answers
            raise CommandError(f"study '{study}': {exc.message}") from None
        style = self.style.WARNING if applied.expert_dropped else self.style.SUCCESS
        self.stdout.write(style(f"{found.slug}: {applied.said(chosen.name)}"))
