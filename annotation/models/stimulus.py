"""Stimuli (videos) with their content labels, expert scores and tutorial pairs."""

import math
import re
import uuid
from pathlib import Path

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q

from annotation.models.study import Dimension, Study


def plain_suffix(filename: str) -> str:
    """The name's extension, lower case, where it is a plain one ("mp4", "webm"), else
    "bin". Only the extension of a source's name reaches a stored file name; a long one
    ("a." and 200 letters, or 80 CJK characters: 240 bytes) would make a name over the
    file system's 255 bytes, or Django would cut the checksum short to fit the field. A
    video is probed by its content, never by its name."""
    suffix = Path(filename).suffix[1:]
    return suffix.lower() if re.fullmatch(r"[A-Za-z0-9]{1,16}", suffix) else "bin"


def source_upload_path(instance: "Stimulus", filename: str) -> str:
    """``sources/<2 hex>/<sha256>.<plain suffix>``, whatever the source's name."""
    return f"sources/{instance.checksum[:2]}/{instance.checksum}.{plain_suffix(filename)}"


class Stimulus(models.Model):
    class Role(models.TextChoices):
        STIMULUS = "stimulus", "Stimulus"
        GOLDEN = "golden", "Golden"
        QUALIFICATION = "qualification", "Qualification"
        TUTORIAL = "tutorial", "Tutorial"
        # Shown beside the judged videos of its content (preference templates that ask
        # about a reference), never judged itself.
        REFERENCE = "reference", "Reference"

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        PROCESSING = "processing", "Processing"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="stimuli")
    # Opaque id used in every rater-facing URL: it says nothing about role or order.
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.STIMULUS)
    source_file = models.FileField(upload_to=source_upload_path, max_length=255)
    original_name = models.CharField(max_length=255, blank=True)
    checksum = models.CharField(max_length=64, help_text="sha256 of the source file")
    rendition = models.FileField(blank=True, max_length=255, help_text="Browser rendition")
    poster = models.FileField(blank=True, max_length=255)

    prompt = models.TextField(blank=True)
    action = models.CharField(max_length=120, blank=True, help_text="Action keyword")
    action_class = models.CharField(max_length=60, blank=True)
    action_subclass = models.CharField(max_length=60, blank=True)
    source_model = models.CharField(max_length=120, blank=True)
    # What designs that compare videos compare: the condition (the generating model) and
    # the content the videos of several conditions share (a prompt, a reference video).
    condition = models.CharField(max_length=120, blank=True)
    content = models.CharField(max_length=120, blank=True)
    # A golden or qualification video's known place among the videos of its content, in
    # designs that compare videos (a clean video is the best, a degraded copy the worst).
    expected = models.CharField(
        max_length=8,
        blank=True,
        choices=[("", "none"), ("best", "clearly the best"), ("worst", "clearly the worst")],
    )

    # Questionnaire studies: the keys of the questions this video is asked (its prompt
    # names them); empty: every question of the study.
    asked_questions = models.JSONField(default=list, blank=True)
    # Propose-then-verify studies: the part of a longer video this stimulus is, and the
    # person in it: {"video_id", "keyframe" (s), "seconds", "box": [x1, y1, x2, y2]
    # (corners in [0, 1] of the frame), "person_id"}; the media pipeline cuts the part.
    segment = models.JSONField(default=dict, blank=True)

    width = models.PositiveIntegerField(null=True, blank=True)
    height = models.PositiveIntegerField(null=True, blank=True)
    fps = models.FloatField(null=True, blank=True)
    frame_count = models.PositiveIntegerField(null=True, blank=True)
    duration_s = models.FloatField(null=True, blank=True)
    codec = models.CharField(max_length=40, blank=True)
    metadata = models.JSONField(default=dict, blank=True)

    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    processing_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "stimuli"
        ordering = ["study", "id"]
        constraints = [
            models.UniqueConstraint(fields=["study", "checksum"], name="stimulus_checksum_unique"),
        ]
        indexes = [
            models.Index(fields=["study", "role", "status"]),
            models.Index(fields=["study", "content", "condition"], name="stimulus_content_idx"),
        ]

    def __str__(self) -> str:
        return self.original_name or str(self.public_id)


class ExpertScore(models.Model):
    """Expert ground truth for a golden, qualification or tutorial stimulus."""

    stimulus = models.ForeignKey(Stimulus, on_delete=models.CASCADE, related_name="expert_scores")
    dimension = models.ForeignKey(Dimension, on_delete=models.CASCADE, related_name="+")
    mean = models.FloatField()
    sigma = models.FloatField(help_text="Standard deviation of the experts' scores")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["stimulus", "dimension"], name="expert_score_unique"),
            models.CheckConstraint(condition=Q(sigma__gte=0), name="expert_sigma_nonneg"),
        ]

    def __str__(self) -> str:
        return f"{self.stimulus} {self.dimension.key}: {self.mean} ± {self.sigma}"

    def clean(self) -> None:
        """The admin's form: the mean on the study's scale, the sigma one that decides
        (``sigma_problem``)."""
        study = self.stimulus.study if self.stimulus_id else None
        if study is None or self.mean is None or self.sigma is None:
            return
        errors = {}
        if not study.slider_min <= self.mean <= study.slider_max:
            errors["mean"] = f"outside the scale [{study.slider_min:g}, {study.slider_max:g}]"
        if problem := sigma_problem(self.sigma, study):
            errors["sigma"] = problem
        if errors:
            raise ValidationError(errors)


def sigma_problem(sigma: float, study) -> str | None:
    """Why an experts' standard deviation cannot decide who passes (None when it can):
    not a finite number above a millionth of the scale's width, nor beyond the width (at
    1e308 every answer passed the qualification test and the golden checks, at 1e-320
    none did)."""
    width = study.slider_max - study.slider_min
    if not math.isfinite(sigma) or not width * 1e-6 < sigma <= width:
        return (
            f"must be above {width * 1e-6:g} and at most the scale's width {width:g}, got {sigma:g}"
        )
    return None


class TutorialPair(models.Model):
    """A generated and a real video with the same caption, explained for one dimension."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="tutorial_pairs")
    dimension = models.ForeignKey(Dimension, on_delete=models.CASCADE, related_name="tutorials")
    label = models.CharField(max_length=80)
    generated = models.ForeignKey(Stimulus, on_delete=models.CASCADE, related_name="+")
    real = models.ForeignKey(Stimulus, on_delete=models.CASCADE, related_name="+")
    caption = models.TextField(blank=True)
    explanation = models.TextField(blank=True)
    order = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["dimension__order", "order", "id"]
        constraints = [
            models.UniqueConstraint(fields=["study", "label"], name="tutorial_label_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.dimension.key}: {self.label}"
