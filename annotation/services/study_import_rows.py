"""Reading a study manifest (annotation.services.study_import): its header's columns,
and each row checked alone into a ManifestRow (the file probed, its labels, expert
scores, tutorial fields and the design's own columns). Nothing is stored here.
"""

from __future__ import annotations

import functools
import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from annotation.designs import design_of
from annotation.designs.base import refuse_nul
from annotation.models import Stimulus, Study, TutorialPair
from annotation.models.stimulus import sigma_problem
from media_pipeline import ffmpeg

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


def _parse_number(raw: str, *, column: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{column} is not a number: {raw!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"{column} is not a finite number: {raw!r}")
    return value


def check_header(
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
        elif not column:  # "path,role," : the spreadsheet's empty last column
            errors.append((1, "a column without a name (a comma at the end of the header?)"))
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


def parse_row(
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
    try:
        found = path.is_file()
    except OSError as exc:  # a name too long for the file system, ...
        shown = path_text if len(path_text) <= 80 else path_text[:80] + "..."
        raise ValueError(f"cannot read {shown}: {exc.strerror}") from None
    if not found:
        raise ValueError(
            f"{path_text} is a folder, not a video"
            if path.is_dir()
            else f"file not found: {path_text}"
        )
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
        if problem := sigma_problem(sigma, study):
            raise ValueError(f"{key}_sigma {problem}")
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
                f"tutorial_dimension {tutorial['tutorial_dimension']!r} is not a dimension "
                f"of the study ({', '.join(dimension_keys)})"
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
        "labels": labels,
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
    """ffmpeg.sha256_file, read once per file and import however many rows name it."""
    stat = path.stat()
    return _sha256_cached(str(path.resolve()), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=4096)
def _sha256_cached(path: str, size: int, mtime_ns: int) -> str:
    return ffmpeg.sha256_file(Path(path))
