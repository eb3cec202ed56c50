"""Checks of a study manifest's rows together and against the study
(annotation.services.study_import): its tutorial pairs complete, and new or the same as
the study's, and the contents' videos as the design's content check sees them.
"""

from __future__ import annotations

from annotation.designs.base import ContentVideo
from annotation.models import Stimulus, Study, TutorialPair
from annotation.services.study_import_rows import ManifestRow


def check_tutorial_pairs(rows: list[ManifestRow]) -> list[tuple[int, str]]:
    pairs: dict[str, list[ManifestRow]] = {}
    for row in rows:
        if row.role == Stimulus.Role.TUTORIAL and row.tutorial["tutorial_pair"]:
            pairs.setdefault(row.tutorial["tutorial_pair"], []).append(row)
    errors = []
    for label, members in pairs.items():
        kinds = sorted(row.tutorial["tutorial_kind"] for row in members)
        if kinds != ["generated", "real"]:
            errors.append(
                (members[0].line, f"tutorial pair {label!r} needs one generated and one real video")
            )
        elif members[0].tutorial["tutorial_dimension"] != members[1].tutorial["tutorial_dimension"]:
            errors.append((members[1].line, f"tutorial pair {label!r} mixes dimensions"))
    return errors


def tutorial_pairs_to_create(
    rows: list[ManifestRow], *, study: Study, stored: dict[str, Stimulus]
) -> tuple[dict[str, dict[str, ManifestRow]], list[tuple[int, str]]]:
    """The manifest's complete tutorial pairs that the study does not have yet.

    A half may be a video the study already has (a re-import adding a pair that reuses
    a video): the pair is made with the stored stimulus, which must be a tutorial video.
    A label the study already uses must name the same two videos.
    """
    pairs: dict[str, dict[str, ManifestRow]] = {}
    for row in rows:
        if row.role == Stimulus.Role.TUTORIAL and row.tutorial["tutorial_pair"]:
            pairs.setdefault(row.tutorial["tutorial_pair"], {})[row.tutorial["tutorial_kind"]] = row
    existing = {
        pair.label: pair
        for pair in TutorialPair.objects.filter(study=study, label__in=pairs).select_related(
            "generated", "real"
        )
    }
    to_create: dict[str, dict[str, ManifestRow]] = {}
    errors = []
    for label, members in pairs.items():
        if set(members) != {"generated", "real"}:
            continue  # incomplete: reported by check_tutorial_pairs
        first_line = min(row.line for row in members.values())
        pair = existing.get(label)
        if pair is not None:
            if (pair.generated.checksum, pair.real.checksum) != (
                members["generated"].checksum,
                members["real"].checksum,
            ):
                errors.append(
                    (
                        first_line,
                        f"the study already has a tutorial pair {label!r} of other videos "
                        "(give this pair another label)",
                    )
                )
            continue  # imported before
        for row in members.values():
            known = stored.get(row.checksum)
            if known is not None and known.role != Stimulus.Role.TUTORIAL:
                errors.append(
                    (row.line, f"the study already has this file as a {known.role} video")
                )
        to_create[label] = members
    return to_create, errors


def stored_content_videos(study: Study) -> list[ContentVideo]:
    """The videos of the study's contents, as the design's content check sees them."""
    return [
        ContentVideo(None, role, content, condition, expected)
        for role, content, condition, expected in Stimulus.objects.filter(study=study)
        .exclude(content="")
        .values_list("role", "content", "condition", "expected")
    ]


def content_videos(
    study: Study, rows: list[ManifestRow], stored: dict[str, Stimulus]
) -> list[ContentVideo]:
    """The contents' videos after this import: the study's and the manifest's new ones."""
    videos = stored_content_videos(study)
    videos += [
        ContentVideo(
            row.line,
            row.role,
            row.labels["content"],
            row.labels["condition"],
            row.labels["expected"],
        )  # fmt: skip
        for row in rows
        if row.checksum not in stored
    ]
    return videos
