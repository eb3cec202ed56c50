"""Side-by-side preference (WYD, PROTOCOL.md 3.1): an item shows two videos of two
conditions (the generating models) for one content, with the content's reference video
in the middle when the question asks about it; the answer is left, right or equal.

- Items: for every question, every condition pair (all pairs, or the study's list) and
  every content that both conditions have. Golden and qualification items: the two
  golden (qualification) videos of one content, one expected best, one worst (a clean
  video against a degraded copy of itself).
- Sessions: balanced; each takes `judgments_per_pair` items of every (question, pair).
- Layout: which condition is left is counterbalanced per rater: within a rater's
  session the items of each (question, pair) alternate sides, starting on a side drawn
  from the rater's seed; it is stored with the answer (PreferenceJudgment.left/right).
- Golden gate: the share of the session's golden pairs judged right ("equal" is not
  right) must reach `golden_pass_share` (0.8). Qualification: the share right must reach
  the study's `qualification_pass_share`.
"""

from __future__ import annotations

import functools
import hashlib
import random
from dataclasses import dataclass
from itertools import combinations

from django.db.models import Prefetch

from annotation.designs import compared_tutorial
from annotation.designs.base import (
    Design,
    Gate,
    OnDemand,
    QualificationScore,
    content_errors,
)
from annotation.designs.preference_questions import WYD_QUESTIONS
from annotation.designs.tutorial_examples import examples_lacking
from annotation.dimensions import dimensions_of
from annotation.errors import ValidationFailed
from annotation.media_urls import media_entry
from annotation.models import (
    Dimension,
    Item,
    ItemMember,
    PreferenceJudgment,
    PreferenceSettings,
    SessionItem,
    Stimulus,
)
from annotation.models.preference import parse_condition_pairs, unknown_conditions

CHOICES = tuple(PreferenceJudgment.Choice.values)


def settings_of(study) -> PreferenceSettings:
    """The study's preference settings (WYD's defaults until an admin changes them)."""
    found, _ = PreferenceSettings.objects.get_or_create(study_id=study.pk)
    return found


@dataclass(frozen=True)
class Choice:
    choice: str

    def canonical(self) -> dict:
        return {"choice": self.choice}


def _condition_pairs(study, conditions: set[str]) -> list[tuple[str, str]]:
    """The settings' pairs, or every pair of the videos' conditions. Pairs that are not
    pairs, or that name a condition no video has, are refused with the line to mend:
    building on would make no item for them, and a study of no sessions, silently."""
    text = settings_of(study).condition_pairs
    listed, problems = parse_condition_pairs(text)
    problems = problems or unknown_conditions(text, conditions)
    if problems:
        raise ValidationFailed(
            "the preference settings' condition pairs: "
            + "; ".join(problems)
            + " (mend them in the study's preference settings, then build the sessions)"
        )
    return listed or list(combinations(sorted(conditions), 2))


def _existing_keys(study) -> set[tuple]:
    """(question, content, stimulus ids) of the items already made."""
    keys = set()
    shown = ItemMember.objects.filter(part=ItemMember.Part.SHOWN)
    items = Item.objects.filter(study=study).prefetch_related(Prefetch("members", shown))
    for item in items:
        shown_ids = frozenset(m.stimulus_id for m in item.members.all())
        keys.add((item.dimension_id, item.content, shown_ids))
    return keys


def build_items(*, study) -> int:
    """Items for every question x condition pair x content both conditions have, and the
    golden and qualification pairs; the items made already are left as they are."""
    questions = dimensions_of(study.pk)
    videos = list(Stimulus.objects.filter(study=study).exclude(role=Stimulus.Role.TUTORIAL))
    references = {v.content: v for v in videos if v.role == Stimulus.Role.REFERENCE}
    existing = _existing_keys(study)
    planned: list[tuple[Item, list[ItemMember]]] = []

    def plan(role: str, question: Dimension, content: str, shown: list, expected=None) -> None:
        key = (question.pk, content, frozenset(v.pk for v in shown))
        if key in existing:
            return
        existing.add(key)
        item = Item(study=study, role=role, dimension=question, content=content)
        members = [
            ItemMember(stimulus=v, slot=slot, expected=(expected or {}).get(v.pk, ""))
            for slot, v in enumerate(shown)
        ]
        reference = references.get(content)
        if question.shows_reference and reference is not None:
            members.append(ItemMember(stimulus=reference, slot=2, part=ItemMember.Part.REFERENCE))
        planned.append((item, members))

    by_content: dict[str, dict[str, Stimulus]] = {}
    for video in videos:
        if video.role == Stimulus.Role.STIMULUS and video.condition and video.content:
            by_content.setdefault(video.content, {})[video.condition] = video
    conditions = {c for per in by_content.values() for c in per}
    refused = None
    try:
        pairs = _condition_pairs(study, conditions)
    except ValidationFailed as problem:  # the golden and test pairs are made all the same
        pairs, refused = [], problem
    for question in questions:
        for a, b in pairs:
            for content in sorted(by_content):
                per = by_content[content]
                if a in per and b in per:
                    plan(Item.Role.STIMULUS, question, content, [per[a], per[b]])
    for role in (Stimulus.Role.GOLDEN, Stimulus.Role.QUALIFICATION):
        known: dict[str, dict[str, Stimulus]] = {}
        for video in videos:
            if video.role == role and video.expected:
                known.setdefault(video.content, {})[video.expected] = video
        for content, ends in sorted(known.items()):
            if {"best", "worst"} <= set(ends):
                best, worst = ends["best"], ends["worst"]
                expected = {best.pk: "best", worst.pk: "worst"}
                for question in questions:
                    plan(role, question, content, [best, worst], expected)
    for item, members in planned:
        item.save()
        for member in members:
            member.item = item
        ItemMember.objects.bulk_create(members)
    if refused is not None:
        raise refused
    return len(planned)


def _pair_key(item: Item) -> tuple:
    shown = sorted(
        m.stimulus.condition or str(m.stimulus_id)
        for m in item.members.all()
        if m.part == ItemMember.Part.SHOWN
    )
    return (item.dimension_id, *shown)


def session_chunks(*, study, items: list[Item], seed: object) -> list[list[int]]:
    """Balanced sessions: session k holds the k-th block of `judgments_per_pair` items of
    every (question, condition pair), the items of a pair shuffled first (seeded); a
    session larger than the study's `session_size` is cut in order."""
    per_pair = settings_of(study).judgments_per_pair
    groups: dict[tuple, list[int]] = {}
    for item in sorted(items, key=lambda i: i.pk):
        groups.setdefault(_pair_key(item), []).append(item.pk)
    rng = random.Random(str(seed))
    blocks: list[list[int]] = []
    for key in sorted(groups, key=str):
        pks = groups[key]
        rng.shuffle(pks)
        for k, start in enumerate(range(0, len(pks), per_pair)):
            if len(blocks) <= k:
                blocks.append([])
            blocks[k].extend(pks[start : start + per_pair])
    size = max(1, study.session_size)
    return [block[i : i + size] for block in blocks for i in range(0, len(block), size)]


def _seed_bit(*parts: object) -> int:
    return hashlib.sha256(":".join(map(str, parts)).encode()).digest()[0] & 1


def layout(*, item: Item, seed: object) -> list[Stimulus]:
    """[left, right(, reference)]: see the module docstring. A regular item's side
    alternates over the items of its (question, pair) in its session by item id; a golden
    or qualification item's side is drawn from the rater's seed."""
    members = list(item.members.all())
    shown = [m.stimulus for m in members if m.part == ItemMember.Part.SHOWN]
    reference = [m.stimulus for m in members if m.part == ItemMember.Part.REFERENCE]
    pair = _pair_key(item)
    if item.role == Item.Role.STIMULUS:
        siblings = (
            Item.objects.filter(
                session_items__session__in=SessionItem.objects.filter(item=item).values(
                    "session_id"
                ),
                dimension_id=item.dimension_id,
                role=Item.Role.STIMULUS,
            )
            .prefetch_related("members__stimulus")
            .order_by("pk")
        )
        same = [i.pk for i in siblings if _pair_key(i) == pair] or [item.pk]
        flip = (same.index(item.pk) + _seed_bit(seed, *pair)) % 2
    else:
        flip = _seed_bit(seed, item.pk)
    if flip:
        shown = shown[::-1]
    return [*shown, *reference]


def item_payload(*, item: Item, layout: list[Stimulus]) -> dict:
    """The question, the two videos by side and the reference: never their conditions
    (the comparison is blind) nor what a golden pair expects."""
    left, right, *reference = layout
    question = item.dimension
    media = [media_entry(v) for v in layout]
    return {
        "question": {"key": question.key, "label": question.label, "text": question.help_text},
        "prompt": left.prompt,
        "left": media[0],
        "right": media[1],
        "reference": media[2] if reference else None,
        "media": media,
    }


def check_values(*, data: dict, item: Item | None, study) -> Choice:
    choice = data.get("choice")
    if choice not in CHOICES:
        raise ValidationFailed(f"'choice' must be one of {', '.join(CHOICES)}")
    return Choice(choice)


def store_values(*, answer, item: Item, layout: list[Stimulus], values: Choice) -> None:
    PreferenceJudgment.objects.create(
        answer=answer,
        dimension_id=item.dimension_id,
        left=layout[0],
        right=layout[1],
        choice=values.choice,
    )


def _judged_right(judgments) -> list[dict]:
    """Per golden judgment: the expected best video's side, the choice, and whether the
    rater chose it."""
    rows = []
    for judgment in judgments:
        expected = {
            m.stimulus_id: m.expected for m in judgment.answer.item.members.all() if m.expected
        }
        best = "left" if expected.get(judgment.left_id) == "best" else "right"
        rows.append(
            {
                "item": str(judgment.answer.item.public_id),
                "best_side": best,
                "choice": judgment.choice,
                "right": judgment.choice == best,
            }
        )
    return rows


def _judgments(**filters):
    return (
        PreferenceJudgment.objects.filter(**filters)
        .select_related("answer__item")
        .prefetch_related("answer__item__members")
    )


def golden_gate(*, study, assignment) -> Gate:
    golden = SessionItem.objects.filter(session_id=assignment.session_id, is_golden=True)
    rows = _judged_right(
        _judgments(answer__assignment=assignment, answer__item__in=golden.values("item_id"))
    )
    if not rows:
        return Gate(None, True)
    share = sum(row["right"] for row in rows) / len(rows)
    return Gate(share, share >= settings_of(study).golden_pass_share)


def check_manifest_row(*, role: str, labels: dict, expert: dict, dimension_keys) -> None:
    """A compared video names its condition and content; a golden or qualification video,
    and a worked example's (tutorial), its content and whether it is the pair's best or
    worst; a reference its content."""
    needed = {
        Stimulus.Role.STIMULUS: ("condition", "content"),
        Stimulus.Role.GOLDEN: ("content", "expected"),
        Stimulus.Role.QUALIFICATION: ("content", "expected"),
        Stimulus.Role.REFERENCE: ("content",),
        Stimulus.Role.TUTORIAL: ("content", "expected"),
    }.get(role, ())
    missing = [column for column in needed if not labels.get(column)]
    if missing:
        raise ValueError(f"a {role} row of a preference study needs: {', '.join(missing)}")


def gate_rule(*, study) -> str:
    return f"at least {settings_of(study).golden_pass_share:.0%} of the golden pairs right"


def qualification_score(*, participation, answers) -> QualificationScore:
    rows = _judged_right(_judgments(answer__in=answers).order_by("answer__id"))
    share = sum(row["right"] for row in rows) / len(rows) if rows else 0.0
    passed = share >= participation.study.qualification_pass_share
    return QualificationScore(share, rows, passed)


def _active_session_make(*, participation):
    from annotation.services.active_pairs import active_session_make

    return active_session_make(participation=participation)


def _active_pairs_left(*, participation) -> bool:
    from annotation.services.active_pairs import active_pairs_left

    return active_pairs_left(participation=participation)


ACTIVE_PAIRS = OnDemand(make=_active_session_make, left=_active_pairs_left)


def sessions_on_demand(*, study) -> OnDemand | None:
    """With `active_pairs` on, each rater's session is made from the pairs that teach the
    scale most now (annotation.services.active_pairs); None: balanced sessions."""
    return ACTIVE_PAIRS if settings_of(study).active_pairs else None


def state_payload(*, study) -> dict:
    return {
        "questions": [
            {"key": d.key, "label": d.label, "text": d.help_text} for d in dimensions_of(study.pk)
        ],
        "choices": list(CHOICES),
    }


PREFERENCE = Design(
    key="preference",
    label="Side-by-side preference (WYD)",
    build_items=build_items,
    layout=layout,
    item_payload=item_payload,
    check_values=check_values,
    store_values=store_values,
    golden_gate=golden_gate,
    qualification_score=qualification_score,
    gate_rule=gate_rule,
    state_payload=state_payload,
    widget="frontend/widgets/preference.js",
    item_noun="pair",
    values_noun="choice",
    golden_label="Golden pairs right",
    session_chunks=session_chunks,
    check_manifest_row=check_manifest_row,
    check_contents=functools.partial(
        content_errors, at_most=2, noun="pair", ends=compared_tutorial.ENDS
    ),
    manifest_columns=compared_tutorial.MANIFEST_COLUMNS,
    check_manifest_extra=compared_tutorial.check_manifest_extra,
    store_manifest_extra=compared_tutorial.store_manifest_extra,
    default_dimensions=WYD_QUESTIONS[:1],
    sessions_on_demand=sessions_on_demand,
    tutorial_payload=compared_tutorial.preference_payload,
    readiness=functools.partial(
        examples_lacking,
        text="no worked examples: raters see no pair judged by the experts before the test "
        "(manifest rows of role tutorial: a content's best and worst video, and a note)",
    ),
)
