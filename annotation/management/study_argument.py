"""The study a management command names by its slug, refused clearly when there is none
or when it is of another design than the command serves."""

from django.core.management.base import CommandError

from annotation.models import Study


def study_named(slug: str, *, design: str | None = None, serves: str = "") -> Study:
    """The study with this slug; CommandError when none, or when ``design`` is given and
    the study is of another (``serves``: what the command is for, e.g. "question sets
    are for questionnaire studies")."""
    found = Study.objects.filter(slug=slug).first()
    if found is None:
        raise CommandError(f"no study '{slug}'")
    if design is not None and found.design != design:
        raise CommandError(f"study '{slug}' is a {found.design} study: {serves}")
    return found
