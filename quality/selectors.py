"""Reading a study's ratings as the long table the statistics and exports share, and which
of them count (``study_exclusions``; the rules are in quality.stats.exclusions)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

import numpy as np
import pandas as pd

from annotation.designs import design_of
from annotation.models import (
    Assignment,
    BatchAudit,
    Item,
    Participation,
    PreferenceJudgment,
    Rating,
    Study,
)
from annotation.models.session import pseudonym_for
from quality.stats.exclusions import (
    ADMIN_EXCLUDED_RATER,
    ADMIN_EXCLUDED_SESSION,
    BATCH_REJECTED_IN_AUDIT,
    GOLDEN_GATE_FAILED,
    RATER_WITHDREW,
    WITHDRAWN_REASON,
    Exclusion,
)

RATINGS_COLUMNS = ["rater_id", "video_id", "dimension", "score", "session_id"]


def received_by(rows, through: datetime | None, *, field: str = "answer__received_at"):
    """The rows of answers received by ``through``, all of them when it is None. A run
    reads the answers received by its start (``run_through``), and its exports hold those
    same answers, so that an export reproduces its run however many answers came after
    it (analysis_run_staleness calls those "ratings arrived since this run")."""
    return rows if through is None else rows.filter(**{f"{field}__lte": through})


def run_through(run) -> datetime | None:
    """Up to when a run's answers were received (its start), None for no run (all)."""
    return None if run is None else run.started_at or run.created_at


def session_ratings(*, study: Study, through: datetime | None = None):
    """The slider ratings of the study's sessions on its regular videos (those received
    by ``through``, ``received_by``): golden answers are quality control and
    qualification answers a test, not data."""
    rows = Rating.objects.filter(
        dimension__study=study,
        answer__item__role=Item.Role.STIMULUS,
        answer__assignment__isnull=False,
    )
    return received_by(rows, through)


def ratings_rows(
    *, study: Study, through: datetime | None = None, chunk_size: int = 5000
) -> Iterator[tuple]:
    """(rater_id, video_id, dimension, score, session_id) of every session rating of the
    study's regular stimuli received by ``through`` (golden answers are quality control,
    not data), streamed."""
    rows = (
        session_ratings(study=study, through=through)
        .order_by("id")
        .values_list(
            "answer__assignment__rater_id",
            "stimulus_id",
            "dimension__key",
            "score",
            "answer__assignment__session__index",
        )
    )
    for rater_id, stimulus_id, key, score, session in rows.iterator(chunk_size=chunk_size):
        yield pseudonym_for(rater_id), stimulus_id, key, score, session


def ratings_frame(*, study: Study, through: datetime | None = None) -> pd.DataFrame:
    """The long table (received by ``through``) as a DataFrame, built column-wise to keep
    memory flat."""
    rows = session_ratings(study=study, through=through).values_list(
        "answer__assignment__rater_id",
        "stimulus_id",
        "dimension__key",
        "score",
        "answer__assignment__session__index",
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


RATER_COLUMNS = (
    "rater_id",
    "qualification_state",
    "qualification_share",
    "sessions_started",
    "sessions_finished",
    "answers",
    "golden_agreement_min",
    "live_guard_line_click_flag",
    "sessions_failed_gate",
    "sessions_excluded_by_admin",
    "sessions_rejected_in_audit",
    "excluded_by_admin",
    "excluded_reason",
    "withdrew",
)


def rater_statistics(*, study: Study) -> list[dict]:
    """One row per rater who joined or rated: qualification, sessions, answers, golden
    agreement, flags (pseudonymous ids only); the keys are RATER_COLUMNS.

    ``sessions_finished`` counts the sessions the rater finished, also those excluded
    afterwards; an excluded session counts under ``sessions_rejected_in_audit`` when a
    batch audit rejected it, else under ``sessions_excluded_by_admin``."""
    participations = {p.rater_id: p for p in Participation.objects.filter(study=study)}
    assignments: dict[int, list[Assignment]] = {}
    for a in Assignment.objects.filter(session__study=study).order_by("started_at"):
        assignments.setdefault(a.rater_id, []).append(a)
    rejected = _rejected_in_audit(study=study)
    rows = []
    for rater_id in sorted(set(participations) | set(assignments)):
        p = participations.get(rater_id)
        mine = assignments.get(rater_id, [])
        agreements = [a.golden_agreement for a in mine if a.golden_agreement is not None]
        excluded = [a.pk for a in mine if a.state == Assignment.State.EXCLUDED]
        rows.append(
            {
                "rater_id": pseudonym_for(rater_id),
                "qualification_state": p.qualification_state if p else "",
                "qualification_share": p.qualification_share if p else None,
                "sessions_started": len(mine),
                "sessions_finished": sum(a.finished_at is not None for a in mine),
                "answers": sum(a.position for a in mine),
                "golden_agreement_min": min(agreements) if agreements else None,
                "live_guard_line_click_flag": any(a.flagged_line_clicker for a in mine),
                "sessions_failed_gate": sum(a.eligible_for_next is False for a in mine),
                "sessions_excluded_by_admin": sum(pk not in rejected for pk in excluded),
                "sessions_rejected_in_audit": sum(pk in rejected for pk in excluded),
                "excluded_by_admin": bool(p and p.is_excluded and not _withdrawal_only(p)),
                "excluded_reason": p.excluded_reason if p else "",
                "withdrew": bool(p and p.withdrawn_at),
            }
        )
    return rows


def _withdrawal_only(p: Participation) -> bool:
    """Whether the rater's exclusion is their withdrawal alone: withdrawing excludes the
    rater at that very moment, while an admin's exclusion before it keeps its own."""
    return p.withdrawn_at is not None and p.excluded_at == p.withdrawn_at


def _rejected_in_audit(*, study: Study) -> set[int]:
    """Ids of the study's assignments whose batch an audit rejected (the questionnaire
    design's audits; such a session is excluded with the audit's reason)."""
    return set(
        BatchAudit.objects.filter(
            assignment__session__study=study, verdict=BatchAudit.Verdict.REJECTED
        ).values_list("assignment_id", flat=True)
    )


def _username(user) -> str | None:
    return user.get_username() if user is not None else None


def _iso(moment) -> str | None:
    return moment.isoformat() if moment is not None else None


def study_exclusions(*, study: Study) -> list[Exclusion]:
    """The exclusions the study's state decides before any analysis: raters who withdrew,
    raters and sessions an admin excluded (with the reason, who and when), and finished
    sessions whose golden agreement failed the gate (``eligible_for_next`` false: PLCC at
    or below the threshold when the session ended, or undefined) unless
    ``study.keep_failed_gate_sessions``.
    Sorted by rater and session; a session of an excluded rater is not listed again."""
    exclusions = []
    excluded_raters = set()
    for p in (
        Participation.objects.filter(study=study, is_excluded=True)
        .select_related("excluded_by")
        .order_by("rater_id")
    ):
        excluded_raters.add(p.rater_id)
        withdrew = p.withdrawn_at is not None  # the rater's own decision comes first
        exclusions.append(
            Exclusion(
                rule=RATER_WITHDREW if withdrew else ADMIN_EXCLUDED_RATER,
                rater_id=pseudonym_for(p.rater_id),
                session=None,
                reason=WITHDRAWN_REASON if withdrew else p.excluded_reason,
                decided_by=None if withdrew else _username(p.excluded_by),
                decided_at=_iso(p.withdrawn_at if withdrew else p.excluded_at),
            )
        )
    sessions = (
        Assignment.objects.filter(session__study=study)
        .exclude(rater_id__in=excluded_raters)
        .select_related("session", "excluded_by")
        .order_by("rater_id", "session__index")
    )
    rejected = _rejected_in_audit(study=study)
    for a in sessions.filter(state=Assignment.State.EXCLUDED):
        exclusions.append(
            Exclusion(
                rule=BATCH_REJECTED_IN_AUDIT if a.pk in rejected else ADMIN_EXCLUDED_SESSION,
                rater_id=pseudonym_for(a.rater_id),
                session=a.session.index,
                reason=a.admin_note,
                decided_by=_username(a.excluded_by),
                decided_at=_iso(a.excluded_at),
            )
        )
    if not study.keep_failed_gate_sessions:
        rule = design_of(study).gate_rule(study=study)
        for a in sessions.filter(state=Assignment.State.FINISHED, eligible_for_next=False):
            agreement = a.golden_agreement
            shown = "undefined" if agreement is None else f"{agreement:.3f}"
            exclusions.append(
                Exclusion(
                    rule=GOLDEN_GATE_FAILED,
                    rater_id=pseudonym_for(a.rater_id),
                    session=a.session.index,
                    reason=f"golden agreement {shown}; the gate asks for {rule}",
                    figures={"golden_agreement": agreement, "gate": rule},
                    decided_at=_iso(a.finished_at),
                )
            )
    return sorted(exclusions, key=lambda e: (e.rater_id, e.session or 0, e.rule))


def exclusions_fingerprint(*, study: Study, exclusions: list[Exclusion]) -> str:
    """What the counted ratings depend on besides the ratings themselves: the raters'
    withdrawals, the admins' exclusions and the gate setting. A run whose fingerprint
    differs is out of date."""
    import hashlib

    keys = sorted(
        f"{e.rule}:{e.rater_id}:{e.session}"
        for e in exclusions
        if e.rule
        in (RATER_WITHDREW, ADMIN_EXCLUDED_RATER, ADMIN_EXCLUDED_SESSION, BATCH_REJECTED_IN_AUDIT)
    )
    text = f"keep_failed_gate_sessions={study.keep_failed_gate_sessions};" + ";".join(keys)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


JUDGMENTS_COLUMNS = [
    "rater_id",
    "question",
    "content_id",
    "left",
    "right",
    "choice",
    "session_id",
]


def judgments_frame(*, study: Study, through: datetime | None = None) -> pd.DataFrame:
    """A preference study's session judgments of its regular pairs (received by
    ``through``), in the `python -m quality compare` format (left and right are the
    conditions shown on each side), with the session index; golden pairs are quality
    control, not data."""
    judgments = PreferenceJudgment.objects.filter(
        answer__item__study=study,
        answer__item__role=Item.Role.STIMULUS,
        answer__assignment__isnull=False,
    )
    rows = (
        received_by(judgments, through)
        .order_by("id")
        .values_list(
            "answer__assignment__rater_id",
            "dimension__key",
            "answer__item__content",
            "left__condition",
            "right__condition",
            "choice",
            "answer__assignment__session__index",
        )
    )
    frame = pd.DataFrame(list(rows.iterator(chunk_size=20000)), columns=JUDGMENTS_COLUMNS)
    frame["rater_id"] = [pseudonym_for(r) for r in frame["rater_id"]]
    frame["session_id"] = frame["session_id"].astype(np.int64)
    return frame
