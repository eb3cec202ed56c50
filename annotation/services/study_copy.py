"""A study's protocol copied into a new draft study: a pilot's settings for the main
study, or a second round with new models, without typing them in again.

Copied: the study's settings (every field but its name, slug, state, entry token and
creation time), its design's settings (preference, ranking, questionnaire,
propose-then-verify) and its adaptive collection's, its dimensions with their
questions, and its action vocabulary. Not copied: videos and what is made of them
(items, sessions, tutorial pairs, exemplars and the experts' answers: import the videos
with the manifest), raters, answers, audits, analysis runs and exports. The copy is a
draft with a new entry token, so no link of the original leads into it.
"""

from __future__ import annotations

import logging

from django.db import IntegrityError, models, transaction

from annotation.errors import ValidationFailed
from annotation.models import Study
from annotation.models.study import new_entry_token

logger = logging.getLogger(__name__)

# The study's one-to-one settings (related names), copied when the study has them.
SETTINGS = ("preference", "ranking", "questionnaire", "propose_verify", "adaptive")


def _field_values(instance: models.Model) -> dict:
    """The values of the fields a person sets: not the key, nor what the database or the
    platform fills in (creation times, review marks)."""
    return {
        field.attname: getattr(instance, field.attname)
        for field in instance._meta.concrete_fields
        if field.editable
        and not field.primary_key
        and not getattr(field, "auto_now", False)
        and not getattr(field, "auto_now_add", False)
    }


def _copy(instance: models.Model, **changes) -> models.Model:
    return type(instance).objects.create(**{**_field_values(instance), **changes})


def _study_copy(study: Study) -> Study:
    """The study row copied under the first free slug of ``<slug>-copy``,
    ``<slug>-copy-2``, ...: one taken meanwhile by another copy (two admins at once) is
    passed over."""
    for n in range(1, 1000):
        suffix = "-copy" if n == 1 else f"-copy-{n}"
        slug = study.slug[: 80 - len(suffix)] + suffix
        if Study.objects.filter(slug=slug).exists():
            continue
        try:
            with transaction.atomic():
                return _copy(
                    study,
                    name=f"{study.name} (copy)"[:200],
                    slug=slug,
                    state=Study.State.DRAFT,
                    entry_token=new_entry_token(),
                )
        except IntegrityError:
            continue
    raise ValidationFailed(f"no free slug is left for a copy of '{study.slug}'")


@transaction.atomic
def study_duplicate(*, study: Study, by) -> Study:
    """A new draft study with ``study``'s protocol (see the module docstring)."""
    copy = _study_copy(study)
    for name in SETTINGS:
        settings = getattr(study, name, None)  # a missing one-to-one raises: getattr's default
        if settings is not None:
            _copy(settings, study_id=copy.pk)
    for dimension in study.dimensions.order_by("order"):
        copied = _copy(dimension, study_id=copy.pk)
        question = getattr(dimension, "question", None)
        if question is not None:
            _copy(question, dimension_id=copied.pk)
    for group in study.action_groups.order_by("order"):
        copied = _copy(group, study_id=copy.pk)
        for action in group.actions.all():
            _copy(action, group_id=copied.pk)
    logger.info("user %s copied study %s into %s", by.pk, study.slug, copy.slug)
    return copy
