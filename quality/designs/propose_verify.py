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
passed the gate (unless the study keeps failed sessions), so it leans high.

The study's answers as tables: propose_verify_data; the files: propose_verify_exports;
the results page and its figures: propose_verify_page."""

from __future__ import annotations

import numpy as np
import pandas as pd

from annotation.designs.propose_study import PROPOSE, VERIFY, settings_of, vocabulary_of
from annotation.models import ExpertLabel, Item, Proposal, StageLink, Stimulus, Study
from annotation.models.session import pseudonym_for
from quality.commands.io import json_ready
from quality.designs.base import Analysis, Computed
from quality.designs.common import finished, with_screened
from quality.designs.propose_verify_data import (
    PROPOSERS_EXCLUDED,
    answer_rows,
    counted_rows,
    on_excluded_proposals,
    proposal_answers,
    segment_places,
    verdict_rows,
)
from quality.designs.propose_verify_exports import export_propose_verify
from quality.designs.propose_verify_page import FIGURES, available, draw, results_context
from quality.selectors import run_through, study_exclusions
from quality.stats.exclusions import PRE_ANALYSIS_RULES, ExclusionIndex
from quality.stats.verify import VERDICT_COLUMNS, VERIFY_VERSION, proposal_recall, verify_labels

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


def golden_recall(study: Study, index: ExclusionIndex, through) -> dict | None:
    """Stage 1's recall of the experts' labels on golden segments (proposal_recall), a
    rater's first counted answer to each received by ``through``; None without golden
    answers."""
    answers = counted_rows(proposal_answers(study, Item.Role.GOLDEN, through), index)
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
    through = run_through(run)
    answers = answer_rows(study, through)
    verdicts = verdict_rows(study, through)
    proposals = proposal_answers(study, Item.Role.STIMULUS, through)
    if verdicts.empty:
        chosen = settings_of(study)
        raise ValueError(
            f"no verdicts yet: {len(proposals)} stage-1 answers on "
            f"{proposals['item_id'].nunique()} segments so far; a segment is verified once "
            f"{chosen.proposers_per_item} proposers have answered it"
        )
    rules = index.rules(answers["rater_id"], answers["session_id"])
    orphaned = on_excluded_proposals(verdicts, proposals, index)
    counted = counted_rows(verdicts[~orphaned], index)
    if counted.empty:
        why = sorted(
            {e.rule for e in exclusions} | ({PROPOSERS_EXCLUDED} if orphaned.any() else set())
        )
        why = ", ".join(sorted(why))
        raise ValueError(f"every one of the study's {len(verdicts)} verdicts is excluded ({why})")
    keep = run.settings_snapshot["keep"]
    result = verify_labels(counted[list(VERDICT_COLUMNS)].reset_index(drop=True), keep=keep)
    segments = segment_places(study)
    place = pd.DataFrame([{"item_id": k, **segments[k]} for k in result.labels["item_id"].unique()])
    order = place.sort_values(["video_id", "keyframe", "person_id", "item_id"])
    rank = {item: i for i, item in enumerate(order["item_id"])}  # the segments' order
    labels = result.labels.assign(
        action_id=result.labels["label"].astype(np.int64), at=result.labels["item_id"].map(rank)
    )
    labels = labels.sort_values(["at", "action_id"]).reset_index(drop=True)
    kept_by = labels[labels["kept"]].groupby("item_id")["action_id"].agg(list).to_dict()
    proposals = counted_rows(proposals, index)
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
    summary["recall"] = json_ready(golden_recall(study, index, through))
    summary["times"] = stage_times(answers[rules == ""])
    summary["set_aside"] = json_ready(set_aside(study, segments))
    summary["other_actions"] = [
        {"item_id": a.item_id, "rater_id": a.rater_id, "text": a.other_action,
         **{k: segments.get(a.item_id, {}).get(k) for k in ("video_id", "keyframe", "person_id")}}
        for a in proposals.itertuples() if a.other_action
    ]  # fmt: skip
    summary["counts"].update(
        proposals=int(sum(len(row) for row in proposals["labels"])),
        verdicts_on_excluded_proposals=int(counted_rows(verdicts[orphaned], index).shape[0]),
        proposal_answers=len(proposals),
        segments_with_labels=len(kept_by),
        fractional_keyframes=int(sum(not float(k or 0).is_integer() for k in order["keyframe"])),
    )
    exclusions = with_screened(exclusions, [], rows=answers, rules=rules)
    return finished(
        study=study, summary=summary, exclusions=exclusions, rules=RULES_APPLIED,
        rows=len(answers), version=VERIFY_VERSION,
    )  # fmt: skip


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
