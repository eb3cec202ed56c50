"""Uploading one video (API or Django admin): checked by probing, deduplicated, queued."""

from __future__ import annotations

import hashlib
import logging
import tempfile
from pathlib import Path

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import IntegrityError, transaction

from annotation.designs import design_of
from annotation.designs.base import ContentVideo
from annotation.errors import Conflict, ValidationFailed
from annotation.models import Stimulus, Study
from annotation.models.stimulus import plain_suffix
from annotation.services.study_import_checks import stored_content_videos
from annotation.services.study_import_rows import LABEL_COLUMNS
from media_pipeline import ffmpeg
from media_pipeline.services.transcode_jobs import stimuli_enqueue_processing

logger = logging.getLogger(__name__)


def _local_copy(upload: UploadedFile) -> tuple[Path, str, bool]:
    """A path to the upload's bytes and their sha256; True when the path is ours to delete."""
    digest = hashlib.sha256()
    if hasattr(upload, "temporary_file_path"):
        for chunk in upload.chunks():
            digest.update(chunk)
        return Path(upload.temporary_file_path()), digest.hexdigest(), False
    suffix = f".{plain_suffix(upload.name)}"
    with tempfile.NamedTemporaryFile(suffix=suffix, delete=False) as handle:
        for chunk in upload.chunks():
            digest.update(chunk)
            handle.write(chunk)
    return Path(handle.name), digest.hexdigest(), True


def _check_content(study: Study, role: str, labels: dict[str, str]) -> None:
    """An upload names what its design needs (as a manifest row does: a compared video
    its condition and content; a slider study's experts' scores are added afterwards, in
    the admin) and may not contradict its content's videos (as an import may not): a
    condition the content has, a second best or worst; the rest may come later."""
    design = design_of(study)
    named = {key: str(labels.get(key) or "").strip() for key in LABEL_COLUMNS}
    named["expected"] = named["expected"].lower()
    try:
        design.check_manifest_row(role=role, labels=named, expert=None, dimension_keys=())
    except ValueError as exc:
        raise ValidationFailed(str(exc).replace(" row ", " video ", 1)) from None
    check_contents = design.check_contents
    if check_contents is None:
        return
    mine = ContentVideo(
        0,
        role,
        *(str(labels.get(key) or "").strip() for key in ("content", "condition", "expected")),
    )
    errors = check_contents([*stored_content_videos(study), mine], whole=False)
    if errors:
        raise ValidationFailed("; ".join(reason for _, reason in errors))


def stimulus_upload(
    *,
    study: Study,
    upload: UploadedFile,
    role: str = Stimulus.Role.STIMULUS,
    labels: dict[str, str] | None = None,
) -> Stimulus:
    """Store an uploaded video as a new stimulus and queue its processing.

    Refused, with nothing stored: a file over MOSAIC_MAX_UPLOAD_BYTES, a file that is not
    a video by its content (whatever its name says), a video of more pixels to transcode
    than MOSAIC_MAX_DECODED_PIXELS, an unknown role; a file the study
    already has (same sha256) is a conflict naming the existing stimulus.
    """
    if upload.size > settings.MOSAIC_MAX_UPLOAD_BYTES:
        raise ValidationFailed(
            f"{upload.name} is {upload.size:,} bytes; the limit is "
            f"{settings.MOSAIC_MAX_UPLOAD_BYTES:,}"
        )
    if role not in Stimulus.Role.values:
        raise ValidationFailed(f"unknown role {role!r} (one of {', '.join(Stimulus.Role.values)})")
    _check_content(study, role, labels or {})  # at once, before copying and probing
    path, checksum, ours = _local_copy(upload)
    try:
        existing = Stimulus.objects.filter(study=study, checksum=checksum).first()
        if existing is not None:
            raise Conflict(
                f"{upload.name} is already in this study",
                extra={"stimulus": str(existing.public_id)},
            )
        try:
            source = ffmpeg.probe(path)
            ffmpeg.check_work(source, name=path.name, max_pixels=settings.MOSAIC_MAX_DECODED_PIXELS)
        except ffmpeg.MediaError as exc:
            raise ValidationFailed(str(exc).replace(path.name, upload.name)) from None
        stimulus = Stimulus(
            study=study,
            role=role,
            checksum=checksum,
            original_name=upload.name[:255],
            **{k: str(v) for k, v in (labels or {}).items() if k in LABEL_COLUMNS},
        )
        upload.seek(0)
        stimulus.source_file.save(f"upload.{plain_suffix(upload.name)}", upload, save=False)
        try:
            with transaction.atomic():
                # checked again under the study's lock: two uploads of one content at the
                # same moment (one condition twice) cannot both pass
                Study.objects.select_for_update().filter(pk=study.pk).first()
                _check_content(study, role, labels or {})
                stimulus.save()
                transaction.on_commit(lambda: stimuli_enqueue_processing([stimulus.pk]))
        except IntegrityError:
            # the same file uploaded at the same moment: the other request stored it
            stimulus.source_file.delete(save=False)
            raise Conflict(f"{upload.name} is already in this study") from None
        except ValidationFailed:
            stimulus.source_file.delete(save=False)
            raise
    finally:
        if ours:
            path.unlink(missing_ok=True)
    logger.info("uploaded %s into %s as stimulus %s", upload.name, study.slug, stimulus.pk)
    return stimulus
