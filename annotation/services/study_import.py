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

Each row is read and checked alone in study_import_rows, the rows together and against
the study in study_import_checks; here they are stored, in one transaction.
"""

from __future__ import annotations

import csv
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.core.files import File
from django.db import transaction

from annotation.designs import design_of
from annotation.errors import ImportFailed
from annotation.models import Dimension, ExpertScore, Stimulus, Study, TutorialPair
from annotation.services.study_import_checks import (
    check_tutorial_pairs,
    content_videos,
    tutorial_pairs_to_create,
)
from annotation.services.study_import_rows import ManifestRow, check_header, parse_row

logger = logging.getLogger(__name__)


@dataclass
class ImportReport:
    created: list[int] = field(default_factory=list)  # stimulus ids
    skipped: list[tuple[int, str]] = field(default_factory=list)  # (line, reason)
    tutorial_pairs: int = 0


def _not_utf8(manifest: Path) -> tuple[int, str]:
    """The line of the manifest's first byte that is not UTF-8, and what to do."""
    data = manifest.read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        byte = data[exc.start]
        return line, f"not UTF-8 text (byte 0x{byte:02x}): save the manifest as UTF-8"
    return 1, "the manifest is not UTF-8 text"


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _row_start(line_num: int, raw: dict) -> int:
    """The line where the row just read starts, as an editor numbers it: the reader's
    ``line_num`` is where the row ends, and a quoted value (a prompt) may span lines."""
    values = [value for value in raw.values() if isinstance(value, str)]
    values += [extra for value in raw.values() if isinstance(value, list) for extra in value]
    return line_num - sum(len(_LINE_BREAK.findall(value)) for value in values)


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
    ended = 0  # the last line of the rows read whole: an unreadable row starts after it
    try:
        with open(manifest, newline="", encoding="utf-8-sig") as handle:
            # strict: a quote never closed is an error, not a prompt that swallows every
            # later row (and an import that says it succeeded)
            reader = csv.DictReader(handle, strict=True)
            header = [column.strip() for column in (reader.fieldnames or [])]
            reader.fieldnames = header
            ended = reader.line_num
            own = design_of(study).manifest_columns
            errors = (
                check_header(header, set(dimension_keys), own) if header else [(1, "empty file")]
            )
            if errors:
                raise ImportFailed(errors)
            rows: list[ManifestRow] = []
            for raw in reader:
                line = _row_start(reader.line_num, raw)
                ended = reader.line_num
                try:
                    rows.append(
                        parse_row(
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
        raise ImportFailed([_not_utf8(manifest)]) from None
    except csv.Error as exc:  # a value past the field limit (128 kB), a quote never closed
        hint = " (a quote opened in this row is never closed)" if "end of data" in str(exc) else ""
        raise ImportFailed([(ended + 1, f"not readable as CSV: {exc}{hint}")]) from None

    first_line_of: dict[str, int] = {}
    for row in rows:
        if row.checksum in first_line_of:
            errors.append(
                (row.line, f"duplicate of line {first_line_of[row.checksum]} (same file content)")
            )
        else:
            first_line_of[row.checksum] = row.line
    errors.extend(check_tutorial_pairs(rows))
    stored = {
        stimulus.checksum: stimulus
        for stimulus in Stimulus.objects.filter(study=study, checksum__in=first_line_of)
    }
    new_pairs, pair_errors = tutorial_pairs_to_create(rows, study=study, stored=stored)
    errors.extend(pair_errors)
    check_contents = design_of(study).check_contents
    if not errors and check_contents is not None:
        errors.extend(check_contents(content_videos(study, rows, stored)))
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
