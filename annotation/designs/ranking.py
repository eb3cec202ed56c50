"""Ranking (VGA-Bench user study, PROTOCOL.md 3.3): an item shows the videos of N
conditions (2 to 16) for one prompt; the rater orders them from best to worst for the
item's criterion, tied places only where the study allows them.

- Items: for every question and every content (prompt) that 2 to 16 conditions have.
  Golden and qualification items: the golden (qualification) videos of one content, one
  expected clearly best and one clearly worst (e.g. a clean video and a degraded copy),
  others of the content in between.
- Layout: the videos in a per-rater, per-item shuffled order, stored with the answer
  (Answer.layout, and each placement's `slot`).
- Values: `ranking`, the places from best to worst, each a video id or (ties allowed) a
  list of tied video ids, every video of the item exactly once; `played`, the videos the
  rater played to the end (all of them: an answer before every video was watched is
  refused).
- Golden gate: the share of the session's golden items with the clearly best video
  placed above the clearly worst must reach `golden_pass_share` (1.0: every one).
  Qualification: that share must reach the study's `qualification_pass_share`.
"""

from __future__ import annotations

import functools
import logging
from collections import Counter
from dataclasses import dataclass

from annotation.designs import compared_tutorial
from annotation.designs.base import (
    ContentVideo,
    Design,
    Gate,
    QualificationScore,
    content_errors,
    shuffled,
)
from annotation.designs.tutorial_examples import examples_lacking
from annotation.dimensions import dimensions_of
from annotation.errors import ValidationFailed
from annotation.media_urls import media_entry
from annotation.models import (
    Answer,
    Item,
    ItemMember,
    RankingPlacement,
    RankingSettings,
    SessionItem,
    Stimulus,
)
from quality.stats.ranking.rankings import BETTER, POOLED, TIED

logger = logging.getLogger(__name__)

MIN_VIDEOS, MAX_VIDEOS = 2, 16

# VGA-Bench's two criteria of its user study, word for word (key, label, question,
# reference shown).
VGA_CRITERIA: tuple[tuple[str, str, str, bool], ...] = (
    (
        "aesthetics",
        "Aesthetic quality",
        "To what extent does the video reflect the beauty described in the text?",
        False,
    ),
    (
        "text_consistency",
        "Text-video consistency",
        "How accurately does the video depict the textual content?",
        False,
    ),
)


def settings_of(study) -> RankingSettings:
    found, _ = RankingSettings.objects.get_or_create(study_id=study.pk)
    return found


@dataclass(frozen=True)
class Ranking:
    places: tuple[tuple[str, ...], ...]  # video ids, best place first
    played: tuple[str, ...]

    def canonical(self) -> dict:
        return {"ranking": [sorted(place) for place in self.places], "played": list(self.played)}


def _shown(item: Item) -> list[Stimulus]:
    return [m.stimulus for m in item.members.all() if m.part == ItemMember.Part.SHOWN]


def build_items(*, study) -> int:
    """An item per question and content of 2 to 16 conditions, and the golden and
    qualification items; the items made already are left as they are."""
    questions = dimensions_of(study.pk)
    videos = Stimulus.objects.filter(study=study).exclude(role=Stimulus.Role.TUTORIAL)
    existing = {
        (item.role, item.dimension_id, item.content)
        for item in Item.objects.filter(study=study).only("role", "dimension_id", "content")
    }
    groups: dict[tuple[str, str], list[Stimulus]] = {}
    for video in videos.order_by("condition", "pk"):
        if video.content and (video.role != Stimulus.Role.STIMULUS or video.condition):
            groups.setdefault((video.role, video.content), []).append(video)
    made = 0
    for (role, content), members in sorted(groups.items()):
        if role not in (Item.Role.STIMULUS, Item.Role.GOLDEN, Item.Role.QUALIFICATION):
            continue
        if not MIN_VIDEOS <= len(members) <= MAX_VIDEOS:
            logger.warning("content %s of %s: %d videos, not ranked", content, study, len(members))
            continue
        expected = {m.expected for m in members}
        if role != Item.Role.STIMULUS and not {"best", "worst"} <= expected:
            logger.warning("golden content %s of %s: no best and worst video", content, study)
            continue
        for question in questions:
            if (role, question.pk, content) in existing:
                continue
            item = Item.objects.create(study=study, role=role, dimension=question, content=content)
            ItemMember.objects.bulk_create(
                ItemMember(item=item, stimulus=video, slot=slot, expected=video.expected)
                for slot, video in enumerate(members)
            )
            made += 1
    sizes = {len(members) for (role, _), members in groups.items() if role == Item.Role.STIMULUS}
    for (role, content), members in groups.items():
        if role == Item.Role.GOLDEN and sizes and len(members) not in sizes:
            logger.warning(
                "golden content %s of %s has %d videos where the items have %s: raters can "
                "tell it is golden",
                content,
                study,
                len(members),
                " or ".join(map(str, sorted(sizes))),
            )
    return made


def layout(*, item: Item, seed: object) -> list[Stimulus]:
    return shuffled(_shown(item), f"{seed}:{item.pk}")


def item_payload(*, item: Item, layout: list[Stimulus]) -> dict:
    """The criterion, the prompt and the videos in the rater's order: never their
    conditions, nor which video a golden item expects best."""
    question = item.dimension
    return {
        "question": {"key": question.key, "label": question.label, "text": question.help_text},
        "prompt": layout[0].prompt,
        "media": [media_entry(video) for video in layout],
    }


def _places(raw: object) -> list[list[str]]:
    refusal = ValidationFailed(
        "'ranking' must list the places from best to worst, each a video id or a list of "
        "tied video ids"
    )
    if not isinstance(raw, list) or not raw:
        raise refusal
    places = []
    for place in raw:
        ids = place if isinstance(place, list) else [place]
        if not ids or not all(isinstance(i, str) for i in ids):
            raise refusal
        places.append(ids)
    return places


def check_values(*, data: dict, item: Item | None, study) -> Ranking:
    places = _places(data.get("ranking"))
    played = data.get("played", [])
    if not isinstance(played, list) or not all(isinstance(i, str) for i in played):
        raise ValidationFailed("'played' must list the ids of the videos played to the end")
    placed = [video for place in places for video in place]
    if len(placed) > MAX_VIDEOS:  # refused before any work that grows with its length
        raise ValidationFailed(
            f"'ranking' places {len(placed)} videos: an item shows at most {MAX_VIDEOS}"
        )
    twice = sorted(video for video, count in Counter(placed).items() if count > 1)
    if twice:
        raise ValidationFailed(f"'ranking' places a video more than once: {twice[0]}")
    if any(len(place) > 1 for place in places) and not settings_of(study).ties_allowed:
        raise ValidationFailed("this study has no tied places: one video per place")
    if item is not None:
        shown = {str(video.public_id) for video in _shown(item)}
        if set(placed) - shown:
            raise ValidationFailed("'ranking' names a video that this item does not show")
        if left_out := len(shown - set(placed)):
            raise ValidationFailed(f"'ranking' leaves {left_out} video(s) out: place every one")
        if set(played) - shown:
            raise ValidationFailed("'played' names a video that this item does not show")
        if unplayed := len(shown - set(played)):
            raise ValidationFailed(
                f"{unplayed} video(s) not played yet: play every video before ranking"
            )
    return Ranking(tuple(tuple(place) for place in places), tuple(sorted(set(played))))


def store_values(*, answer, item: Item, layout: list[Stimulus], values: Ranking) -> None:
    """One placement per video; tied videos share the rank of their place (1, 2, 2, 4)."""
    by_id = {str(video.public_id): (slot, video) for slot, video in enumerate(layout)}
    rows, rank = [], 1
    for place in values.places:
        for video_id in place:
            slot, video = by_id[video_id]
            rows.append(
                RankingPlacement(
                    answer=answer,
                    dimension_id=item.dimension_id,
                    stimulus=video,
                    rank=rank,
                    slot=slot,
                )  # fmt: skip
            )
        rank += len(place)
    RankingPlacement.objects.bulk_create(rows)


def _ordered_right(answers) -> list[dict]:
    """Per golden answer: the ranks of the clearly best and clearly worst videos, and
    whether the best was placed above the worst (a tie is not right)."""
    rows = []
    for answer in answers:
        expected = {m.stimulus_id: m.expected for m in answer.item.members.all() if m.expected}
        ranks = {p.stimulus_id: p.rank for p in answer.placements.all()}
        best = next(ranks[s] for s, e in expected.items() if e == "best")
        worst = next(ranks[s] for s, e in expected.items() if e == "worst")
        rows.append(
            {
                "item": str(answer.item.public_id),
                "best_rank": best,
                "worst_rank": worst,
                "right": best < worst,
            }
        )
    return rows


def _answers(answers):
    return answers.select_related("item").prefetch_related("item__members", "placements")


def golden_gate(*, study, assignment) -> Gate:
    golden = SessionItem.objects.filter(session_id=assignment.session_id, is_golden=True)
    rows = _ordered_right(
        _answers(Answer.objects.filter(assignment=assignment, item__in=golden.values("item_id")))
    )
    if not rows:
        return Gate(None, True)
    share = sum(row["right"] for row in rows) / len(rows)
    return Gate(share, share >= settings_of(study).golden_pass_share)


def qualification_score(*, participation, answers) -> QualificationScore:
    rows = _ordered_right(_answers(answers.order_by("id")))
    share = sum(row["right"] for row in rows) / len(rows) if rows else 0.0
    return QualificationScore(share, rows, share >= participation.study.qualification_pass_share)


def gate_rule(*, study) -> str:
    share = settings_of(study).golden_pass_share
    return f"the clearly best video above the clearly worst in {share:.0%} of the golden items"


def check_manifest_row(*, role: str, labels: dict, expert: dict, dimension_keys) -> None:
    """A ranked video names its condition and content (the prompt its item is about); a
    golden or qualification video, and a worked example's (tutorial), its content (and,
    for one of each, best or worst)."""
    needed = {
        Stimulus.Role.STIMULUS: ("condition", "content"),
        Stimulus.Role.GOLDEN: ("content",),
        Stimulus.Role.QUALIFICATION: ("content",),
        Stimulus.Role.TUTORIAL: ("content",),
    }.get(role, ())
    missing = [column for column in needed if not labels.get(column)]
    if missing:
        raise ValueError(f"a {role} row of a ranking study needs: {', '.join(missing)}")


def check_contents(videos: list[ContentVideo], *, whole: bool = True) -> list[tuple[int, str]]:
    """``content_errors``, and the names a ranking cannot be written with (the rankings
    export and ``python -m quality rank`` read ``a>b=c``): a condition holding ``>`` or
    ``=`` (``m=1`` would come back as two tied conditions), a content ``*`` (the pooled
    ranking's prompt_id). Videos stored before (line None) were checked then."""
    errors = []
    for video in videos:
        if video.line is None:
            continue
        for mark, use in ((BETTER, "between places"), (TIED, "within a tie")):
            if mark in video.condition:
                errors.append((video.line, f"condition {video.condition!r} holds {mark!r}, "
                               f"which a ranking writes {use} (a>b=c): rename it"))  # fmt: skip
        if video.content == POOLED:
            errors.append((video.line, f"content {POOLED!r} is the name of the pooled "
                           "ranking in the results: rename it"))  # fmt: skip
    return errors + content_errors(
        videos, at_most=MAX_VIDEOS, noun="item", whole=whole, ends=compared_tutorial.ENDS
    )


def state_payload(*, study) -> dict:
    return {
        "questions": [
            {"key": d.key, "label": d.label, "text": d.help_text} for d in dimensions_of(study.pk)
        ],
        "ties_allowed": settings_of(study).ties_allowed,
    }


RANKING = Design(
    key="ranking",
    label="Ranking of N videos for one prompt (VGA-Bench)",
    build_items=build_items,
    layout=layout,
    item_payload=item_payload,
    check_values=check_values,
    store_values=store_values,
    golden_gate=golden_gate,
    qualification_score=qualification_score,
    gate_rule=gate_rule,
    state_payload=state_payload,
    widget="frontend/widgets/ranking.js",
    item_noun="set of videos",
    values_noun="ranking",
    golden_label="Golden orders right",
    check_manifest_row=check_manifest_row,
    check_contents=check_contents,
    default_dimensions=VGA_CRITERIA,
    manifest_columns=compared_tutorial.MANIFEST_COLUMNS,
    check_manifest_extra=compared_tutorial.check_manifest_extra,
    store_manifest_extra=compared_tutorial.store_manifest_extra,
    tutorial_payload=compared_tutorial.ranking_payload,
    readiness=functools.partial(
        examples_lacking,
        text="no worked examples: raters see no videos ordered by the experts before the "
        "test, as in VGA-Bench's user study (manifest rows of role tutorial: a content's "
        "best, worst and other videos, and a note)",
    ),
)
