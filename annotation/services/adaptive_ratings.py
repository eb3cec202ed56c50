"""Which ratings of an adaptive study count, and where the stopping rule stops each video
on them (issue 22): the kept ratings, pivoted per video, replayed in arrival order.

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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.db.models import QuerySet

from annotation.counting import counts_q
from annotation.models import Answer, Assignment, Item, Rating, Study
from quality.stats.adaptive.interval import CollectionPlan, Interval
from quality.stats.adaptive.stopping import StopDecision, StoppingRule, decide, stop_many

_CHUNK = 256  # videos replayed at once: 256 x 1001 grid x 2 capitals x 3 dimensions ~ 12 MB


def kept_answers(*, study: Study) -> QuerySet[Answer]:
    """The session answers to the study's regular videos that count (module docstring)."""
    return Answer.objects.filter(
        counts_q(study, "assignment__"),
        item__study=study,
        item__role=Item.Role.STIMULUS,
        assignment__state=Assignment.State.FINISHED,
    )


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
