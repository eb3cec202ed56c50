"""Adaptive collection of a single-stimulus study (issue 22): its settings, which videos
have settled, and what the monitor says about the saving.

Which ratings count, and how sure we are of a video on them (where the stopping rule
stops it): annotation.services.adaptive_ratings.

When it runs: ``adaptive_review`` is sent (annotation.tasks.review_adaptive) on the commit
of every finished session, the moment new ratings start to count, and swept every minute
(``adaptive_sweep``) so that a send lost with the broker is made good. Nothing runs per
answer: the cost of an answer is unchanged. A review replays every open video's kept
ratings (O(ratings x grid) for the anytime plan, chunked to keep memory flat); settled
videos are not replayed again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from annotation.designs.base import refuse_nul
from annotation.errors import ValidationFailed
from annotation.models import AdaptiveSettings, Assignment, Item, ItemMember, SettledStimulus, Study
from annotation.models.adaptive import ADAPTIVE_DESIGN
from annotation.services.adaptive_ratings import VideoState, kept_scores, replay_videos
from quality.stats.adaptive.interval import CollectionPlan
from quality.stats.adaptive.stopping import StoppingRule, make_plan

logger = logging.getLogger(__name__)

WIDEST_SHOWN = 5  # open videos the monitor lists, widest interval first


def adaptive_settings_of(*, study: Study) -> AdaptiveSettings | None:
    """The study's adaptive settings when adaptive collection is on and applies to its
    design (single-stimulus sliders), else None."""
    if study.design != ADAPTIVE_DESIGN:
        return None
    try:
        settings = study.adaptive  # no query when the caller selected it with the study
    except AdaptiveSettings.DoesNotExist:
        return None
    return settings if settings.enabled else None


# The settings that make the stopping rule: a change to one re-judges the settled videos.
RULE_FIELDS = ("plan", "target_half_width", "min_ratings", "max_ratings", "looks", "alpha")


def adaptive_configure(*, study: Study, **changes) -> AdaptiveSettings:
    """Switch adaptive collection on or off and set its numbers (``enabled``, ``plan``,
    ``target_half_width``, ``min_ratings``, ``max_ratings``, ``looks``, ``alpha``; those
    not given keep their value or default). ValidationFailed with every problem found, and
    nothing stored, when the result is not valid. Then as ``adaptive_settings_saved``."""
    from django.core.exceptions import ValidationError

    with transaction.atomic():
        settings, _ = AdaptiveSettings.objects.select_for_update().get_or_create(study=study)
        changed = []
        for name, value in changes.items():
            if value is not None:
                if isinstance(value, str):
                    refuse_nul(value, what=name)
                if getattr(settings, name) != value:
                    changed.append(name)
                setattr(settings, name, value)
        try:
            settings.clean_fields()  # the types first: clean() compares the numbers
            settings.full_clean()
        except ValidationError as error:
            problems = "; ".join(
                f"{field}: {' '.join(messages)}" for field, messages in error.message_dict.items()
            )
            raise ValidationFailed(problems, extra={"errors": error.message_dict}) from error
        settings.save()
        study.adaptive = settings  # what the caller's study says from now on
        adaptive_settings_saved(study=study, changed=changed)
    return settings


def adaptive_settings_saved(*, study: Study, changed) -> None:
    """What follows a change of the settings (``changed``: the fields that changed), from
    the API, the command line or the admin form, in the caller's transaction:

    - a changed stopping rule (RULE_FIELDS) re-judges the settled videos: they are
      forgotten, and the next review settles again those the new rule stops (a video
      settled at +-20 is open again under a target of +-5; one that meets a wider
      target settles), so the monitor never counts a video as settled by a rule that is
      no longer the study's;
    - switching on, or a new rule, makes the next review a full one, which takes every
      settled video (not only those it settles) out of the open sessions' positions
      ahead, so videos settled before a switch-off stop being served again;
    - a review is sent on commit when adaptive collection is on (on the embedded
      default, which has no periodic sweep, this is what makes the change take effect).
    Switching off changes no open session: the sessions that start from then on are
    made of every video."""
    changed = set(changed)
    rule_changed = bool(changed & set(RULE_FIELDS))
    if rule_changed:
        forgotten, _ = SettledStimulus.objects.filter(stimulus__study=study).delete()
        if forgotten:
            logger.info("study %s: the stopping rule changed; %d settled videos re-judged",
                        study.slug, forgotten)  # fmt: skip
    if rule_changed or "enabled" in changed:
        AdaptiveSettings.objects.filter(study=study).update(reviewed_at=None)
    adaptive_review_due(study=study)


def adaptive_open_items(items: QuerySet, *, study: Study) -> QuerySet:
    """Session items (SessionItem rows) left to serve under adaptive collection: those
    whose video settled are left out; golden and qualification items never settle and
    are always served. What is left of a session keeps its seeded split and its per-rater
    shuffle, never an order by uncertainty, so a rater's session stays a random sample
    of the videos still open (fair to per-rater Z-scores). `items` unchanged when
    adaptive collection is off."""
    if adaptive_settings_of(study=study) is None:
        return items
    settled = Item.objects.filter(
        study=study, role=Item.Role.STIMULUS, members__stimulus__settled__isnull=False
    ).values("pk")
    return items.exclude(is_golden=False, item__in=settled)


def collection_plan(*, settings: AdaptiveSettings, study: Study) -> CollectionPlan:
    """The plan the settings name, on the study's slider range. Only a group-sequential
    plan reads the looks (checked for it alone: another plan's may be anything)."""
    group_sequential = settings.plan == AdaptiveSettings.Plan.GROUP_SEQUENTIAL
    looks = (settings.look_counts() if group_sequential else ()) or (settings.max_ratings,)
    return make_plan(
        kind=settings.plan,
        alpha=settings.alpha,
        low=study.slider_min,
        high=study.slider_max,
        looks=looks,
        first_stage=settings.min_ratings,
    )


def stopping_rule(*, settings: AdaptiveSettings) -> StoppingRule:
    return StoppingRule(
        target_half_width=settings.target_half_width,
        min_ratings=settings.min_ratings,
        max_ratings=settings.max_ratings,
    )


@dataclass(frozen=True)
class Review:
    settled_now: list[int]  # video ids settled by this review
    open_videos: list[VideoState]  # the rated videos still open
    sessions_pruned: int  # open sessions whose not-yet-held positions lost settled videos


def adaptive_review(*, study: Study) -> Review | None:
    """Settle the study's videos that the rule stops now, take them out of the positions
    of open sessions the rater's page does not hold yet, and keep the figures the monitor
    shows. None when adaptive collection is off. Idempotent and safe to run twice at
    once: reviews of a study take turns on its settings row, and a video is settled at
    most once (its row is unique)."""
    settings = adaptive_settings_of(study=study)
    if settings is None:
        return None
    keys = list(study.dimensions.order_by("order").values_list("key", flat=True))
    done = set(
        SettledStimulus.objects.filter(stimulus__study=study).values_list("stimulus_id", flat=True)
    )
    states = replay_videos(
        plan=collection_plan(settings=settings, study=study),
        rule=stopping_rule(settings=settings),
        keys=keys,
        scores=kept_scores(study=study, leave_out=done),
    )
    with transaction.atomic():
        settings = AdaptiveSettings.objects.select_for_update().get(pk=settings.pk)
        done = set(
            SettledStimulus.objects.filter(stimulus__study=study).values_list(
                "stimulus_id", flat=True
            )
        )
        new = [s for s in states if s.decision is not None and s.stimulus_id not in done]
        SettledStimulus.objects.bulk_create(
            [_settled_row(state) for state in new], ignore_conflicts=True
        )
        settled_now = [state.stimulus_id for state in new]
        # the first review after switching on (or a new rule) takes out every settled
        # video, also those settled before a switch-off; later ones the new ones only
        prune = settled_now + (list(done) if settings.reviewed_at is None else [])
        pruned = _prune_open_sessions(study=study, stimulus_ids=prune) if prune else 0
        # a review that ran beside this one may have settled some of them meanwhile
        open_videos = [s for s in states if s.decision is None and s.stimulus_id not in done]
        settings.review = _review_figures(open_videos)
        settings.reviewed_at = timezone.now()
        settings.save(update_fields=["review", "reviewed_at"])
    if settled_now:
        logger.info(
            "study %s: %d videos settled, %d open sessions pruned",
            study.slug,
            len(settled_now),
            pruned,
        )
    return Review(settled_now, open_videos, pruned)


def _settled_row(state: VideoState) -> SettledStimulus:
    decision = state.decision
    return SettledStimulus(
        stimulus_id=state.stimulus_id,
        reason=decision.reason,
        ratings=decision.n,
        half_width=decision.widest_half_width,
        widest_dimension=decision.widest_dimension or "",
        intervals={
            key: [i.n, round(i.mean, 3), round(i.lower, 3), round(i.upper, 3)]
            for key, i in state.intervals.items()
        },
    )


def held_ahead(study: Study) -> int:
    """Positions from the current one that a rater's page may hold: its window, or the
    current item and the next one preloaded (annotation.selectors' upcoming items), and
    one more, so that an answer the page sends on a position read before a review can
    never become the session's last without its golden gate (the fast path refuses a
    session's last answer, and decides so on the length it read)."""
    return max(study.window_size, 2) + 1


def _prune_open_sessions(*, study: Study, stimulus_ids: list[int]) -> int:
    """Leave settled videos out of the positions of active and paused sessions that
    come after what the rater's page may hold (``held_ahead``): nothing answered, and
    nothing the page may answer offline, is touched; the rest keeps its shuffled order, so
    the session stays a random sample of the videos still open. Golden items stay."""
    items = set(
        ItemMember.objects.filter(
            stimulus_id__in=stimulus_ids, item__role=Item.Role.STIMULUS
        ).values_list("item_id", flat=True)
    )
    ahead = held_ahead(study)
    pruned = 0
    open_sessions = (
        Assignment.objects.select_for_update()
        .filter(
            session__study=study,
            state__in=[Assignment.State.ACTIVE, Assignment.State.PAUSED],
        )
        .order_by("pk")
    )
    for assignment in open_sessions:
        keep = assignment.position + ahead
        tail = [item for item in assignment.order[keep:] if item not in items]
        if len(tail) < len(assignment.order[keep:]):
            assignment.order = assignment.order[:keep] + tail
            assignment.save(update_fields=["order"])
            pruned += 1
    return pruned


def _review_figures(open_videos: list[VideoState]) -> dict:
    """What the monitor shows of the open videos between reviews: the widest intervals
    (each video by its widest dimension) and how many rated videos are open."""
    rows = []
    for state in open_videos:
        key = max(state.intervals, key=lambda k: state.intervals[k].half_width)
        interval = state.intervals[key]
        rows.append(
            {
                "video_id": state.stimulus_id,
                "dimension": key,
                "n": interval.n,
                "mean": round(interval.mean, 2),
                "low": round(interval.lower, 2),
                "high": round(interval.upper, 2),
                "half_width": round(interval.half_width, 2),
            }
        )
    rows.sort(key=lambda row: (-row["half_width"], row["video_id"]))
    return {"open_rated": len(rows), "widest_open": rows[:WIDEST_SHOWN]}


def adaptive_sweep() -> int:
    """Review every running study with adaptive collection on; the number reviewed."""
    studies = Study.objects.filter(
        state=Study.State.RUNNING, design=ADAPTIVE_DESIGN, adaptive__enabled=True
    )
    reviewed = 0
    for study in studies:
        if adaptive_review(study=study) is not None:
            reviewed += 1
    return reviewed


def adaptive_review_due(*, study: Study) -> None:
    """Send a review once the current transaction commits (a session finished: its
    ratings start to count), when adaptive collection is on."""
    if study.design != ADAPTIVE_DESIGN:
        return
    if not AdaptiveSettings.objects.filter(study=study, enabled=True).exists():
        return
    from annotation.tasks import review_adaptive
    from config.task_dispatch import send_on_commit

    send_on_commit(review_adaptive, study.pk)
