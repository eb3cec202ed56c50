"""Propose, then verify (AVA, PROTOCOL.md 3.4): an item is one person in one segment of a
video (the looping segment around a keyframe, the keyframe with the person's box drawn on
it), asked in one of two stages, each a question (Dimension) of the study:

- **propose**: up to ``max_labels`` labels of the study's vocabulary, within each group's
  limit (AVA: 1 pose, required; up to 3 person-object and 3 person-person
  interactions), an "other action" text when nothing fits, and flags for inappropriate
  content and for a box that is not one person. Values: ``labels`` (action ids),
  ``other_action``, ``flags`` ({"inappropriate": bool, "bad_box": bool}).
- **verify**: once ``proposers_per_item`` proposals of a segment are in, its verify item
  is made (annotation.services.verify_queue) with the union of the proposed labels as
  candidates, shuffled, saying nothing of who or how many proposed each. Values:
  ``verdicts``, action id -> true or false, every candidate once. A label is kept when
  at least ``keep_at_least`` verifiers say yes (quality.stats.verify).

A session holds one stage's items (and golden items of that stage). A rater may do both
stages but never verifies a segment they proposed labels for. Golden segments carry the
experts' complete labels: a proposer's golden figure is their recall of them, a
verifier's the share of verdicts that agree with them (golden verify items show the
experts' labels and distractors).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from django.db import transaction

from annotation.designs.base import Design, plain_int, refuse_nul
from annotation.designs.propose_gates import gate_rule, golden_gate, qualification_score
from annotation.designs.propose_manifest import (
    MANIFEST_COLUMNS,
    check_manifest_extra,
    store_manifest_extra,
)
from annotation.designs.propose_sessions import barred_sessions, raters_per_session
from annotation.designs.propose_study import (
    PROPOSE,
    STAGES,
    VERIFY,
    Vocabulary,
    settings_of,
    vocabulary_of,
)
from annotation.designs.propose_tutorial import tutorial_payload
from annotation.designs.tutorial_examples import examples_lacking
from annotation.errors import ValidationFailed
from annotation.media_urls import media_entry
from annotation.models import (
    Candidate,
    Dimension,
    ExpertLabel,
    Item,
    ItemMember,
    Proposal,
    ProposalFlags,
    StageLink,
    Stimulus,
    Verdict,
)

ANSWERED_ROLES = (Stimulus.Role.STIMULUS, Stimulus.Role.GOLDEN, Stimulus.Role.QUALIFICATION)
FLAGS = ("inappropriate", "bad_box")
OTHER_LIMIT = 200
DISTRACTORS = 3  # wrong labels among a golden verify item's candidates


def stage_of(item: Item) -> str:
    return item.dimension.key


def _stage(study, key: str) -> Dimension:
    return Dimension.objects.get(study=study, key=key)


def expert_actions(stimulus: Stimulus) -> list[int]:
    """The experts' complete labels of a golden or qualification segment."""
    found = ExpertLabel.objects.filter(stimulus=stimulus, dimension__key=PROPOSE).first()
    return sorted(found.value) if found else []


# --- items ------------------------------------------------------------------------------


def verify_item_make(
    *, propose_item: Item, action_ids: list[int], flags: dict, proposals: list[int] = ()
) -> StageLink:
    """The segment's verify item with `action_ids` as its candidates in a shuffled order
    (seeded by the item), linked to its propose item; inside the caller's transaction,
    which holds the propose item's lock."""
    study = propose_item.study
    verify = Item.objects.create(
        study=study, role=propose_item.role, dimension=_stage(study, VERIFY)
    )
    video = propose_item.members.get().stimulus
    ItemMember.objects.create(item=verify, stimulus=video, slot=0)
    actions = vocabulary_of(study.pk).actions
    order = sorted(action_ids)
    random.Random(f"candidates:{propose_item.public_id}").shuffle(order)
    Candidate.objects.bulk_create(
        Candidate(item=verify, action=actions[action_id], order=slot)
        for slot, action_id in enumerate(order)
    )
    return StageLink.objects.create(
        propose_item=propose_item, verify_item=verify, flags=flags, proposals=list(proposals)
    )


def _distractors(video: Stimulus, expert: list[int], vocabulary: Vocabulary) -> list[int]:
    others = sorted(set(vocabulary.actions) - set(expert))
    return random.Random(f"distractors:{video.public_id}").sample(
        others, k=min(DISTRACTORS, len(others))
    )


def build_items(*, study) -> int:
    """A propose item per answered segment; golden and qualification segments also get
    their verify item at once (the experts' labels and a few distractors as candidates).
    Regular verify items come later, from the proposals (verify_queue)."""
    propose = _stage(study, PROPOSE)
    have = ItemMember.objects.filter(item__study=study, item__dimension=propose)
    videos = (
        Stimulus.objects.filter(study=study, role__in=ANSWERED_ROLES)
        .exclude(pk__in=have.values("stimulus_id"))
        .order_by("pk")
    )
    vocabulary = vocabulary_of(study.pk)
    made = 0
    for video in videos:
        item = Item.objects.create(study=study, role=video.role, dimension=propose)
        ItemMember.objects.create(item=item, stimulus=video, slot=0)
        made += 1
        if video.role != Stimulus.Role.STIMULUS and (expert := expert_actions(video)):
            candidates = expert + _distractors(video, expert, vocabulary)
            verify_item_make(propose_item=item, action_ids=candidates, flags={})
            made += 1
    return made


def session_chunks(*, study, items: list[Item], seed: str) -> list[list[int]]:
    """Each stage's new items shuffled (seeded) and cut into sessions of session_size:
    a session is one stage's."""
    chunks = []
    for stage in (PROPOSE, VERIFY):
        dimension_id = _stage(study, stage).pk
        ids = sorted(item.pk for item in items if item.dimension_id == dimension_id)
        random.Random(f"{seed}:{stage}").shuffle(ids)
        size = study.session_size
        chunks += [ids[start : start + size] for start in range(0, len(ids), size)]
    return chunks


def layout(*, item: Item, seed: object) -> list[Stimulus]:
    return [member.stimulus for member in item.members.all()]


def item_payload(*, item: Item, layout: list[Stimulus]) -> dict:
    """The segment (looping video, its keyframe as the poster), the person's box, and
    for a verify item its candidates; never who proposed them or what the experts said."""
    video = layout[0]
    media = media_entry(video)
    segment = video.segment or {}
    payload = {
        **media,
        "stage": stage_of(item),
        "media": [media],
        "box": segment.get("box") or [0.0, 0.0, 1.0, 1.0],
        "question": item.dimension.help_text,
    }
    if payload["stage"] == VERIFY:
        vocabulary = vocabulary_of(item.study_id)
        payload["candidates"] = [
            {
                "id": candidate.action.action_id,
                "name": candidate.action.name,
                "group": vocabulary.group_of[candidate.action.action_id],
            }
            for candidate in Candidate.objects.filter(item=item).select_related("action")
        ]
    return payload


# --- values -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Proposed:
    labels: tuple[int, ...]
    other_action: str
    flags: tuple[tuple[str, bool], ...]

    def canonical(self) -> dict:
        return {
            "labels": list(self.labels),
            "other_action": self.other_action,
            "flags": dict(self.flags),
        }


@dataclass(frozen=True)
class Verified:
    verdicts: tuple[tuple[int, bool], ...]

    def canonical(self) -> dict:
        return {"verdicts": {str(action): verdict for action, verdict in self.verdicts}}


def _check_proposal(data: dict, study) -> Proposed:
    labels = data.get("labels", [])
    if not isinstance(labels, list) or not all(
        isinstance(label, int) and not isinstance(label, bool) for label in labels
    ):
        raise ValidationFailed("'labels' must list action ids (whole numbers)")
    if len(set(labels)) != len(labels):
        raise ValidationFailed("'labels' names an action twice")
    vocabulary = vocabulary_of(study.pk)
    unknown = [label for label in labels if label not in vocabulary.actions]
    if unknown:
        raise ValidationFailed(f"action {unknown[0]} is not in this study's vocabulary")
    chosen = settings_of(study)
    if len(labels) > chosen.max_labels:
        raise ValidationFailed(f"at most {chosen.max_labels} labels per segment")
    other = data.get("other_action", "")
    if not isinstance(other, str) or len(other) > OTHER_LIMIT:
        raise ValidationFailed(f"'other_action' is a text of at most {OTHER_LIMIT} characters")
    refuse_nul(other, what="'other_action'")
    raw_flags = data.get("flags", {})
    if not isinstance(raw_flags, dict) or set(raw_flags) - set(FLAGS):
        raise ValidationFailed(f"'flags' may hold {', '.join(FLAGS)} (true or false)")
    if not all(isinstance(value, bool) for value in raw_flags.values()):
        raise ValidationFailed("a flag is true or false")
    flags = tuple((flag, bool(raw_flags.get(flag, False))) for flag in FLAGS)
    flagged = any(value for _, value in flags)
    for group in vocabulary.groups:
        given = sum(1 for label in labels if vocabulary.group_of[label] == group.key)
        if given > group.limit:
            raise ValidationFailed(f"at most {group.limit} of '{group.label}'")
        if group.required and not given and not flagged:
            raise ValidationFailed(
                f"choose one of '{group.label}' (or flag the segment when you cannot)"
            )
    return Proposed(tuple(sorted(labels)), other.strip(), flags)


def _candidates(item: Item) -> list[int]:
    return list(
        Candidate.objects.filter(item=item)
        .order_by("order")
        .values_list("action__action_id", flat=True)
    )


def _check_verdicts(data: dict, item: Item | None) -> Verified:
    raw = data.get("verdicts")
    refusal = ValidationFailed("'verdicts' must map each candidate's action id to true or false")
    if not isinstance(raw, dict):
        raise refusal
    verdicts = {}
    for key, value in raw.items():
        action = plain_int(str(key))
        if action is None or not isinstance(value, bool):
            raise refusal
        if action in verdicts:  # "012" and "12"
            raise ValidationFailed(f"'verdicts' names an action twice: {action}")
        verdicts[action] = value
    if item is not None:
        candidates = set(_candidates(item))
        if set(verdicts) - candidates:
            raise ValidationFailed("'verdicts' names an action that is not a candidate here")
        if missing := len(candidates - set(verdicts)):
            raise ValidationFailed(f"{missing} candidate(s) without a verdict: answer every one")
    return Verified(tuple(sorted(verdicts.items())))


def check_values(*, data: dict, item: Item | None, study) -> Proposed | Verified:
    stage = stage_of(item) if item is not None else (VERIFY if "verdicts" in data else PROPOSE)
    if stage == VERIFY:
        return _check_verdicts(data, item)
    return _check_proposal(data, study)


def store_values(*, answer, item: Item, layout: list[Stimulus], values) -> None:
    """Proposals (one row per label) and the flags, or verdicts (one row per candidate).
    A regular proposal asks the verify queue to look at its segment once this commits."""
    actions = vocabulary_of(item.study_id).actions
    if isinstance(values, Verified):
        Verdict.objects.bulk_create(
            Verdict(answer=answer, action=actions[action], verdict=verdict)
            for action, verdict in values.verdicts
        )
        return
    Proposal.objects.bulk_create(
        Proposal(answer=answer, action=actions[label]) for label in values.labels
    )
    flags = dict(values.flags)
    ProposalFlags.objects.create(answer=answer, other_action=values.other_action, **flags)
    if item.role == Item.Role.STIMULUS and answer.assignment_id is not None:
        from annotation.tasks import fill_verify_queue
        from config.task_dispatch import send_now

        item_id = item.pk
        transaction.on_commit(lambda: send_now(fill_verify_queue, item_id))


def readiness(*, study) -> list[tuple]:
    """No vocabulary (raters would have no action to pick: it blocks), no worked
    examples."""
    lacking = []
    if not vocabulary_of(study.pk).actions:
        lacking.append(
            (
                "no_vocabulary",
                "no action vocabulary: proposers would have no action to pick (manage.py "
                "import_vocabulary SLUG ava, or a vocabulary file; it is refused once "
                "sessions are built: delete them in the admin, Sessions, then split again)",
                True,
            )
        )
    return lacking + examples_lacking(
        study=study,
        text="no worked examples: raters see no person labelled by the experts before the "
        "test (manifest rows of role tutorial, with expert_actions and a note)",
    )


def state_payload(*, study) -> dict:
    vocabulary = vocabulary_of(study.pk)
    return {
        "max_labels": settings_of(study).max_labels,
        "groups": [
            {
                "key": group.key,
                "label": group.label,
                "limit": group.limit,
                "required": group.required,
                "actions": [{"id": a.action_id, "name": a.name} for a in group.actions.all()],
            }
            for group in vocabulary.groups
        ],
    }


PROPOSE_VERIFY = Design(
    key="propose_verify",
    label="Propose, then verify action labels of a person (AVA)",
    build_items=build_items,
    layout=layout,
    item_payload=item_payload,
    check_values=check_values,
    store_values=store_values,
    golden_gate=golden_gate,
    qualification_score=qualification_score,
    gate_rule=gate_rule,
    state_payload=state_payload,
    widget="frontend/widgets/propose_verify.js",
    item_noun="segment",
    values_noun="labels",
    golden_label="Golden recall / agreement",
    session_chunks=session_chunks,
    default_dimensions=STAGES,
    raters_per_session=raters_per_session,
    manifest_columns=MANIFEST_COLUMNS,
    tutorial_payload=tutorial_payload,
    readiness=readiness,
    check_manifest_extra=check_manifest_extra,
    store_manifest_extra=store_manifest_extra,
    barred_sessions=barred_sessions,
    golden_by_question=True,
)
