"""A propose-then-verify study's answers as tables (quality/designs/propose_verify.py
analyses them, propose_verify_exports.py writes them): the verdicts, the stage-1
proposals, every answer with its time, each segment's place, and which rows a run's
exclusions leave out (a session's exclusion; a verdict on a label only excluded
proposers proposed)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import datetime

import numpy as np
import pandas as pd

from annotation.designs.propose_study import PROPOSE
from annotation.models import Answer, Item, Proposal, Stimulus, Study, Verdict
from annotation.models.session import pseudonym_for
from quality.selectors import received_by
from quality.stats.exclusions import ExclusionIndex
from quality.stats.verify import VERDICT_COLUMNS

VERDICTS_COLUMNS = (*VERDICT_COLUMNS, "session_id")
PROPOSALS_COLUMNS = (
    "rater_id", "item_id", "video_id", "keyframe", "person_id", "action_id",
    "other_action", "inappropriate", "bad_box", "session_id",
)  # fmt: skip


def verdict_rows(study: Study, through: datetime | None = None) -> pd.DataFrame:
    """Every session verdict on a regular segment received by ``through``
    (VERDICTS_COLUMNS and its answer's id)."""
    verdicts = Verdict.objects.filter(
        answer__item__study=study,
        answer__item__role=Item.Role.STIMULUS,
        answer__assignment__isnull=False,
    )
    rows = (
        received_by(verdicts, through)
        .order_by("answer_id", "action__action_id")
        .values_list(
            "answer__assignment__rater_id",
            "answer__item__members__stimulus__public_id",
            "action__action_id",
            "verdict",
            "answer__assignment__session__index",
            "answer_id",
        )
    )
    records = [
        (pseudonym_for(rater), str(segment), str(action), "yes" if said else "no", session, pk)
        for rater, segment, action, said, session, pk in rows.iterator(chunk_size=20000)
    ]
    frame = pd.DataFrame(records, columns=[*VERDICTS_COLUMNS, "answer_id"])
    frame["session_id"] = frame["session_id"].astype(np.int64)
    return frame


def verdicts_frame(*, study: Study, through: datetime | None = None) -> pd.DataFrame:
    """The study's session verdicts on its regular segments (received by ``through``) in
    the `python -m quality verify` format (item_id: the segment's id, label: the action
    id, verdict yes or no), with the session index; golden segments are quality control,
    not data."""
    return verdict_rows(study, through)[list(VERDICTS_COLUMNS)]


def proposal_answers(study: Study, role: str, through: datetime | None = None) -> pd.DataFrame:
    """The session answers of stage 1 on segments of the role received by ``through``, one
    row each, oldest first: rater, segment, session, the labels (action ids), the other
    action and flags."""
    answers = Answer.objects.filter(
        item__study=study, item__role=role, item__dimension__key=PROPOSE, assignment__isnull=False
    )
    answers = received_by(answers, through, field="received_at")
    labels: dict[int, list[int]] = {}
    proposed = Proposal.objects.filter(answer__in=answers).order_by(
        "answer_id", "action__action_id"
    )
    for answer, action in proposed.values_list("answer_id", "action__action_id").iterator():
        labels.setdefault(answer, []).append(action)
    rows = answers.order_by("pk").values_list(
        "pk",
        "assignment__rater_id",
        "item__members__stimulus__public_id",
        "assignment__session__index",
        "flags__other_action",
        "flags__inappropriate",
        "flags__bad_box",
    )
    records = [
        (pk, pseudonym_for(rater), str(segment), session, labels.get(pk, []), other or "",
         bool(inappropriate), bool(bad_box))
        for pk, rater, segment, session, other, inappropriate, bad_box in rows.iterator()
    ]  # fmt: skip
    columns = ["answer_id", "rater_id", "item_id", "session_id", "labels", "other_action",
               "inappropriate", "bad_box"]  # fmt: skip
    frame = pd.DataFrame(records, columns=columns)
    frame["session_id"] = frame["session_id"].astype(np.int64)
    return frame


def segment_places(study: Study) -> dict[str, dict]:
    """Each segment's place: video_id, keyframe, box and person_id, by its id."""
    rows = Stimulus.objects.filter(study=study).values_list("public_id", "segment")
    return {
        str(pk): {
            "video_id": segment.get("video_id", ""),
            "keyframe": segment.get("keyframe"),
            "box": segment.get("box") or [0.0, 0.0, 1.0, 1.0],
            "person_id": segment.get("person_id", 0),
        }
        for pk, segment in rows.iterator()
    }


def proposals_rows(*, study: Study, through: datetime | None = None) -> Iterator[tuple]:
    """proposals.csv's rows (PROPOSALS_COLUMNS) of the answers received by ``through``: a
    row per proposed label, and a row without action_id for an answer that gave another
    action, raised a flag or gave no label (its other_action and flags)."""
    segments = segment_places(study)
    answers = proposal_answers(study, Item.Role.STIMULUS, through)
    for a in answers.itertuples(index=False):
        place = segments.get(a.item_id, {})
        where = (a.rater_id, a.item_id, place.get("video_id"), place.get("keyframe"),
                 place.get("person_id"))  # fmt: skip
        for action in a.labels:
            yield (*where, action, None, None, None, a.session_id)
        if a.other_action or a.inappropriate or a.bad_box or not a.labels:
            yield (*where, None, a.other_action, a.inappropriate, a.bad_box, a.session_id)


def answer_rows(study: Study, through: datetime | None = None) -> pd.DataFrame:
    """Every session answer on a regular segment (both stages) received by ``through``:
    rater, session, stage and the seconds it took (answered_at - shown_at, or the video's
    watch time without them; NaN when neither is known)."""
    answers = Answer.objects.filter(
        item__study=study, item__role=Item.Role.STIMULUS, assignment__isnull=False
    )
    rows = (
        received_by(answers, through, field="received_at")
        .order_by("pk")
        .values_list(
            "assignment__rater_id",
            "assignment__session__index",
            "item__dimension__key",
            "shown_at",
            "answered_at",
            "watch_time_ms",
        )
    )
    records = []
    for rater, session, stage, shown, answered, watched in rows.iterator(chunk_size=20000):
        seconds = (answered - shown).total_seconds() if shown and answered else math.nan
        if not seconds > 0:
            seconds = watched / 1000 if watched else math.nan
        records.append((pseudonym_for(rater), session, stage, seconds))
    frame = pd.DataFrame(records, columns=["rater_id", "session_id", "stage", "seconds"])
    frame["session_id"] = frame["session_id"].astype(np.int64)
    return frame


def counted_rows(frame: pd.DataFrame, index: ExclusionIndex) -> pd.DataFrame:
    return frame[index.rules(frame["rater_id"], frame["session_id"]) == ""]


# The mark of a verdict on a label that only excluded proposers proposed.
PROPOSERS_EXCLUDED = "proposers_excluded"


def _proposed(proposals: pd.DataFrame) -> set[tuple[str, str]]:
    return {(p.item_id, str(a)) for p in proposals.itertuples(index=False) for a in p.labels}


def on_excluded_proposals(
    verdicts: pd.DataFrame, proposals: pd.DataFrame, index: ExclusionIndex
) -> np.ndarray:
    """Which verdicts judge a label (segment, action) that only excluded proposers
    proposed: a proposer whose session was excluded (found careless by the golden gate
    after the segment went to its verifiers, or excluded by an admin) counts for nothing,
    so neither does a candidate that came from nobody else. Such verdicts are left out
    of the run (and marked PROPOSERS_EXCLUDED in the verdicts export), as the answers of
    excluded sessions are; a label a counted proposer also proposed is judged as usual."""
    orphans = _proposed(proposals) - _proposed(counted_rows(proposals, index))
    if not orphans:
        return np.zeros(len(verdicts), dtype=bool)
    pairs = zip(verdicts["item_id"], verdicts["label"], strict=True)
    return np.fromiter(((item, label) in orphans for item, label in pairs), bool, len(verdicts))
