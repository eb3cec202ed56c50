"""Reading a study's ratings as the long table the statistics and exports share."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd

from annotation.models import Assignment, Participation, Rating, Stimulus, Study
from annotation.models.session import pseudonym_for

RATINGS_COLUMNS = ["rater_id", "video_id", "dimension", "score", "session_id"]


def ratings_rows(*, study: Study, chunk_size: int = 5000) -> Iterator[tuple]:
    """(rater_id, video_id, dimension, score, session_id) of every session rating of the
    study's regular stimuli (golden answers are quality control, not data), streamed."""
    rows = (
        Rating.objects.filter(dimension__study=study, stimulus__role=Stimulus.Role.STIMULUS)
        .order_by("id")
        .values_list(
            "assignment__rater_id",
            "stimulus_id",
            "dimension__key",
            "score",
            "assignment__session__index",
        )
    )
    for rater_id, stimulus_id, key, score, session in rows.iterator(chunk_size=chunk_size):
        yield pseudonym_for(rater_id), stimulus_id, key, score, session


def ratings_frame(*, study: Study) -> pd.DataFrame:
    """The long table as a DataFrame, built column-wise to keep memory flat."""
    rows = Rating.objects.filter(
        dimension__study=study, stimulus__role=Stimulus.Role.STIMULUS
    ).values_list(
        "assignment__rater_id",
        "stimulus_id",
        "dimension__key",
        "score",
        "assignment__session__index",
    )
    columns: list[list] = [[], [], [], [], []]
    for row in rows.iterator(chunk_size=20000):
        for column, value in zip(columns, row, strict=True):
            column.append(value)
    return pd.DataFrame(
        {
            "rater_id": pd.Categorical([pseudonym_for(r) for r in columns[0]]),
            "video_id": np.asarray(columns[1], dtype=np.int64),
            # Categories in the study's rating order (GAIA: subject, completeness, interaction).
            "dimension": pd.Categorical(
                columns[2],
                categories=list(study.dimensions.order_by("order").values_list("key", flat=True)),
            ),
            "score": np.asarray(columns[3], dtype=np.float64),
            "session_id": np.asarray(columns[4], dtype=np.int64),
        }
    )


def rater_statistics(*, study: Study) -> list[dict]:
    """One row per rater who joined or rated: qualification, sessions, answers, golden
    agreement, flags (pseudonymous ids only)."""
    participations = {p.rater_id: p for p in Participation.objects.filter(study=study)}
    assignments: dict[int, list[Assignment]] = {}
    for a in Assignment.objects.filter(session__study=study).order_by("started_at"):
        assignments.setdefault(a.rater_id, []).append(a)
    rows = []
    for rater_id in sorted(set(participations) | set(assignments)):
        p = participations.get(rater_id)
        mine = assignments.get(rater_id, [])
        plccs = [a.golden_agreement_plcc for a in mine if a.golden_agreement_plcc is not None]
        rows.append(
            {
                "rater_id": pseudonym_for(rater_id),
                "qualification_state": p.qualification_state if p else "",
                "qualification_share": p.qualification_share if p else None,
                "sessions_started": len(mine),
                "sessions_finished": sum(a.state == Assignment.State.FINISHED for a in mine),
                "answers": sum(a.position for a in mine),
                "golden_agreement_plcc_min": min(plccs) if plccs else None,
                "line_clicker_flag": any(a.flagged_line_clicker for a in mine),
                "excluded_by_admin": p.is_excluded if p else False,
                "excluded_reason": p.excluded_reason if p else "",
            }
        )
    return rows
