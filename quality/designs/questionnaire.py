"""The analysis of questionnaire studies (VGA-Bench labelling): per video and question the
crowd's label (the mean score; the majority level, ``invalid`` or a ``tie`` for the
experts; the tags more than ``keep_share`` of its raters chose), Krippendorff's alpha per
question (and per tag), each rater's agreement with the labels, how the answers spread
over each question's scale, levels or tags, and the history of the experts' batch audits
(quality.stats.labels does the arithmetic; `python -m quality labels` runs the same on
the answers export).

A batch rejected in its audit is an excluded session (annotation.services.audits): it is
left out of every number here like any session an admin excluded, and recorded so."""

from __future__ import annotations

import math
from dataclasses import asdict
from datetime import datetime

import numpy as np
import pandas as pd

from annotation.designs.questionnaire_study import option_values, settings_of
from annotation.designs.slider import STEP_TOLERANCE
from annotation.models import (
    Assignment,
    BatchAudit,
    Item,
    ItemMember,
    LabelAnswer,
    LabelTag,
    Question,
    Stimulus,
    Study,
)
from annotation.models.session import pseudonym_for
from quality import export
from quality.commands.io import json_ready
from quality.designs.base import Analysis, Computed
from quality.designs.common import finished, with_screened
from quality.designs.questionnaire_page import FIGURES, available, draw, results_context
from quality.export import Export, csv_lines, raw_name, shared_export
from quality.selectors import received_by, run_through, study_exclusions
from quality.stats.exclusions import BATCH_REJECTED_IN_AUDIT, PRE_ANALYSIS_RULES, ExclusionIndex
from quality.stats.labels import (
    ANSWER_COLUMNS,
    LABEL_COLUMNS,
    LABELS_VERSION,
    LabelsError,
    LabelSettings,
    analyse,
)
from quality.stats.labels.answers import INVALID, TAG_SEPARATOR
from quality.stats.labels.result import level_text

ANSWERS_COLUMNS = (*ANSWER_COLUMNS, "session_id")
COMMENTS_COLUMNS = ("rater_id", "item_id", "question", "comment", "session_id")
AUDIT_COLUMNS = (
    "batch_id", "rater_id", "session_id", "auditor", "started_at", "decided_at",
    "sample_size", "acceptance_number", "wrong", "verdict", "reason", "wrong_items",
)  # fmt: skip
RULES_APPLIED = (*PRE_ANALYSIS_RULES, BATCH_REJECTED_IN_AUDIT)
EXPORTS = (
    "answers.csv", "comments.csv", "labels.csv", "audits.csv", "raters.csv", "provenance.json",
)  # fmt: skip
RUN_EXPORTS = ("labels.csv",)
STATISTIC_KINDS = (Question.Kind.SCORE, Question.Kind.ORDINAL, Question.Kind.TAGS)
# A score question with more steps than this is shown in ten equal bins.
MOST_SCORE_BINS = 21


def settings_for(*, study: Study) -> dict:
    chosen = settings_of(study)
    return asdict(LabelSettings(keep_share=chosen.keep_share, method=chosen.method))


def questions_in_order(study: Study) -> list[Question]:
    return list(
        Question.objects.filter(dimension__study=study)
        .select_related("dimension")
        .order_by("dimension__order")
    )


def _session_labels(study: Study, through: datetime | None):
    """The answers of the study's sessions to its regular videos (received by
    ``through``): golden answers are quality control and qualification answers a test,
    not data."""
    labels = LabelAnswer.objects.filter(
        answer__item__study=study,
        answer__item__role=Item.Role.STIMULUS,
        answer__assignment__isnull=False,
    )
    return received_by(labels, through)


def answers_frame(*, study: Study, through: datetime | None = None) -> pd.DataFrame:
    """The study's session answers to its regular videos (received by ``through``) in
    the `python -m quality labels` format (ANSWERS_COLUMNS: a score or level as a number,
    ``invalid``, tags joined by ``|`` in the question's order), with the session index;
    comments are no statistic and are left out (``comments_frame``). Rows come question
    by question, so the CLI meets the questions in the questionnaire's order."""
    labels = _session_labels(study, through).exclude(
        dimension__question__kind=Question.Kind.COMMENT
    )
    place = {
        q.dimension.key: {tag: i for i, tag in enumerate(option_values(q))}
        for q in questions_in_order(study)
        if q.kind == Question.Kind.TAGS
    }
    tags: dict[int, list[str]] = {}
    chosen = LabelTag.objects.filter(label__in=labels).order_by("label_id", "id")
    for label, tag in chosen.values_list("label_id", "tag").iterator(chunk_size=20000):
        tags.setdefault(label, []).append(tag)
    rows = labels.order_by("dimension__order", "answer_id").values_list(
        "id",
        "answer__assignment__rater_id",
        "stimulus__public_id",
        "dimension__key",
        "dimension__question__kind",
        "number",
        "invalid",
        "answer__assignment__session__index",
    )
    records = []
    for pk, rater, video, key, kind, number, invalid, session in rows.iterator(chunk_size=20000):
        if kind == Question.Kind.TAGS:
            order = place.get(key, {})
            given = sorted(tags.get(pk, []), key=lambda tag: (order.get(tag, len(order)), tag))
            answer = TAG_SEPARATOR.join(given)
        else:
            answer = INVALID if invalid else level_text(number)
        records.append((pseudonym_for(rater), str(video), key, kind, answer, session))
    frame = pd.DataFrame(records, columns=list(ANSWERS_COLUMNS))
    frame["session_id"] = frame["session_id"].astype(np.int64)
    return frame


def comments_frame(*, study: Study, through: datetime | None = None) -> pd.DataFrame:
    """The session comments on regular videos (an empty comment is none)."""
    rows = (
        _session_labels(study, through)
        .filter(dimension__question__kind=Question.Kind.COMMENT)
        .exclude(text="")
        .order_by("answer_id", "dimension__order")
        .values_list(
            "answer__assignment__rater_id",
            "stimulus__public_id",
            "dimension__key",
            "text",
            "answer__assignment__session__index",
        )
    )
    records = [(pseudonym_for(r), str(v), k, t, s) for r, v, k, t, s in rows.iterator()]
    frame = pd.DataFrame(records, columns=list(COMMENTS_COLUMNS))
    frame["session_id"] = frame["session_id"].astype(np.int64)
    return frame


def _score_bins(question: Question, answers: pd.Series) -> list[dict]:
    """One bin per step of the scale, or ten equal bins on a finer scale. The steps are
    those an answer can take, low + k * step up to high (a step that does not divide the
    range, 0-10 by 6, has 0 and 6: no bin 12 past the scale's end)."""
    values = pd.to_numeric(answers).to_numpy(dtype=float)
    low, high, step = question.scale_min, question.scale_max, question.scale_step
    steps = math.floor((high - low) / step + STEP_TOLERANCE) + 1
    if steps <= MOST_SCORE_BINS:
        index = np.clip(np.round((values - low) / step).astype(int), 0, steps - 1)
        counts = np.bincount(index, minlength=steps)
        points = [low + i * step for i in range(steps)]
        return [
            {"value": level_text(p), "label": level_text(p), "count": int(c)}
            for p, c in zip(points, counts, strict=True)
        ]
    counts, edges = np.histogram(values, bins=10, range=(low, high))
    return [
        {"value": f"{a:g}-{b:g}", "label": f"{a:g}–{b:g}", "count": int(c)}
        for a, b, c in zip(edges[:-1], edges[1:], counts, strict=True)
    ]


def _bins(question: Question, answers: pd.Series) -> list[dict]:
    """How a question's counted answers spread: per score step, per level (and
    ``invalid``), per tag (and "none" where some answers chose no tag)."""
    if question.kind == Question.Kind.SCORE:
        return _score_bins(question, answers)
    counts = answers.value_counts().to_dict()
    if question.kind == Question.Kind.ORDINAL:
        bins = [
            {"value": level_text(float(o["value"])), "label": o.get("label", ""), "count": 0}
            for o in question.options
        ]
        for entry in bins:
            entry["count"] = int(counts.get(entry["value"], 0))
        if question.invalid_option or counts.get(INVALID):
            bins.append({"value": INVALID, "label": "Invalid question", "count": 0})
            bins[-1]["count"] = int(counts.get(INVALID, 0))
        return bins
    chosen: dict[str, int] = {}
    for text, n in counts.items():
        for tag in (t for t in text.split(TAG_SEPARATOR) if t):
            chosen[tag] = chosen.get(tag, 0) + int(n)
    bins = [
        {
            "value": o["value"],
            "label": o.get("label", o["value"]),
            "count": chosen.get(o["value"], 0),
        }
        for o in question.options
    ]
    if counts.get(""):
        bins.append({"value": "", "label": "none", "count": int(counts[""])})
    return bins


def distributions(counted: pd.DataFrame, questions: list[Question]) -> list[dict]:
    """Per question in the study's order (comments aside; a list, as a stored JSON
    object keeps no key order): its kind, the counted answers and how they spread
    (``_bins``); scores also their mean."""
    out = []
    for question in questions:
        if question.kind not in STATISTIC_KINDS:
            continue
        key = question.dimension.key
        answers = counted.loc[counted["question"] == key, "answer"]
        entry = {
            "question": key,
            "label": question.dimension.label,
            "kind": question.kind,
            "answers": len(answers),
            "bins": _bins(question, answers),
        }
        if question.kind == Question.Kind.SCORE:
            entry["mean"] = float(pd.to_numeric(answers).mean()) if len(answers) else None
        out.append(entry)
    return out


def _ties(result, counted: pd.DataFrame) -> list[dict]:
    """The units without a majority level, for the experts to adjudicate: the video, its
    prompt, the question and the answers given."""
    ties = result.ties()
    if ties.empty:
        return []
    given = counted.groupby(["item_id", "question"])["answer"].agg(sorted).to_dict()
    prompts = dict(
        Stimulus.objects.filter(public_id__in=list(ties["item_id"])).values_list(
            "public_id", "prompt"
        )
    )
    prompts = {str(k): v for k, v in prompts.items()}
    return [
        {
            "item_id": item,
            "prompt": prompts.get(item, ""),
            "question": question,
            "n": int(n),
            "answers": given.get((item, question), []),
        }
        for item, question, n in ties.itertuples(index=False, name=None)
    ]


def _iso(moment) -> str | None:
    return moment.isoformat() if moment is not None else None


def audit_history(*, study: Study) -> list[dict]:
    """Every batch audit of the study, oldest first: the batch (assignment), its rater
    and session, who audited and when, the videos sampled (c: the plan's acceptance
    number), how many were wrong (and which, by video id), the verdict and why."""
    audits = list(
        BatchAudit.objects.filter(assignment__session__study=study)
        .select_related("assignment__session", "auditor")
        .order_by("started_at", "pk")
    )
    wrong_items = {e["item"] for a in audits for e in a.findings if e.get("wrong")}
    videos = dict(
        ItemMember.objects.filter(item_id__in=wrong_items).values_list(
            "item_id", "stimulus__public_id"
        )
    )
    return [
        {
            "batch_id": a.assignment_id,
            "rater_id": pseudonym_for(a.assignment.rater_id),
            "session_id": a.assignment.session.index,
            "auditor": a.auditor.get_username() if a.auditor else None,
            "started_at": _iso(a.started_at),
            "decided_at": _iso(a.decided_at),
            "sample_size": len(a.sample),
            "acceptance_number": a.acceptance_number,
            "wrong": a.wrong,
            "verdict": a.verdict or "open",
            "reason": a.reason,
            "wrong_items": [
                str(videos.get(e["item"], e["item"])) for e in a.findings if e.get("wrong")
            ],
        }
        for a in audits
    ]


def audit_counts(*, study: Study, history: list[dict]) -> dict[str, int]:
    """Audits accepted, rejected and open, and finished batches nobody has audited."""
    counts = {v: sum(a["verdict"] == v for a in history) for v in ("accepted", "rejected", "open")}
    counts["not_audited"] = Assignment.objects.filter(
        session__study=study, state=Assignment.State.FINISHED, audit__isnull=True
    ).count()
    return counts


def execute(*, run) -> Computed:
    """The study's answers, less those its exclusions take out (a batch rejected in its
    audit among them), through quality.stats.labels with the run's settings."""
    study = run.study
    exclusions = study_exclusions(study=study)
    answers = answers_frame(study=study, through=run_through(run))
    if answers.empty:
        raise ValueError("the study has no answers to its questions yet (comments aside)")
    rules = ExclusionIndex(exclusions).rules(answers["rater_id"], answers["session_id"])
    counted = answers[rules == ""]
    if counted.empty:
        raise ValueError(
            f"every one of the study's {len(answers)} answers is excluded "
            f"({', '.join(sorted({e.rule for e in exclusions}))})"
        )
    try:
        result = analyse(
            counted[list(ANSWER_COLUMNS)].reset_index(drop=True),
            settings=LabelSettings(**run.settings_snapshot),
        )
    except LabelsError as exc:
        raise ValueError(f"the answers cannot be labelled: {exc}") from None
    summary = json_ready(result.summary_dict())
    summary["labels"] = json_ready(result.labels[list(LABEL_COLUMNS)].to_dict("records"))
    summary["rater_agreement_by_question"] = json_ready(result.rater_agreement.to_dict("records"))
    summary["distributions"] = json_ready(distributions(counted, questions_in_order(study)))
    summary["ties"] = json_ready(_ties(result, counted))
    history = audit_history(study=study)
    summary["audits"] = history
    summary["audit_counts"] = audit_counts(study=study, history=history)
    exclusions = with_screened(exclusions, [], rows=answers, rules=rules)
    return finished(
        study=study, summary=summary, exclusions=exclusions, rules=RULES_APPLIED,
        rows=len(answers), version=LABELS_VERSION,
    )  # fmt: skip


def export_questionnaire(*, study: Study, name: str, run) -> Export:
    slug = study.slug
    csv_type = "text/csv; charset=utf-8"
    if name in ("answers.csv", "comments.csv"):
        index = ExclusionIndex(export.run_exclusions(study=study, run=run))
        through = run_through(run)
        if name == "answers.csv":
            frame = answers_frame(study=study, through=through)
        else:
            frame = comments_frame(study=study, through=through)
        rows = (
            (*row, index.rule(row[0], row[-1])) for row in frame.itertuples(index=False, name=None)
        )
        lines = csv_lines([*frame.columns, "excluded"], rows)
        return Export(lines, raw_name(study, name, run), csv_type)
    if name == "labels.csv":
        frame = pd.DataFrame(run.summary.get("labels", []), columns=list(LABEL_COLUMNS))
        frame = frame.astype(object).where(frame.notna(), None)
        lines = csv_lines(LABEL_COLUMNS, frame.itertuples(index=False, name=None))
        return Export(lines, f"{slug}-labels-run{run.pk}.csv", csv_type)
    if name == "audits.csv":
        rows = (
            [*(a[c] for c in AUDIT_COLUMNS[:-1]), TAG_SEPARATOR.join(a["wrong_items"])]
            for a in audit_history(study=study)
        )
        return Export(csv_lines(AUDIT_COLUMNS, rows), f"{slug}-audits.csv", csv_type)
    return shared_export(study=study, name=name, run=run)


QUESTIONNAIRE_ANALYSIS = Analysis(
    key="questionnaire",
    settings_for=settings_for,
    execute=execute,
    exports=EXPORTS,
    run_exports=RUN_EXPORTS,
    export=export_questionnaire,
    figures=FIGURES,
    available=available,
    draw=draw,
    results_template="frontend/staff/results/questionnaire.html",
    results_context=results_context,
    rules=RULES_APPLIED,
    rows_noun="answers",
)
