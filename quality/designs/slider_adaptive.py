"""How sure the run is of each video, where the study collects adaptively: per video and
dimension, the study's plan interval (quality.stats.adaptive: Stein's two-stage interval,
the group-sequential repeated t-interval or the betting confidence sequence) on the raw
scores the run counts, fed in the order they arrived (answer ids).

Each plan's interval stays valid at the number of ratings a video has now, whatever made
the study stop serving it: the betting sequence at every n at once; Stein's interval at
any n past its first stage, since the data choose n only through the first stage's SD;
the group-sequential interval at its looks, jointly. The run stores the intervals in its
summary (``adaptive``), with the videos whose every dimension is within the study's
target and those the live review settled (annotation.services.adaptive).
"""

from __future__ import annotations

from datetime import datetime

import numpy as np

from annotation.models import SettledStimulus, Study
from annotation.models.session import pseudonym_for
from annotation.services.adaptive import adaptive_settings_of, collection_plan
from annotation.services.adaptive_ratings import replay_videos, scores_by_video
from quality.selectors import received_by, session_ratings
from quality.stats.adaptive.stopping import StoppingRule
from quality.stats.exclusions import Exclusion, ExclusionIndex

NEVER = 10**9  # a rule that never stops: the intervals on every counted rating
WIDEST_LISTED = 10


def counted_scores(
    *, study: Study, exclusions: list[Exclusion], through: datetime | None
) -> dict[int, np.ndarray]:
    """Video id -> its counted scores in arrival order (scores_by_video): those received
    by ``through`` (the run's start, ``received_by``), unless an exclusion of the run
    takes their rater or session out."""
    rows = (
        session_ratings(study=study, through=through)
        .order_by("answer_id")
        .values_list(
            "answer__assignment__rater_id",
            "answer__assignment__session__index",
            "answer_id",
            "stimulus_id",
            "dimension_id",
            "score",
        )
    )
    index = ExclusionIndex(exclusions)
    rules: dict[tuple[int, int], str] = {}  # (rater, session) -> rule, looked up once

    def counts(rater: int, session: int) -> bool:
        if (rater, session) not in rules:
            rules[rater, session] = index.rule(pseudonym_for(rater), session)
        return not rules[rater, session]

    counted = (row[2:] for row in rows.iterator(chunk_size=20000) if counts(row[0], row[1]))
    return scores_by_video(study=study, rows=counted)


def adaptive_intervals(
    *, study: Study, exclusions: list[Exclusion], through: datetime | None = None
) -> dict | None:
    """The run's ``adaptive`` summary (module docstring) on the ratings received by
    ``through`` (the run's start; all when None), and the videos settled by then; None
    when the study does not collect adaptively. ``rows``: [video_id, dimension, n, mean,
    low, high] per video and dimension; ``widest``: the videos furthest from the target,
    each by its widest dimension."""
    settings = adaptive_settings_of(study=study)
    if settings is None:
        return None
    keys = list(study.dimensions.order_by("order").values_list("key", flat=True))
    states = replay_videos(
        plan=collection_plan(settings=settings, study=study),
        rule=StoppingRule(target_half_width=1e-9, min_ratings=NEVER, max_ratings=NEVER),
        keys=keys,
        scores=counted_scores(study=study, exclusions=exclusions, through=through),
    )
    settled_rows = received_by(
        SettledStimulus.objects.filter(stimulus__study=study), through, field="settled_at"
    )
    settled = set(settled_rows.values_list("stimulus_id", flat=True))
    rows, widest = [], []
    within = 0
    for state in states:
        for key, interval in state.intervals.items():
            rows.append([state.stimulus_id, key, interval.n, round(interval.mean, 3),
                         round(interval.lower, 3), round(interval.upper, 3)])  # fmt: skip
        key = max(state.intervals, key=lambda k: state.intervals[k].half_width)
        half = state.intervals[key].half_width
        within += half <= settings.target_half_width
        widest.append({"video_id": state.stimulus_id, "dimension": key,
                       "n": state.intervals[key].n, "half_width": round(half, 3),
                       "settled": state.stimulus_id in settled})  # fmt: skip
    widest.sort(key=lambda row: (-row["half_width"], row["video_id"]))
    return {
        "plan": settings.plan,
        "plan_label": settings.get_plan_display(),
        "alpha": settings.alpha,
        "target_half_width": settings.target_half_width,
        "videos": len(states),
        "within_target": int(within),
        "settled": len(settled),
        "widest": widest[:WIDEST_LISTED],
        "rows": rows,
    }
