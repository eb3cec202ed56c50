"""The analysis of propose-then-verify studies (AVA, PROTOCOL.md 3.4): the labels kept
by their verifiers (at least ``keep_at_least`` say yes, AVA: 2 of 3) with the verifiers'
Krippendorff's alpha (quality.stats.verify.verify_labels; `python -m quality verify`
runs the same on the verdicts export), where each kept label came from, stage 1's recall
on golden segments for the union of 1, 2, 3 ... proposers
(quality.stats.verify.proposal_recall), the time per segment of each stage beside AVA's,
and what proposers said outside the vocabulary (segments set aside, "other action").

A segment is one person in one segment of a video; its id in every export is the
segment's (Stimulus) public id. Exclusions take a session's answers of both stages out,
golden ones too: the recall is that of the proposers the run counts, whose golden recall
passed the gate (unless the study keeps failed sessions), so it leans high."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator

import numpy as np
import pandas as pd

from annotation.designs.propose_study import PROPOSE, VERIFY, settings_of, vocabulary_of
from annotation.models import (
    Answer,
    ExpertLabel,
    Item,
    Proposal,
    StageLink,
    Stimulus,
    Study,
    Verdict,
)
from annotation.models.session import pseudonym_for
from quality import export
from quality.commands.io import json_ready
from quality.designs.base import Analysis, Computed
from quality.designs.common import finished, with_screened
from quality.designs.propose_verify_page import FIGURES, available, draw, results_context
from quality.export import Export, csv_lines, shared_export
from quality.selectors import study_exclusions
from quality.stats.exclusions import PRE_ANALYSIS_RULES, ExclusionIndex
from quality.stats.verify import VERDICT_COLUMNS, VERIFY_VERSION, proposal_recall, verify_labels

VERDICTS_COLUMNS = (*VERDICT_COLUMNS, "session_id")
PROPOSALS_COLUMNS = (
    "rater_id", "item_id", "video_id", "keyframe", "person_id", "action_id",
    "other_action", "inappropriate", "bad_box", "session_id",
)  # fmt: skip
LABELS_COLUMNS = (
    "item_id", "video_id", "keyframe", "person_id", "action_id", "action", "yes", "no", "kept",
)  # fmt: skip
PROVENANCE_COLUMNS = ("item_id", "action_id", "proposed_by", "yes_by", "no_by")
SEPARATOR = "|"  # between the rater_id:answer_id entries of a provenance cell
RULES_APPLIED = PRE_ANALYSIS_RULES
EXPORTS = (
    "ava.csv", "labels.csv", "provenance.csv", "proposals.csv", "verdicts.csv", "raters.csv",
    "provenance.json",
)  # fmt: skip
RUN_EXPORTS = ("ava.csv", "labels.csv", "provenance.csv")
# Gu et al., "AVA", CVPR 2018, Sec. 3.5: seconds per segment to propose and to verify.
AVA_SECONDS = {PROPOSE: 22.0, VERIFY: 19.7}


def settings_for(*, study: Study) -> dict:
    chosen = settings_of(study)
    return {
        "keep": chosen.keep_at_least,
        "proposers_per_item": chosen.proposers_per_item,
        "verifiers_per_item": chosen.verifiers_per_item,
    }


def _verdict_rows(study: Study) -> pd.DataFrame:
    """Every session verdict on a regular segment (VERDICTS_COLUMNS and its answer's id)."""
    rows = (
        Verdict.objects.filter(
            answer__item__study=study,
            answer__item__role=Item.Role.STIMULUS,
            answer__assignment__isnull=False,
        )
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


def verdicts_frame(*, study: Study) -> pd.DataFrame:
    """The study's session verdicts on its regular segments in the `python -m quality
    verify` format (item_id: the segment's id, label: the action id, verdict yes or no),
    with the session index; golden segments are quality control, not data."""
    return _verdict_rows(study)[list(VERDICTS_COLUMNS)]


def _proposal_answers(study: Study, role: str) -> pd.DataFrame:
    """The session answers of stage 1 on segments of the role, one row each, oldest
    first: rater, segment, session, the labels (action ids), the other action and flags."""
    answers = Answer.objects.filter(
        item__study=study, item__role=role, item__dimension__key=PROPOSE, assignment__isnull=False
    )
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


def _segments(study: Study) -> dict[str, dict]:
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


def proposals_rows(*, study: Study) -> Iterator[tuple]:
    """proposals.csv's rows (PROPOSALS_COLUMNS): a row per proposed label, and a row
    without action_id for an answer that gave another action, raised a flag or gave no
    label (its other_action and flags)."""
    segments = _segments(study)
    answers = _proposal_answers(study, Item.Role.STIMULUS)
    for a in answers.itertuples(index=False):
        place = segments.get(a.item_id, {})
        where = (a.rater_id, a.item_id, place.get("video_id"), place.get("keyframe"),
                 place.get("person_id"))  # fmt: skip
        for action in a.labels:
            yield (*where, action, None, None, None, a.session_id)
        if a.other_action or a.inappropriate or a.bad_box or not a.labels:
            yield (*where, None, a.other_action, a.inappropriate, a.bad_box, a.session_id)


def _answer_rows(study: Study) -> pd.DataFrame:
    """Every session answer on a regular segment (both stages): rater, session, stage and
    the seconds it took (answered_at - shown_at, or the video's watch time without
    them; NaN when neither is known)."""
    rows = (
        Answer.objects.filter(
            item__study=study, item__role=Item.Role.STIMULUS, assignment__isnull=False
        )
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


def stage_times(answers: pd.DataFrame) -> dict:
    """Per stage: answers, those timed, and the median and mean seconds per segment, with
    AVA's figure beside them."""
    out = {}
    for stage in (PROPOSE, VERIFY):
        seconds = answers.loc[answers["stage"] == stage, "seconds"]
        timed = seconds.dropna()
        out[stage] = {
            "answers": len(seconds),
            "timed": len(timed),
            "median_s": float(timed.median()) if len(timed) else None,
            "mean_s": float(timed.mean()) if len(timed) else None,
            "ava_s": AVA_SECONDS[stage],
        }
    return out


def _counted(frame: pd.DataFrame, index: ExclusionIndex) -> pd.DataFrame:
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
    orphans = _proposed(proposals) - _proposed(_counted(proposals, index))
    if not orphans:
        return np.zeros(len(verdicts), dtype=bool)
    pairs = zip(verdicts["item_id"], verdicts["label"], strict=True)
    return np.fromiter(((item, label) in orphans for item, label in pairs), bool, len(verdicts))


def golden_recall(study: Study, index: ExclusionIndex) -> dict | None:
    """Stage 1's recall of the experts' labels on golden segments (proposal_recall), a
    rater's first counted answer to each; None without golden answers."""
    answers = _counted(_proposal_answers(study, Item.Role.GOLDEN), index)
    answers = answers.drop_duplicates(["rater_id", "item_id"], keep="first")
    truth = [
        (str(segment), str(action))
        for segment, value in ExpertLabel.objects.filter(
            stimulus__study=study, stimulus__role=Stimulus.Role.GOLDEN, dimension__key=PROPOSE
        ).values_list("stimulus__public_id", "value")
        for action in sorted(set(value))
    ]
    if answers.empty or not truth:
        return None
    proposals = pd.DataFrame(
        [(a.rater_id, a.item_id, str(label)) for a in answers.itertuples()
         for label in (a.labels or [""])],
        columns=["rater_id", "item_id", "label"],
    )  # fmt: skip
    recall = proposal_recall(
        proposals=proposals, truth=pd.DataFrame(truth, columns=["item_id", "label"])
    )
    return recall.summary_dict()


def _who(rater: str, answer: int) -> str:
    return f"{rater}:{answer}"


def provenance_rows(
    study: Study, kept: pd.DataFrame, verdicts: pd.DataFrame, index: ExclusionIndex
) -> list[dict]:
    """For each kept label (kept: item_id, label): the counted proposals among those that
    made the segment's verify item (its candidates' source, StageLink.proposals) and the
    counted verdicts, yes and no."""
    proposed: dict[tuple[str, int], list[str]] = {}
    sources = StageLink.objects.filter(propose_item__study=study).values_list(
        "proposals", flat=True
    )
    rows = (
        Proposal.objects.filter(answer_id__in={pk for used in sources for pk in used})
        .order_by("answer_id")
        .values_list(
            "answer__item__members__stimulus__public_id",
            "action__action_id",
            "answer__assignment__rater_id",
            "answer__assignment__session__index",
            "answer_id",
        )
    )
    for segment, action, rater, session, answer in rows.iterator(chunk_size=20000):
        rater = pseudonym_for(rater)
        if not index.rule(rater, session):
            proposed.setdefault((str(segment), action), []).append(_who(rater, answer))
    said: dict[tuple[str, int, str], list[str]] = {}
    for v in verdicts.itertuples(index=False):
        key = (v.item_id, int(v.label), v.verdict)
        said.setdefault(key, []).append(_who(v.rater_id, v.answer_id))
    return [
        {
            "item_id": item,
            "action_id": action,
            "proposed_by": proposed.get((item, action), []),
            "yes_by": said.get((item, action, "yes"), []),
            "no_by": said.get((item, action, "no"), []),
        }
        for item, action in zip(kept["item_id"], kept["action_id"], strict=True)
    ]


def label_counts(study: Study, proposals: pd.DataFrame, labels: pd.DataFrame) -> list[dict]:
    """Per action of the vocabulary (its order): proposals on regular segments, the
    segments where it was verified and those where it was kept."""
    proposed = pd.Series([a for row in proposals["labels"] for a in row], dtype=np.int64)
    proposed = proposed.value_counts().to_dict()
    verified = labels["action_id"].value_counts().to_dict()
    kept = labels.loc[labels["kept"], "action_id"].value_counts().to_dict()
    vocabulary = vocabulary_of(study.pk)
    return [
        {
            "action_id": action.action_id,
            "action": action.name,
            "group": group.key,
            "proposed": int(proposed.get(action.action_id, 0)),
            "verified": int(verified.get(action.action_id, 0)),
            "kept": int(kept.get(action.action_id, 0)),
        }
        for group in vocabulary.groups
        for action in group.actions.all()
    ]


def set_aside(study: Study, segments: dict[str, dict]) -> list[dict]:
    """The regular segments a majority of their proposers flagged (or none gave a
    label), left to staff, with the flag counts."""
    rows = (
        StageLink.objects.filter(
            propose_item__study=study, propose_item__role=Item.Role.STIMULUS, set_aside=True
        )
        .order_by("pk")
        .values_list("propose_item__members__stimulus__public_id", "flags")
    )
    return [
        {"item_id": str(segment), **segments.get(str(segment), {}),
         "inappropriate": flags.get("inappropriate", 0), "bad_box": flags.get("bad_box", 0)}
        for segment, flags in rows
    ]  # fmt: skip


def execute(*, run) -> Computed:
    """The study's verdicts, less those its exclusions take out, through verify_labels
    with the run's keep; with the provenance of each kept label, stage 1's golden recall,
    the times per stage, the segments set aside and the other actions."""
    study = run.study
    exclusions = study_exclusions(study=study)
    index = ExclusionIndex(exclusions)
    answers = _answer_rows(study)
    verdicts = _verdict_rows(study)
    proposals = _proposal_answers(study, Item.Role.STIMULUS)
    if verdicts.empty:
        chosen = settings_of(study)
        raise ValueError(
            f"no verdicts yet: {len(proposals)} stage-1 answers on "
            f"{proposals['item_id'].nunique()} segments so far; a segment is verified once "
            f"{chosen.proposers_per_item} proposers have answered it"
        )
    rules = index.rules(answers["rater_id"], answers["session_id"])
    orphaned = on_excluded_proposals(verdicts, proposals, index)
    counted = _counted(verdicts[~orphaned], index)
    if counted.empty:
        why = sorted(
            {e.rule for e in exclusions} | ({PROPOSERS_EXCLUDED} if orphaned.any() else set())
        )
        why = ", ".join(sorted(why))
        raise ValueError(f"every one of the study's {len(verdicts)} verdicts is excluded ({why})")
    keep = run.settings_snapshot["keep"]
    result = verify_labels(counted[list(VERDICT_COLUMNS)].reset_index(drop=True), keep=keep)
    segments = _segments(study)
    place = pd.DataFrame([{"item_id": k, **segments[k]} for k in result.labels["item_id"].unique()])
    order = place.sort_values(["video_id", "keyframe", "person_id", "item_id"])
    rank = {item: i for i, item in enumerate(order["item_id"])}  # the segments' order
    labels = result.labels.assign(
        action_id=result.labels["label"].astype(np.int64), at=result.labels["item_id"].map(rank)
    )
    labels = labels.sort_values(["at", "action_id"]).reset_index(drop=True)
    kept_by = labels[labels["kept"]].groupby("item_id")["action_id"].agg(list).to_dict()
    proposals = _counted(proposals, index)
    summary = json_ready(result.summary_dict())
    summary["settings"] = dict(run.settings_snapshot)
    summary["segments"] = json_ready(
        [{**row, "kept": kept_by.get(row["item_id"], [])} for row in order.to_dict("records")]
    )
    summary["labels"] = json_ready(
        labels[["item_id", "action_id", "yes", "no", "kept"]].to_dict("records")
    )
    summary["label_counts"] = label_counts(study, proposals, labels)
    summary["provenance"] = provenance_rows(study, labels[labels["kept"]], counted, index)
    summary["recall"] = json_ready(golden_recall(study, index))
    summary["times"] = stage_times(answers[rules == ""])
    summary["set_aside"] = json_ready(set_aside(study, segments))
    summary["other_actions"] = [
        {"item_id": a.item_id, "rater_id": a.rater_id, "text": a.other_action,
         **{k: segments.get(a.item_id, {}).get(k) for k in ("video_id", "keyframe", "person_id")}}
        for a in proposals.itertuples() if a.other_action
    ]  # fmt: skip
    summary["counts"].update(
        proposals=int(sum(len(row) for row in proposals["labels"])),
        verdicts_on_excluded_proposals=int(_counted(verdicts[orphaned], index).shape[0]),
        proposal_answers=len(proposals),
        segments_with_labels=len(kept_by),
        fractional_keyframes=int(sum(not float(k or 0).is_integer() for k in order["keyframe"])),
    )
    exclusions = with_screened(exclusions, [], rows=answers, rules=rules)
    return finished(
        study=study, summary=summary, exclusions=exclusions, rules=RULES_APPLIED,
        rows=len(answers), version=VERIFY_VERSION,
    )  # fmt: skip


# --- exports ---------------------------------------------------------------------------


def _corner(value: float) -> str:
    """AVA writes corners with three decimals; more where the box has them."""
    text = f"{value:.6f}".rstrip("0")
    return text + "0" * max(0, 3 - len(text.split(".")[1]))


def _timestamp(seconds: float) -> str:
    """AVA's middle_frame_timestamp: whole seconds, four digits ("0902"); a fractional
    keyframe keeps its fraction (AVA's own evaluation reads whole seconds only)."""
    if float(seconds).is_integer():
        return f"{int(seconds):04d}"
    return f"{seconds:.6f}".rstrip("0")


def ava_lines(summary: dict) -> Iterator[str]:
    """One line per kept label, in AVA's published format: ``video_id,
    middle_frame_timestamp, x1, y1, x2, y2, action_id, person_id``, no header (the
    published ava_{train,val}_v2.x.csv have none; their first line is
    ``-5KQ66BBWC4,0902,0.077,0.151,0.283,0.811,80,1``), corners as shares of the frame
    in [0, 1], sorted by video, keyframe, person and action. Not made spreadsheet-safe:
    AVA's YouTube ids may start with "-"."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    for segment in summary.get("segments", []):
        corners = [_corner(float(c)) for c in segment["box"]]
        for action in sorted(segment["kept"]):
            writer.writerow([segment["video_id"], _timestamp(segment["keyframe"]), *corners,
                             action, segment["person_id"]])  # fmt: skip
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()


def labels_rows(summary: dict) -> Iterator[tuple]:
    names = {c["action_id"]: c["action"] for c in summary.get("label_counts", [])}
    places = {s["item_id"]: s for s in summary.get("segments", [])}
    for row in summary.get("labels", []):
        s = places.get(row["item_id"], {})
        yield (row["item_id"], s.get("video_id"), s.get("keyframe"), s.get("person_id"),
               row["action_id"], names.get(row["action_id"], ""), row["yes"], row["no"],
               row["kept"])  # fmt: skip


def _marked_verdicts(study: Study, index: ExclusionIndex) -> Iterator[tuple]:
    """verdicts.csv's rows, each with the rule that leaves it out of the run: its
    session's exclusion, else PROPOSERS_EXCLUDED for a label only excluded proposers gave
    (on_excluded_proposals), else empty."""
    verdicts = verdicts_frame(study=study)
    proposals = _proposal_answers(study, Item.Role.STIMULUS)
    orphaned = on_excluded_proposals(verdicts, proposals, index)
    rules = index.rules(verdicts["rater_id"], verdicts["session_id"])
    rules[(rules == "") & orphaned] = PROPOSERS_EXCLUDED
    for row, rule in zip(verdicts.itertuples(index=False), rules, strict=True):
        yield (*row, rule)


def export_propose_verify(*, study: Study, name: str, run) -> Export:
    slug = study.slug
    csv_type = "text/csv; charset=utf-8"
    if name == "ava.csv":
        return Export(ava_lines(run.summary), f"{slug}-ava-run{run.pk}.csv", csv_type)
    if name == "labels.csv":
        lines = csv_lines(LABELS_COLUMNS, labels_rows(run.summary))
        return Export(lines, f"{slug}-labels-run{run.pk}.csv", csv_type)
    if name == "provenance.csv":
        rows = (
            (p["item_id"], p["action_id"],
             *(SEPARATOR.join(p[k]) for k in ("proposed_by", "yes_by", "no_by")))
            for p in run.summary.get("provenance", [])
        )  # fmt: skip
        return Export(
            csv_lines(PROVENANCE_COLUMNS, rows), f"{slug}-provenance-run{run.pk}.csv", csv_type
        )
    if name in ("proposals.csv", "verdicts.csv"):
        index = ExclusionIndex(export.run_exclusions(study=study, run=run))
        if name == "proposals.csv":
            rows = proposals_rows(study=study)
            marked = ((*row, index.rule(row[0], row[-1])) for row in rows)
            header = PROPOSALS_COLUMNS
        else:
            marked = _marked_verdicts(study, index)
            header = VERDICTS_COLUMNS
        return Export(csv_lines([*header, "excluded"], marked), f"{slug}-{name}", csv_type)
    return shared_export(study=study, name=name, run=run)


PROPOSE_VERIFY_ANALYSIS = Analysis(
    key="propose_verify",
    settings_for=settings_for,
    execute=execute,
    exports=EXPORTS,
    run_exports=RUN_EXPORTS,
    export=export_propose_verify,
    figures=FIGURES,
    available=available,
    draw=draw,
    results_template="frontend/staff/results/propose_verify.html",
    results_context=results_context,
    rules=RULES_APPLIED,
    rows_noun="answers",
)
