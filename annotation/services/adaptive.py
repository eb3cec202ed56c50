"""Adaptive collection of a single-stimulus study (issue 22): which videos have settled,
and what the monitor says about the saving.

How sure we are of a video: per video and dimension, the plan's interval
(quality/stats/adaptive: the betting confidence sequence of Waudby-Smith & Ramdas 2023,
or repeated t-intervals at planned looks) for the mean of the raw scores of kept raters.
A video settles the first time, in arrival order, that the stopping rule
(``quality.stats.adaptive.stopping.decide``) says stop: every dimension's half-width at
most the target after at least ``min_ratings`` ratings, the plan's last look, or the cap.

Which ratings count (the analysis' rules that are known while the study runs,
quality.stats.exclusions): session answers to the study's regular videos (golden and
qualification answers are quality control, never data, so those videos never settle) in
*finished* sessions, leaving out raters and sessions an admin excluded and, unless the
study keeps them, sessions that failed the golden gate. A session's ratings count once
its gate has spoken, so a video never settles on a rater the gate throws out later.
Arrival order is the answers' order of storage (their ids).

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

import numpy as np
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from annotation.designs.base import refuse_nul
from annotation.errors import ValidationFailed
from annotation.models import (
    AdaptiveSettings,
    Answer,
    Assignment,
    Item,
    ItemMember,
    Rating,
    SettledStimulus,
    Study,
)
from annotation.models.adaptive import ADAPTIVE_DESIGN
from quality.stats.adaptive.interval import CollectionPlan, Interval
from quality.stats.adaptive.stopping import StopDecision, StoppingRule, decide, make_plan, stop_many

logger = logging.getLogger(__name__)

WIDEST_SHOWN = 5  # open videos the monitor lists, widest interval first
_CHUNK = 256  # videos replayed at once: 256 x 1001 grid x 2 capitals x 3 dimensions ~ 12 MB


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


def kept_answers(*, study: Study) -> QuerySet[Answer]:
    """The session answers to the study's regular videos that count (module docstring)."""
    answers = Answer.objects.filter(
        item__study=study,
        item__role=Item.Role.STIMULUS,
        assignment__state=Assignment.State.FINISHED,
        participation__is_excluded=False,
    )
    if not study.keep_failed_gate_sessions:
        answers = answers.filter(assignment__eligible_for_next=True)
    return answers


def kept_scores(*, study: Study, leave_out: set[int] = frozenset()) -> dict[int, np.ndarray]:
    """Video id -> its kept scores (scores_by_video); videos in `leave_out` are not read."""
    rows = (
        Rating.objects.filter(answer_id__in=kept_answers(study=study).values("pk"))
        .exclude(stimulus_id__in=leave_out)
        .order_by("answer_id")
        .values_list("answer_id", "stimulus_id", "dimension_id", "score")
    )
    return scores_by_video(study=study, rows=rows.iterator(chunk_size=20000))


_ROW = np.dtype(
    [("answer", np.int64), ("video", np.int64), ("dimension", np.int64), ("score", np.float64)]
)


def scores_by_video(*, study: Study, rows) -> dict[int, np.ndarray]:
    """Video id -> its scores, shape (ratings, dimensions) in arrival order, the columns
    in the study's dimension order, from (answer id, video id, dimension id, score) rows
    ordered by answer id; an answer without every dimension is left out (a slider answer
    scores them all). Videos in the order of their first such answer. In numpy, rows read
    once (a study of GAIA's size has a million ratings)."""
    dimensions = list(study.dimensions.order_by("order").values_list("pk", flat=True))
    table = np.fromiter(rows, dtype=_ROW)
    if table.size == 0 or not dimensions:
        return {}
    column = np.full(max(max(dimensions), int(table["dimension"].max())) + 1, -1)
    column[dimensions] = np.arange(len(dimensions))
    table = table[column[table["dimension"]] >= 0]  # another study's dimension: none
    answer = table["answer"]
    first_row = np.r_[True, answer[1:] != answer[:-1]]  # rows come ordered by answer
    scores = np.full((int(first_row.sum()), len(dimensions)), np.nan)
    scores[np.cumsum(first_row) - 1, column[table["dimension"]]] = table["score"]
    video = table["video"][first_row]
    complete = ~np.isnan(scores).any(axis=1)
    scores, video = scores[complete], video[complete]
    by_video = np.argsort(video, kind="stable")  # arrival order kept within a video
    starts = np.flatnonzero(np.r_[True, np.diff(video[by_video]) != 0])
    groups = np.split(scores[by_video], starts[1:])
    first_answer = by_video[starts]  # each video's first answer, in arrival order
    return {int(video[first_answer[g]]): groups[g] for g in np.argsort(first_answer).tolist()}


@dataclass(frozen=True)
class VideoState:
    """One video after its kept ratings: where the rule stopped it (``decision``, and the
    intervals then), or, still open, its intervals now (``decision`` None)."""

    stimulus_id: int
    n: int
    intervals: dict[str, Interval]
    decision: StopDecision | None


def _intervals(bounds: list, row: int, keys: list[str], final_at: int | None) -> dict:
    intervals = {}
    for key, (n, mean, lower, upper) in zip(keys, bounds, strict=True):
        count = int(n[row])
        intervals[key] = Interval(
            n=count,
            mean=float(mean[row]),
            lower=float(lower[row]),
            upper=float(upper[row]),
            final=final_at is not None and count >= final_at,
        )
    return intervals


def replay_videos(
    *, plan: CollectionPlan, rule: StoppingRule, keys: list[str], scores: dict[int, np.ndarray]
) -> list[VideoState]:
    """Each video's kept scores fed to the plan one rating at a time, in arrival order,
    the rule asked after each: the first stop is the video's (``decide``'s verdict on
    the intervals then). Vectorised over videos: rating r of every video that has one
    and has not stopped, then the rule for all of them (``stop_many``)."""
    final_at = getattr(plan, "max_ratings", None)  # a group-sequential plan's last look
    videos = list(scores)
    result = []
    for start in range(0, len(videos), _CHUNK):
        chunk = videos[start : start + _CHUNK]
        counts = np.array([len(scores[video]) for video in chunk])
        padded = np.full((len(chunk), counts.max(initial=0), len(keys)), np.nan)
        for row, video in enumerate(chunk):
            padded[row, : counts[row]] = scores[video]
        states = [plan.start_many(shape=(len(chunk),)) for _ in keys]
        stopped: dict[int, tuple[int, dict, StopDecision]] = {}
        for r in range(padded.shape[1]):
            live = (counts > r) & ~np.isin(np.arange(len(chunk)), list(stopped))
            rows = np.flatnonzero(live)
            if rows.size == 0:
                break
            for d, state in enumerate(states):
                plan.update_rows(state, rows=rows, scores=padded[rows, r, d])
            bounds = [plan.bounds(state) for state in states]
            n, lower, upper = (np.stack([b[i][rows] for b in bounds]) for i in (0, 2, 3))
            final = n >= final_at if final_at is not None else np.zeros(n.shape, dtype=bool)
            stop = stop_many(rule=rule, n=n, half_width=(upper - lower) / 2, final=final)
            for row in rows[stop]:
                intervals = _intervals(bounds, row, keys, final_at)
                decision = decide(rule=rule, intervals=intervals)
                if decision.stop:
                    stopped[int(row)] = (r + 1, intervals, decision)
        bounds = [plan.bounds(state) for state in states]
        for row, video in enumerate(chunk):
            if row in stopped:
                n_stop, intervals, decision = stopped[row]
                result.append(VideoState(video, n_stop, intervals, decision))
            else:
                intervals = _intervals(bounds, row, keys, final_at)
                result.append(VideoState(video, int(counts[row]), intervals, None))
    return result


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
