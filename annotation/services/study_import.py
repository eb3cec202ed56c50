"""Importing a study's videos from a CSV manifest: validated whole, then stored whole.

Manifest columns (header row required, comma-separated, UTF-8):

- `path` (required): the video file, absolute or relative to the manifest's folder;
- `role` (required): stimulus, golden, qualification or tutorial;
- `prompt`, `action`, `action_class`, `action_subclass`, `source_model`: content labels;
- `<dimension>_mean`, `<dimension>_sigma` for each dimension key of the study: expert
  scores, required for golden and qualification rows;
- tutorial rows: `tutorial_dimension`, `tutorial_pair` (a label shared by the two
  videos of a pair), `tutorial_kind` (generated or real), `caption`, `explanation`.

Re-importing skips files whose checksum the study already has. A manifest with any
bad row imports nothing and reports every bad row with its line number.
"""

from __future__ import annotations

import csv
import hashlib
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.core.files import File
from django.db import transaction

from annotation.errors import ImportFailed
from annotation.models import Dimension, ExpertScore, Stimulus, Study, TutorialPair

logger = logging.getLogger(__name__)

LABEL_COLUMNS = ("prompt", "action", "action_class", "action_subclass", "source_model")
TUTORIAL_COLUMNS = (
    "tutorial_dimension",
    "tutorial_pair",
    "tutorial_kind",
    "caption",
    "explanation",
)
KNOWN_COLUMNS = {"path", "role", *LABEL_COLUMNS, *TUTORIAL_COLUMNS}
ROLES_WITH_EXPERT_SCORES = {Stimulus.Role.GOLDEN, Stimulus.Role.QUALIFICATION}


@dataclass(frozen=True)
class ManifestRow:
    line: int
    path: Path
    role: str
    checksum: str
    labels: dict[str, str]
    tutorial: dict[str, str]
    expert: dict[str, tuple[float, float]]  # dimension key -> (mean, sigma)


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


def _check_header(header: list[str], dimension_keys: set[str]) -> list[tuple[int, str]]:
    errors = []
    for column in ("path", "role"):
        if column not in header:
            errors.append((1, f"missing required column '{column}'"))
    for column in header:
        if column in KNOWN_COLUMNS:
            continue
        stem, _, suffix = column.rpartition("_")
        if suffix in ("mean", "sigma"):
            if stem not in dimension_keys:
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


def _parse_row(
    line: int, raw: dict[str, str], *, base_dir: Path, study: Study, dimension_keys: list[str]
) -> ManifestRow:
    path_text = (raw.get("path") or "").strip()
    if not path_text:
        raise ValueError("empty path")
    path = Path(path_text)
    if not path.is_absolute():
        path = base_dir / path
    if not path.is_file():
        raise ValueError(f"file not found: {path_text}")
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
    if role in ROLES_WITH_EXPERT_SCORES:
        missing = [key for key in dimension_keys if key not in expert]
        if missing:
            raise ValueError(f"a {role} row needs expert scores for: {', '.join(missing)}")

    tutorial = {column: (raw.get(column) or "").strip() for column in TUTORIAL_COLUMNS}
    if role == Stimulus.Role.TUTORIAL:
        if tutorial["tutorial_dimension"] not in dimension_keys:
            raise ValueError(
                f"tutorial_dimension {tutorial['tutorial_dimension']!r} is not a dimension"
            )
        if not tutorial["tutorial_pair"]:
            raise ValueError("a tutorial row needs a tutorial_pair label")
        if tutorial["tutorial_kind"] not in ("generated", "real"):
            raise ValueError("tutorial_kind must be 'generated' or 'real'")
    labels = {column: (raw.get(column) or "").strip() for column in LABEL_COLUMNS}
    return ManifestRow(line, path, role, sha256_file(path), labels, tutorial, expert)


def _check_tutorial_pairs(rows: list[ManifestRow]) -> list[tuple[int, str]]:
    pairs: dict[str, list[ManifestRow]] = {}
    for row in rows:
        if row.role == Stimulus.Role.TUTORIAL:
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
            errors = _check_header(header, set(dimension_keys)) if header else [(1, "empty file")]
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

    first_line_of: dict[str, int] = {}
    for row in rows:
        if row.checksum in first_line_of:
            errors.append(
                (row.line, f"duplicate of line {first_line_of[row.checksum]} (same file content)")
            )
        else:
            first_line_of[row.checksum] = row.line
    errors.extend(_check_tutorial_pairs(rows))
    if errors:
        errors.sort()
        logger.warning("import into %s refused: %s", study.slug, errors)
        raise ImportFailed(errors)

    report = ImportReport()
    known = set(
        Stimulus.objects.filter(study=study, checksum__in=first_line_of).values_list(
            "checksum", flat=True
        )
    )
    written: list[str] = []
    try:
        with transaction.atomic():
            pairs: dict[str, tuple[ManifestRow, dict[str, Stimulus]]] = {}
            for row in rows:
                if row.checksum in known:
                    report.skipped.append((row.line, "already imported (same checksum)"))
                    continue
                stimulus = Stimulus(
                    study=study,
                    role=row.role,
                    checksum=row.checksum,
                    original_name=row.path.name,
                    **row.labels,
                )
                with open(row.path, "rb") as handle:
                    stimulus.source_file.save(row.path.name, File(handle), save=False)
                written.append(stimulus.source_file.name)
                stimulus.save()
                ExpertScore.objects.bulk_create(
                    ExpertScore(stimulus=stimulus, dimension=dimensions[key], mean=m, sigma=s)
                    for key, (m, s) in row.expert.items()
                )
                report.created.append(stimulus.pk)
                if row.role == Stimulus.Role.TUTORIAL:
                    _, members = pairs.setdefault(row.tutorial["tutorial_pair"], (row, {}))
                    members[row.tutorial["tutorial_kind"]] = stimulus
            for label, (row, pair) in pairs.items():
                if len(pair) < 2:
                    continue  # the other half was imported before
                TutorialPair.objects.create(
                    study=study,
                    label=label,
                    dimension=dimensions[row.tutorial["tutorial_dimension"]],
                    generated=pair["generated"],
                    real=pair["real"],
                    caption=row.tutorial["caption"],
                    explanation=row.tutorial["explanation"],
                    order=TutorialPair.objects.filter(study=study).count(),
                )
                report.tutorial_pairs += 1
            if on_commit is not None and report.created:
                created = list(report.created)
                transaction.on_commit(lambda: on_commit(created))
    except BaseException:
        storage = Stimulus._meta.get_field("source_file").storage
        for name in written:
            storage.delete(name)
        raise
    logger.info(
        "imported %d stimuli into %s (%d skipped)",
        len(report.created),
        study.slug,
        len(report.skipped),
    )
    return report
