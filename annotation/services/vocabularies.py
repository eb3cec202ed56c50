"""Action vocabularies of propose-then-verify studies as data: read from a YAML or JSON
file, checked whole, given to a study whole (docs/admins.md, "Propose, then verify").

A file holds ``name``, ``source``, ``licence``, ``groups`` (each ``{key, label, limit,
required}``: how many of the group's labels a proposer may give a segment, and whether
one is needed) and ``actions`` (each ``{id, group, name}``; ``id`` is the number the
exports write, AVA's action_id). ``ava`` names the AVA v2.2 vocabulary MOSaic ships
(annotation/data/vocabularies/ava.yaml).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import yaml
from django.db import transaction

from annotation.designs.propose_study import vocabulary_forget
from annotation.errors import Conflict
from annotation.models import (
    Action,
    ActionGroup,
    Answer,
    Candidate,
    ExpertLabel,
    ProposeVerifySettings,
    Study,
)
from annotation.services.file_values import (
    file_text,
    is_json,
    parse_file,
    read_file_text,
    shipped_or_path,
)

logger = logging.getLogger(__name__)

TEMPLATES = Path(__file__).resolve().parent.parent / "data" / "vocabularies"
KEY = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")  # fullmatch: "pose\n" is not a key
# The largest numbers the database holds (ActionGroup.limit, Action.action_id).
LIMIT_MOST = 32767
ACTION_ID_MOST = 2147483647


class VocabularyError(ValueError):
    """A vocabulary that cannot be used; the message says where and why."""


_text = partial(file_text, error=VocabularyError)


@dataclass(frozen=True)
class Group:
    key: str
    label: str
    limit: int
    required: bool


@dataclass(frozen=True)
class Vocabulary:
    name: str
    source: str
    groups: list[Group]
    actions: list[tuple[int, str, str]]  # (id, group key, name)


def _whole(value: object, most: int) -> bool:
    return not isinstance(value, bool) and isinstance(value, int) and 1 <= value <= most


def template_path(name: str) -> Path:
    """A shipped template by name, or the path as given (file_values.shipped_or_path)."""
    return shipped_or_path(name, folder=TEMPLATES, error=VocabularyError)


def vocabulary_from(data: object, *, default_name: str = "vocabulary") -> Vocabulary:
    """A vocabulary from its data (a file's content, parsed), checked whole."""
    if not isinstance(data, dict):
        raise VocabularyError("needs 'groups' and 'actions'")
    groups_raw, actions_raw = data.get("groups"), data.get("actions")
    if not isinstance(groups_raw, list) or not groups_raw:
        raise VocabularyError("needs a 'groups' list")
    if not isinstance(actions_raw, list) or not actions_raw:
        raise VocabularyError("needs an 'actions' list")
    groups = []
    for index, raw in enumerate(groups_raw, start=1):
        if not isinstance(raw, dict):
            raise VocabularyError(f"group {index}: needs a key (a slug)")
        key = _text(raw.get("key"), where=f"group {index}", name="its key")
        if not KEY.fullmatch(key):
            raise VocabularyError(f"group {index}: needs a key (a slug)")
        where = f"group {key!r}"
        limit = raw.get("limit", 3)
        if not _whole(limit, LIMIT_MOST):
            raise VocabularyError(
                f"{where}: limit must be a whole number >= 1, at most {LIMIT_MOST}"
            )
        required = raw.get("required", False)
        if not isinstance(required, bool):
            raise VocabularyError(f"{where}: 'required' must be true or false")
        label = _text(raw.get("label"), where=where, name="its label") or key
        if len(label) > 80:  # before: cut to 80 without a word
            raise VocabularyError(f"{where}: its label is longer than 80 characters")
        groups.append(Group(key, label, limit, required))
    keys = [group.key for group in groups]
    if len(set(keys)) != len(keys):
        raise VocabularyError("two groups share a key")
    actions, seen = [], set()
    for index, raw in enumerate(actions_raw, start=1):
        if not isinstance(raw, dict):
            raise VocabularyError(f"action {index}: not a mapping")
        action_id, group = raw.get("id"), raw.get("group")
        if not _whole(action_id, ACTION_ID_MOST):
            raise VocabularyError(
                f"action {index}: id must be a whole number >= 1, at most {ACTION_ID_MOST}"
            )
        name = _text(raw.get("name"), where=f"action {action_id}", name="its name")
        if action_id in seen:
            raise VocabularyError(f"action id {action_id} is given twice")
        if not isinstance(group, str | int | float | None):  # a list or a mapping
            kind = "a list" if isinstance(group, list) else "a mapping"
            raise VocabularyError(f"action {action_id}: 'group' must name a group, not {kind}")
        if not isinstance(group, str) or group not in keys:
            raise VocabularyError(f"action {action_id}: group {group!r} is not a group")
        if not name:
            raise VocabularyError(f"action {action_id}: needs a name")
        if len(name) > 120:  # before: cut to 120 without a word
            raise VocabularyError(f"action {action_id}: its name is longer than 120 characters")
        if any(g == group and n.casefold() == name.casefold() for _, g, n in actions):
            raise VocabularyError(f"action {action_id}: {name!r} is in group {group!r} twice")
        seen.add(action_id)
        actions.append((action_id, group, name))
    empty = [g.key for g in groups if g.required and not any(a[1] == g.key for a in actions)]
    if empty:  # every proposal would be refused for want of one of its actions
        raise VocabularyError(f"group {empty[0]!r} is required but has no actions")
    source = _text(data.get("source"), where="", name="its source")
    if len(source) > 300:
        raise VocabularyError("its source is longer than 300 characters")
    return Vocabulary(
        name=_text(data.get("name"), where="", name="its name") or default_name,
        source=source,
        groups=groups,
        actions=actions,
    )


def read_vocabulary(path: Path | str) -> Vocabulary:
    path = Path(path)
    text = read_file_text(path, error=VocabularyError)
    try:
        data = parse_file(text, is_json=is_json(path))
    except (ValueError, yaml.YAMLError) as exc:
        raise VocabularyError(f"cannot read {path.name}: {exc}") from None
    except RecursionError:  # lists in lists ... (the parsers recurse)
        raise VocabularyError(f"{path.name}: nested too deeply") from None
    try:
        return vocabulary_from(data, default_name=path.stem)
    except VocabularyError as exc:
        raise VocabularyError(f"{path.name}: {exc}") from None


def vocabulary_apply(*, study: Study, vocabulary: Vocabulary) -> int:
    """Make the vocabulary the study's (replacing the one it has), before anyone
    answered. Returns the number of actions."""
    if study.design != "propose_verify":
        raise Conflict(f"only propose-then-verify studies take a vocabulary ({study.slug})")
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=study.pk).first()
        if Answer.objects.filter(item__study=study).exists():
            raise Conflict("this study has answers: its vocabulary can no longer change")
        if Candidate.objects.filter(item__study=study).exists():
            raise Conflict(
                "this study's golden segments were prepared with its vocabulary (its "
                "sessions are built): import the vocabulary before building sessions"
            )
        given = {action_id for action_id, _, _ in vocabulary.actions}
        for label in ExpertLabel.objects.filter(stimulus__study=study).select_related("stimulus"):
            missing = sorted(set(label.value) - given)
            if missing:
                raise Conflict(
                    f"the experts' labels of {label.stimulus.original_name} name action "
                    f"{missing[0]}, which the new vocabulary lacks"
                )
        ActionGroup.objects.filter(study=study).delete()
        made = {
            group.key: ActionGroup.objects.create(
                study=study,
                key=group.key,
                label=group.label,
                limit=group.limit,
                required=group.required,
                order=order,
            )  # fmt: skip
            for order, group in enumerate(vocabulary.groups)
        }
        Action.objects.bulk_create(
            Action(group=made[group], action_id=action_id, name=name)
            for action_id, group, name in vocabulary.actions
        )
        chosen, _ = ProposeVerifySettings.objects.get_or_create(study=study)
        chosen.vocabulary_source = vocabulary.source
        chosen.save(update_fields=["vocabulary_source"])
    vocabulary_forget(study.pk)
    logger.info(
        "study %s: vocabulary %s, %d actions", study.slug, vocabulary.name, len(vocabulary.actions)
    )
    return len(vocabulary.actions)
