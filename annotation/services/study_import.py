"""Importing a study's videos from a CSV manifest: validated whole, then stored whole.

Manifest columns (header row required, comma-separated, UTF-8):

- `path` (required): the video file, absolute or relative to the manifest's folder;
- `role` (required): stimulus, golden, qualification, tutorial or reference;
- `prompt`, `action`, `action_class`, `action_subclass`, `source_model`: content labels;
- `condition`, `content`: in designs that compare videos (preference), the condition a
  video shows (its generating model) and the content the videos of several conditions
  share (a prompt or reference id); a `reference` row is a content's reference video;
- `expected` (best or worst): a golden or qualification video's known place among the
  videos of its content, in designs that compare videos;
- `<dimension>_mean`, `<dimension>_sigma` for each dimension key of the study: expert
  scores, required for golden and qualification rows of slider studies;
- tutorial rows: `tutorial_dimension`, `tutorial_pair` (a label shared by the two
  videos of a pair), `tutorial_kind` (generated or real), `caption`, `explanation`;
- a design's own columns (`Design.manifest_columns`), checked by the design:
  questionnaire studies take `questions`, the keys of the questions that apply to the
  video joined by `|` (empty: all), `<question>_expert`, the experts' answer (a number,
  a level or `invalid`, tags joined by `|`, a text) of an exemplar (tutorial), golden or
  qualification video, and `note`, why the experts answered so; propose-then-verify
  studies take a segment of a longer video per row (`video_id`, `keyframe`, `x1`, `y1`,
  `x2`, `y2`, `person_id`, and `expert_actions` on golden and qualification rows): several
  rows may name one file, which is stored once.

Re-importing skips files whose checksum the study already has; a new tutorial pair may
use such a file as one of its halves. A manifest with any bad row (including a repeated
column, a row with more fields than the header, a value longer than its field or
holding a NUL character) imports nothing and reports every bad row with its line number.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.db import transaction

from annotation.designs import design_of
from annotation.designs.base import ContentVideo, refuse_nul
from annotation.errors import ImportFailed
from annotation.models import Dimension, ExpertScore, Stimulus, Study, TutorialPair
from media_pipeline import ffmpeg

logger = logging.getLogger(__name__)

LABEL_COLUMNS = (
    "prompt",
    "action",
    "action_class",
    "action_subclass",
    "source_model",
    "condition",
    "content",
    "expected",
)
TUTORIAL_COLUMNS = (
    "tutorial_dimension",
    "tutorial_pair",
    "tutorial_kind",
    "caption",
    "explanation",
)
KNOWN_COLUMNS = {"path", "role", *LABEL_COLUMNS, *TUTORIAL_COLUMNS}


@dataclass(frozen=True)
class ManifestRow:
    line: int
    path: Path
    role: str
    checksum: str
    labels: dict[str, str]
    tutorial: dict[str, str]
    expert: dict[str, tuple[float, float]]  # dimension key -> (mean, sigma)
    # The design's own columns, checked by it (questionnaire: applicable questions,
    # the experts' answers and their note): "stimulus" holds fields of the new video.
    extra: dict = field(default_factory=dict)
    # The file's own sha256 where `checksum` names a part of it (a segment).
    file_checksum: str = ""


@dataclass
class ImportReport:
    created: list[int] = field(default_factory=list)  # stimulus ids
    skipped: list[tuple[int, str]] = field(default_factory=list)  # (line, reason)
    tutorial_pairs: int = 0


def sha256_file(path: Path, *, chunk_size: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(chunk_size):
            digest.update(chunk)
    return digest.hexdigest()


def _parse_number(raw: str, *, column: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{column} is not a number: {raw!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"{column} is not a finite number: {raw!r}")
    return value


def _check_header(
    header: list[str], dimension_keys: set[str], own: tuple[str, ...] = ()
) -> list[tuple[int, str]]:
    separator = next((sep for sep in ";\t|" if len(header) == 1 and sep in header[0]), None)
    if separator is not None:  # a spreadsheet's export in a comma-decimal locale, say
        shown = {"\t": "tabs"}.get(separator, f"'{separator}'")
        return [
            (
                1,
                f"the header is one column, {header[0][:60]!r}: the manifest must be "
                f"separated by commas, and this one seems separated by {shown} (in a "
                "spreadsheet, save it as CSV UTF-8, comma-delimited)",
            )
        ]
    errors = []
    for column in ("path", "role"):
        if column not in header:
            errors.append((1, f"missing required column '{column}'"))
    repeated = sorted({column for column in header if header.count(column) > 1})
    for column in repeated:
        errors.append((1, f"column '{column}' appears {header.count(column)} times"))
    for column in header:
        if column in KNOWN_COLUMNS or column in own:
            continue
        stem, _, suffix = column.rpartition("_")
        if suffix in ("mean", "sigma", "expert"):
            if not dimension_keys:
                errors.append(
                    (
                        1,
                        f"column '{column}' names question '{stem}', but the study asks no "
                        "question yet: give its question set with the import (--questions "
                        "FILE) or import it first (manage.py import_questions SLUG vga-bench)",
                    )
                )
            elif stem not in dimension_keys:
                errors.append(
                    (
                        1,
                        f"unknown dimension '{stem}' in column '{column}' "
                        f"(the study's dimensions: {', '.join(sorted(dimension_keys))})",
                    )
                )
        else:
            errors.append((1, f"unknown column '{column}'"))
    return errors


def _max_length(model: type, field: str) -> int | None:
    return model._meta.get_field(field).max_length


# Longest value each column may have: the model field it is stored in.
MAX_LENGTHS: dict[str, int | None] = {
    **{column: _max_length(Stimulus, column) for column in LABEL_COLUMNS},
    "tutorial_pair": _max_length(TutorialPair, "label"),
}


def _check_lengths(values: dict[str, str]) -> None:
    for column, value in values.items():
        limit = MAX_LENGTHS.get(column)
        if limit is not None and len(value) > limit:
            raise ValueError(f"{column} is {len(value)} characters long, at most {limit} allowed")


def _parse_row(
    line: int, raw: dict[str, str], *, base_dir: Path, study: Study, dimension_keys: list[str]
) -> ManifestRow:
    if None in raw:  # csv.DictReader's key for the fields beyond the header
        fields = len(raw) - 1 + len(raw[None])
        raise ValueError(
            f"{fields} fields but the header has {len(raw) - 1} columns "
            "(quote a value that contains a comma)"
        )
    if None in raw.values():  # csv.DictReader's value for the fields a short row lacks
        fields = sum(value is not None for value in raw.values())
        raise ValueError(
            f"{fields} fields but the header has {len(raw)} columns (a missing field is not "
            "an empty one: end the row with a comma for each empty one)"
        )
    for column, value in raw.items():
        refuse_nul(value or "", what=column, error=ValueError)
    path_text = (raw.get("path") or "").strip()
    if not path_text:
        raise ValueError("empty path")
    path = Path(path_text)
    if not path.is_absolute():
        path = base_dir / path
    if not path.is_file():
        raise ValueError(f"file not found: {path_text}")
    try:  # as an upload is checked: an empty file, a still, audio only, a cut-off video
        source = ffmpeg.probe(path)
    except ffmpeg.MediaError as exc:
        raise ValueError(str(exc)) from None
    name_limit = _max_length(Stimulus, "original_name")
    if len(path.name) > name_limit:
        raise ValueError(f"the file name is longer than {name_limit} characters")
    role = (raw.get("role") or "").strip().lower()
    if role not in Stimulus.Role.values:
        raise ValueError(f"unknown role {role!r} (one of {', '.join(Stimulus.Role.values)})")

    expert: dict[str, tuple[float, float]] = {}
    for key in dimension_keys:
        mean_raw = (raw.get(f"{key}_mean") or "").strip()
        sigma_raw = (raw.get(f"{key}_sigma") or "").strip()
        if not mean_raw and not sigma_raw:
            continue
        if not mean_raw or not sigma_raw:
            raise ValueError(f"expert score for '{key}' needs both {key}_mean and {key}_sigma")
        mean = _parse_number(mean_raw, column=f"{key}_mean")
        sigma = _parse_number(sigma_raw, column=f"{key}_sigma")
        if not study.slider_min <= mean <= study.slider_max:
            raise ValueError(
                f"{key}_mean {mean} is outside the scale [{study.slider_min}, {study.slider_max}]"
            )
        if sigma <= 0:
            raise ValueError(f"{key}_sigma must be positive, got {sigma}")
        expert[key] = (mean, sigma)
    labels = {column: (raw.get(column) or "").strip() for column in LABEL_COLUMNS}
    labels["expected"] = labels["expected"].lower()
    if labels["expected"] not in ("", "best", "worst"):
        raise ValueError(f"expected must be 'best' or 'worst', got {labels['expected']!r}")
    design_of(study).check_manifest_row(
        role=role, labels=labels, expert=expert, dimension_keys=dimension_keys
    )

    tutorial = {column: (raw.get(column) or "").strip() for column in TUTORIAL_COLUMNS}
    # A design with its own tutorial (questionnaire exemplars) takes no tutorial pairs.
    if role == Stimulus.Role.TUTORIAL and design_of(study).tutorial_payload is None:
        if tutorial["tutorial_dimension"] not in dimension_keys:
            raise ValueError(
                f"tutorial_dimension {tutorial['tutorial_dimension']!r} is not a dimension"
            )
        if not tutorial["tutorial_pair"]:
            raise ValueError("a tutorial row needs a tutorial_pair label")
        if tutorial["tutorial_kind"] not in ("generated", "real"):
            raise ValueError("tutorial_kind must be 'generated' or 'real'")
    _check_lengths({**labels, **tutorial})
    design = design_of(study)
    raw_extra = {
        "columns": {column: (raw.get(column) or "").strip() for column in design.manifest_columns},
        "answers": {
            key: (raw.get(f"{key}_expert") or "").strip()
            for key in dimension_keys
            if (raw.get(f"{key}_expert") or "").strip()
        },
    }
    extra = design.check_manifest_extra(study=study, role=role, extra=raw_extra)
    # as an upload is checked, for the part of the file that is transcoded
    segment = extra.get("stimulus", {}).get("segment") or {}
    try:
        ffmpeg.check_work(
            source,
            name=path.name,
            max_pixels=settings.MOSAIC_MAX_DECODED_PIXELS,
            seconds=segment.get("seconds"),
        )
    except ffmpeg.MediaError as exc:
        raise ValueError(str(exc)) from None
    checksum = file_checksum = _file_sha256(path)
    if extra.get("identity"):  # a part of the file: named by the file and the part
        checksum = hashlib.sha256(f"{file_checksum}:{extra['identity']}".encode()).hexdigest()
    return ManifestRow(
        line, path, role, checksum, labels, tutorial, expert, extra, file_checksum=file_checksum
    )


def _file_sha256(path: Path) -> str:
    """sha256_file, read once per file and import however many rows name it."""
    stat = path.stat()
    return _sha256_cached(str(path.resolve()), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=4096)
def _sha256_cached(path: str, size: int, mtime_ns: int) -> str:
    return sha256_file(Path(path))


def _check_tutorial_pairs(rows: list[ManifestRow]) -> list[tuple[int, str]]:
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


def _tutorial_pairs_to_create(
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
            continue  # incomplete: reported by _check_tutorial_pairs
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


def _content_videos(
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


def study_import_manifest(
    *,
    study: Study,
    manifest: Path,
    on_commit: Callable[[list[int]], None] | None = None,
) -> ImportReport:
    """Validate every row, then store all of it in one transaction, or nothing.

    `on_commit` receives the new stimulus ids once the transaction committed (the
    media pipeline enqueues their processing there).
    """
    manifest = Path(manifest)
    dimensions = {d.key: d for d in Dimension.objects.filter(study=study)}
    dimension_keys = list(dimensions)
    try:
        with open(manifest, newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            header = [column.strip() for column in (reader.fieldnames or [])]
            reader.fieldnames = header
            own = design_of(study).manifest_columns
            errors = (
                _check_header(header, set(dimension_keys), own) if header else [(1, "empty file")]
            )
            if errors:
                raise ImportFailed(errors)
            rows: list[ManifestRow] = []
            for raw in reader:
                line = reader.line_num
                try:
                    rows.append(
                        _parse_row(
                            line,
                            raw,
                            base_dir=manifest.parent,
                            study=study,
                            dimension_keys=dimension_keys,
                        )
                    )
                except ValueError as exc:
                    errors.append((line, str(exc)))
    except UnicodeDecodeError:
        raise ImportFailed([(1, "the manifest is not UTF-8 text")]) from None
    except csv.Error as exc:  # a value past the csv module's field limit (128 kB)
        # line_num counts the lines read whole: the error is in the next one
        raise ImportFailed([(reader.line_num + 1, f"not readable as CSV: {exc}")]) from None

    first_line_of: dict[str, int] = {}
    for row in rows:
        if row.checksum in first_line_of:
            errors.append(
                (row.line, f"duplicate of line {first_line_of[row.checksum]} (same file content)")
            )
        else:
            first_line_of[row.checksum] = row.line
    errors.extend(_check_tutorial_pairs(rows))
    stored = {
        stimulus.checksum: stimulus
        for stimulus in Stimulus.objects.filter(study=study, checksum__in=first_line_of)
    }
    new_pairs, pair_errors = _tutorial_pairs_to_create(rows, study=study, stored=stored)
    errors.extend(pair_errors)
    check_contents = design_of(study).check_contents
    if not errors and check_contents is not None:
        errors.extend(check_contents(_content_videos(study, rows, stored)))
    if errors:
        errors.sort()
        logger.warning("import into %s refused: %s", study.slug, errors)
        raise ImportFailed(errors)

    report = ImportReport()
    written: list[str] = []
    files: dict[str, str] = {}  # file sha256 -> its storage name (a file named by many rows)
    try:
        with transaction.atomic():
            for row in rows:
                if row.checksum in stored:
                    report.skipped.append((row.line, "already imported (same checksum)"))
                    continue
                stimulus = Stimulus(
                    study=study,
                    role=row.role,
                    checksum=row.checksum,
                    original_name=row.path.name,
                    **row.extra.get("stimulus", {}),
                    **row.labels,
                )
                if row.file_checksum in files:
                    stimulus.source_file.name = files[row.file_checksum]
                else:
                    with open(row.path, "rb") as handle:
                        stimulus.source_file.save(row.path.name, File(handle), save=False)
                    written.append(stimulus.source_file.name)
                    files[row.file_checksum] = stimulus.source_file.name
                stimulus.save()
                ExpertScore.objects.bulk_create(
                    ExpertScore(stimulus=stimulus, dimension=dimensions[key], mean=m, sigma=s)
                    for key, (m, s) in row.expert.items()
                )
                design_of(study).store_manifest_extra(
                    stimulus=stimulus, extra=row.extra, dimensions=dimensions
                )
                report.created.append(stimulus.pk)
                stored[row.checksum] = stimulus
            for label, members in new_pairs.items():
                first = min(members.values(), key=lambda row: row.line)
                TutorialPair.objects.create(
                    study=study,
                    label=label,
                    dimension=dimensions[first.tutorial["tutorial_dimension"]],
                    generated=stored[members["generated"].checksum],
                    real=stored[members["real"].checksum],
                    caption=first.tutorial["caption"],
                    explanation=first.tutorial["explanation"],
                    order=TutorialPair.objects.filter(study=study).count(),
                )
                report.tutorial_pairs += 1
    except BaseException:
        storage = Stimulus._meta.get_field("source_file").storage
        for name in written:
            storage.delete(name)
        raise
    # Registered after the block, so that a callback that breaks (in-process, it runs
    # the transcodes here and now; a Ctrl-C) cannot delete the files of what committed.
    if on_commit is not None and report.created:
        created = list(report.created)
        transaction.on_commit(lambda: on_commit(created))
    logger.info(
        "imported %d stimuli into %s (%d skipped)",
        len(report.created),
        study.slug,
        len(report.skipped),
    )
    return report
