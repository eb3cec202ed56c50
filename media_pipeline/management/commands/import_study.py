"""`manage.py import_study MANIFEST.csv --study SLUG`: see annotation/services/study_import.py."""

from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.core.validators import validate_slug
from django.db import transaction

from annotation.designs import DESIGNS
from annotation.errors import ApplicationError, ImportFailed
from annotation.models import Study
from annotation.services.question_sets import (
    QuestionSetError,
    question_set_apply,
    read_question_set,
)
from annotation.services.question_sets import template_path as question_set_path
from annotation.services.studies import study_create, study_split
from annotation.services.study_import import study_import_manifest
from annotation.services.vocabularies import VocabularyError, read_vocabulary, vocabulary_apply
from annotation.services.vocabularies import template_path as vocabulary_path
from media_pipeline.services.transcode_jobs import stimuli_enqueue_processing


def _messages(exc: ValidationError) -> str:
    return "; ".join(exc.messages)


def _give_questions(study: Study, questions: str | None, vocabulary: str | None) -> None:
    """The question set or vocabulary the manifest's expert answers are checked against
    (refused for another design, or once the study has answers: Conflict)."""
    if questions:
        chosen = read_question_set(question_set_path(questions))
        question_set_apply(study=study, question_set=chosen)
    if vocabulary:
        vocabulary_apply(study=study, vocabulary=read_vocabulary(vocabulary_path(vocabulary)))


def _check_existing(study: Study, create: str | None, design: str | None) -> None:
    """--create and --design name a study to make: for one that exists, a slug reused by
    mistake (a pilot's) would put the videos into the wrong study."""
    if create:
        raise CommandError(
            f"a study '{study.slug}' exists already ({study.name!r}, {study.design}): leave "
            "out --create to import into it, or choose another --study slug"
        )
    if design and design != study.design:
        raise CommandError(
            f"study '{study.slug}' is a {study.design} study, not {design}: nothing imported"
        )


class Command(BaseCommand):
    help = "Import videos, expert scores and tutorial pairs into a study from a CSV manifest."

    def add_arguments(self, parser):
        parser.add_argument("manifest", type=Path)
        parser.add_argument("--study", required=True, help="slug of the study")
        parser.add_argument("--create", metavar="NAME", help="create the study with this name")
        parser.add_argument(
            "--design",
            choices=sorted(DESIGNS),
            help="the design of a study --create makes (default: slider); for a study that "
            "exists, it must be the study's",
        )
        parser.add_argument(
            "--questions",
            metavar="FILE_OR_TEMPLATE",
            help="a questionnaire study's question set, given to it before the import (a "
            ".yaml/.json file or a shipped template: vga-bench); as import_questions",
        )
        parser.add_argument(
            "--vocabulary",
            metavar="FILE_OR_NAME",
            help="a propose-then-verify study's action vocabulary, given to it before the "
            "import (a .yaml/.json file or a shipped one: ava); as import_vocabulary",
        )
        parser.add_argument(
            "--no-sessions", action="store_true", help="do not split new stimuli into sessions"
        )

    def handle(self, *args, manifest: Path, study: str, create: str | None, **options):
        if create is not None and not create.strip():
            raise CommandError("--create needs the new study's name (--create 'GAIA pilot')")
        if not manifest.is_file():
            raise CommandError(f"manifest not found: {manifest}")
        try:
            validate_slug(study)
        except ValidationError as exc:
            raise CommandError(f"--study {study!r}: {_messages(exc)}") from None
        # A study created here exists only if its import succeeds: one transaction for both.
        try:
            with transaction.atomic():
                found = Study.objects.filter(slug=study).first()
                if found is None:
                    if not create:
                        raise CommandError(f"no study '{study}' (use --create NAME to create it)")
                    design = options["design"] or "slider"
                    found = study_create(name=create, slug=study, design=design)
                else:
                    _check_existing(found, create, options["design"])
                _give_questions(found, options["questions"], options["vocabulary"])
                report = study_import_manifest(
                    study=found, manifest=manifest, on_commit=stimuli_enqueue_processing
                )
        except ValidationError as exc:
            raise CommandError(f"cannot create the study: {_messages(exc)}") from None
        except (QuestionSetError, VocabularyError) as exc:
            raise CommandError(str(exc)) from None
        except ApplicationError as exc:  # ImportFailed among them
            prefix = "" if isinstance(exc, ImportFailed) else "cannot create the study: "
            raise CommandError(prefix + exc.message) from None
        for line, reason in report.skipped:
            self.stdout.write(f"line {line}: skipped, {reason}")
        try:
            sessions, golden_added = [], 0
            if not options["no_sessions"]:
                split = study_split(study=found)
                sessions, golden_added = split.sessions, split.golden_added
        except ApplicationError as refused:
            raise CommandError(
                f"imported {len(report.created)} stimuli, but no session was built: "
                f"{refused.message} (manage.py build_sessions {found.slug})"
            ) from None
        pairs = f"{report.tutorial_pairs} tutorial pairs, " if report.tutorial_pairs else ""
        golden = (
            f"; golden items added to {golden_added} session(s) no rater had started"
            if golden_added
            else ""
        )
        self.stdout.write(
            self.style.SUCCESS(
                f"imported {len(report.created)} stimuli, {pairs}skipped "
                f"{len(report.skipped)}; {len(sessions)} new session(s){golden}"
            )
        )
