"""The files of a propose-then-verify study (quality/designs/propose_verify.py): the
run's kept labels in AVA's published format (ava.csv), with their votes (labels.csv) and
where each came from (provenance.csv); the raw proposals and verdicts, each row marked
with the rule that leaves it out of the run."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

from annotation.models import Item, Study
from quality import export
from quality.designs.propose_verify_data import (
    PROPOSALS_COLUMNS,
    PROPOSERS_EXCLUDED,
    VERDICTS_COLUMNS,
    on_excluded_proposals,
    proposal_answers,
    proposals_rows,
    verdicts_frame,
)
from quality.export import Export, csv_lines, raw_name, shared_export
from quality.selectors import run_through
from quality.stats.exclusions import ExclusionIndex

LABELS_COLUMNS = (
    "item_id", "video_id", "keyframe", "person_id", "action_id", "action", "yes", "no", "kept",
)  # fmt: skip
PROVENANCE_COLUMNS = ("item_id", "action_id", "proposed_by", "yes_by", "no_by")
SEPARATOR = "|"  # between the rater_id:answer_id entries of a provenance cell


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


def _marked_verdicts(study: Study, index: ExclusionIndex, through) -> Iterator[tuple]:
    """verdicts.csv's rows (received by ``through``), each with the rule that leaves it
    out of the run: its session's exclusion, else PROPOSERS_EXCLUDED for a label only
    excluded proposers gave (on_excluded_proposals), else empty."""
    verdicts = verdicts_frame(study=study, through=through)
    proposals = proposal_answers(study, Item.Role.STIMULUS, through)
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
        through = run_through(run)
        if name == "proposals.csv":
            rows = proposals_rows(study=study, through=through)
            marked = ((*row, index.rule(row[0], row[-1])) for row in rows)
            header = PROPOSALS_COLUMNS
        else:
            marked = _marked_verdicts(study, index, through)
            header = VERDICTS_COLUMNS
        return Export(
            csv_lines([*header, "excluded"], marked), raw_name(study, name, run), csv_type
        )
    return shared_export(study=study, name=name, run=run)
