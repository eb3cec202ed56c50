"""Propose-then-verify manifest rows: one person in one segment of a film (its keyframe,
the person's box and id, the film's id) and, on golden and qualification rows, the
experts' complete labels; checked at import (annotation/services/study_import_rows.py), the
segment's identity naming it among the film's other segments."""

from __future__ import annotations

import math

from annotation.designs.base import plain_int
from annotation.designs.propose_study import PROPOSE, settings_of, vocabulary_of
from annotation.models import ExpertLabel, Stimulus

MANIFEST_COLUMNS = (
    "video_id", "keyframe", "x1", "y1", "x2", "y2", "person_id", "expert_actions", "note",
)  # fmt: skip
# Rows that carry the experts' complete labels: tutorial rows are the worked examples
# the tutorial shows (the labels, and the note on why); golden and qualification rows
# are what raters are checked against.
WITH_EXPERT_LABELS = (Stimulus.Role.TUTORIAL, Stimulus.Role.GOLDEN, Stimulus.Role.QUALIFICATION)


def _corner(columns: dict, name: str) -> float:
    try:
        value = float(columns[name])
    except ValueError:
        raise ValueError(f"{name} is not a number: {columns[name]!r}") from None
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must lie in [0, 1] (a share of the frame), got {value:g}")
    return value


def _check_limits(vocabulary, expert: list[int]) -> None:
    """The experts' labels within the limits a proposer's are held to (each group's, a
    required group answered): else no proposer could give them all, and a golden or
    qualification segment would fail every one."""
    for group in vocabulary.groups:
        given = [action for action in expert if vocabulary.group_of[action] == group.key]
        if len(given) > group.limit:
            raise ValueError(
                f"expert_actions gives {len(given)} of {group.label} "
                f"({', '.join(map(str, given))}): a proposer may give at most {group.limit}"
            )
        if group.required and not given:
            raise ValueError(f"expert_actions gives none of {group.label}, which is required")


def check_manifest_extra(*, study, role: str, extra: dict) -> dict:
    """A row is one person in one segment: `keyframe` (seconds into the file), the box
    `x1, y1, x2, y2` (corners as shares of the frame's width and height), `person_id`
    and `video_id` (the video's id in exports; default the file's name without its
    suffix, filled in by store_manifest_extra); tutorial (worked example), golden and
    qualification rows give the experts' complete labels, `expert_actions` (action ids
    joined by "|"), and may say why in `note`."""
    columns = extra.get("columns", {})
    if extra.get("answers"):
        raise ValueError("propose-then-verify rows take expert_actions, not <question>_expert")
    if role == Stimulus.Role.REFERENCE:
        return {}
    if not columns.get("keyframe"):
        raise ValueError(f"a {role} row needs its keyframe (seconds into the video)")
    try:
        keyframe = float(columns["keyframe"])
    except ValueError:
        raise ValueError(f"keyframe is not a number: {columns['keyframe']!r}") from None
    if not (math.isfinite(keyframe) and keyframe >= 0):  # JSON stores no infinity
        raise ValueError("keyframe must be a time in seconds from the start, at least 0")
    missing = [name for name in ("x1", "y1", "x2", "y2") if not columns.get(name)]
    if missing:
        raise ValueError(f"a {role} row needs the person's box: {', '.join(missing)}")
    x1, y1, x2, y2 = (_corner(columns, name) for name in ("x1", "y1", "x2", "y2"))
    if not (x1 < x2 and y1 < y2):
        raise ValueError("the box needs x1 < x2 and y1 < y2")
    person = plain_int(columns.get("person_id") or "0")
    if person is None:
        raise ValueError(f"person_id must be a whole number, got {columns['person_id']!r}")
    expert = []
    if role in WITH_EXPERT_LABELS:
        text = columns.get("expert_actions", "")
        parts = [plain_int(part.strip()) for part in text.split("|") if part.strip()]
        if None in parts:
            raise ValueError(f"expert_actions must be action ids joined by '|': {text!r}")
        expert = sorted(set(parts))
        if not expert:
            raise ValueError(f"a {role} row needs the experts' labels: expert_actions")
        vocabulary = vocabulary_of(study.pk)
        if not vocabulary.actions:
            raise ValueError(
                "the study has no vocabulary yet: import one (manage.py import_vocabulary, "
                "or import_study --vocabulary) before the experts' labels"
            )
        unknown = [action for action in expert if action not in vocabulary.actions]
        if unknown:
            raise ValueError(f"expert_actions names {unknown[0]}, not in the study's vocabulary")
        _check_limits(vocabulary, expert)
    elif columns.get("expert_actions"):
        raise ValueError(f"a {role} row takes no expert_actions")
    elif columns.get("note"):
        raise ValueError(f"a {role} row takes no note (a note says why the experts labelled so)")
    segment = {
        "video_id": columns.get("video_id", ""),
        "keyframe": keyframe,
        "seconds": settings_of(study).segment_seconds,
        "box": [x1, y1, x2, y2],
        "person_id": person,
    }
    return {
        "stimulus": {"segment": segment},
        "identity": segment_identity(keyframe, (x1, y1, x2, y2), person),
        "expert": expert,
        "note": columns.get("note", ""),
    }


def segment_identity(keyframe: float, box: tuple[float, ...], person: int) -> str:
    """What tells a segment of a file from the others (its stimulus checksum is the
    file's with this appended): ``902:0.077,0.151,0.283,0.811:0``. A number is written
    short (``:g``) where that is exact, as it always was, so a manifest imported again
    names the same segments; one that the short form would round (``:g`` keeps 6
    digits: keyframes 12345.61 and 12345.64 s) is written in full, so two segments never
    share an identity."""

    def exact(value: float) -> str:
        short = f"{value:g}"
        return short if float(short) == value else repr(float(value))

    corners = ",".join(exact(corner) for corner in box)
    return f"{exact(keyframe)}:{corners}:{person}"


def store_manifest_extra(*, stimulus: Stimulus, extra: dict, dimensions: dict) -> None:
    if stimulus.segment and not stimulus.segment.get("video_id"):
        stem = stimulus.original_name.rsplit(".", 1)[0]
        stimulus.segment = {**stimulus.segment, "video_id": stem}
        Stimulus.objects.filter(pk=stimulus.pk).update(segment=stimulus.segment)
    if extra.get("expert"):
        ExpertLabel.objects.create(
            stimulus=stimulus,
            dimension=dimensions[PROPOSE],
            value=extra["expert"],
            note=extra.get("note", ""),
        )
