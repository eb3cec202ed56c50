"""A propose-then-verify study's stages, settings and vocabulary: what the design's
items, answers and manifest rows all read (annotation/designs/propose.py,
propose_manifest.py), and the analysis (quality/designs/propose_verify.py)."""

from __future__ import annotations

from dataclasses import dataclass

from annotation.models import Action, ActionGroup, ProposeVerifySettings
from annotation.study_cache import StudyCache

PROPOSE, VERIFY = "propose", "verify"
STAGES: tuple[tuple[str, str, str, bool], ...] = (
    (
        PROPOSE,
        "Propose actions",
        "Which actions does the person in the box perform? Give one pose and any "
        "interactions with objects and with other people.",
        False,
    ),
    (
        VERIFY,
        "Verify actions",
        "Does the person in the box perform each of these actions?",
        False,
    ),
)


def settings_of(study) -> ProposeVerifySettings:
    found, _ = ProposeVerifySettings.objects.get_or_create(study_id=study.pk)
    return found


@dataclass(frozen=True)
class Vocabulary:
    groups: list[ActionGroup]
    actions: dict[int, Action]  # by action_id
    group_of: dict[int, str]  # action_id -> group key


def _load_vocabulary(study_id: int) -> Vocabulary:
    groups = list(ActionGroup.objects.filter(study_id=study_id).prefetch_related("actions"))
    actions = {a.action_id: a for g in groups for a in g.actions.all()}
    group_of = {a.action_id: g.key for g in groups for a in g.actions.all()}
    return Vocabulary(groups, actions, group_of)


_CACHE = StudyCache(_load_vocabulary)


def vocabulary_of(study_id: int) -> Vocabulary:
    """The study's vocabulary (cached in-process for a few seconds: it cannot change
    once the study has answers, annotation.services.vocabularies)."""
    return _CACHE.get(study_id)


def vocabulary_forget(study_id: int) -> None:
    _CACHE.forget(study_id)
