"""Questionnaire labelling (VGA-Bench, PROTOCOL.md 3.2): the study's design settings, its
questions (each a Dimension with a kind and options), the experts' exemplar answers, the
raters' answers and the experts' batch audits."""

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from annotation.models.rating import Answer
from annotation.models.session import Assignment
from annotation.models.stimulus import Stimulus
from annotation.models.study import Dimension, Study


class QuestionnaireSettings(models.Model):
    """A questionnaire study's design, with VGA-Bench's numbers as defaults."""

    class Method(models.TextChoices):
        MAJORITY = "majority", "Majority vote"
        DAWID_SKENE = "dawid-skene", "Dawid-Skene (each rater's confusion matrix)"

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="questionnaire")
    raters_per_video = models.PositiveSmallIntegerField(
        default=3,
        validators=[MinValueValidator(1), MaxValueValidator(50)],
        help_text="Independent raters per video (VGA-Bench: 3); a batch rejected in its "
        "audit does not count, its videos go to other raters.",
    )
    keep_share = models.FloatField(
        default=0.5,
        validators=[MinValueValidator(0), MaxValueValidator(1)],
        help_text="A tag is kept when more than this share of a video's raters chose it "
        "(0.5: 2 of 3).",
    )
    method = models.CharField(max_length=16, choices=Method.choices, default=Method.MAJORITY)
    score_tolerance = models.FloatField(
        default=1.0,
        validators=[MinValueValidator(0)],
        help_text="Exemplars: a score agrees with the experts' within this many points.",
    )
    ordinal_adjacent = models.BooleanField(
        default=True,
        help_text="Exemplars: an ordinal level next to the experts' agrees too (otherwise "
        "only the same level).",
    )
    tags_jaccard = models.FloatField(
        default=0.5,
        validators=[MinValueValidator(0), MaxValueValidator(1)],
        help_text="Exemplars: a tag set agrees when its Jaccard index with the experts' "
        "is at least this.",
    )
    golden_pass_share = models.FloatField(
        default=0.7,
        validators=[MinValueValidator(0), MaxValueValidator(1)],
        help_text="The session's golden gate: at least this share of its golden answers "
        "agreeing with the experts'.",
    )
    audit_sample_size = models.PositiveSmallIntegerField(
        default=8,
        validators=[MinValueValidator(1)],
        help_text="Acceptance plan n: videos of a finished batch an expert checks.",
    )
    audit_acceptance_number = models.PositiveSmallIntegerField(
        default=1,
        help_text="Acceptance plan c: the batch is accepted when at most this many of the "
        "checked videos are wrong.",
    )
    source = models.CharField(
        max_length=300, blank=True, help_text="Where the question set comes from."
    )

    class Meta:
        verbose_name_plural = "questionnaire settings"

    def __str__(self) -> str:
        return f"questionnaire settings of {self.study.slug}"


class Question(models.Model):
    """What kind of answer a questionnaire dimension takes.

    - score: a number in [scale_min, scale_max] on scale_step (VGA-Bench: 0-10);
    - ordinal: one of `options`, levels ``{"value": 1, "label": ..., "description": ...}``
      in order, and "Invalid question" where `invalid_option` (an abstention, stored as
      such, never as a number);
    - tags: `options` are named tags ``{"value": "wide-shot", "label": "Wide shot"}``, one
      (single choice) or any number (`multiple`);
    - comment: free text, optional.
    """

    class Kind(models.TextChoices):
        SCORE = "score", "Score on a scale"
        ORDINAL = "ordinal", "Ordinal levels"
        TAGS = "tags", "Tag group"
        COMMENT = "comment", "Free comment"

    dimension = models.OneToOneField(Dimension, on_delete=models.CASCADE, related_name="question")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    group = models.CharField(max_length=80, blank=True, help_text="Heading the page shows it under")
    scale_min = models.FloatField(default=0.0)
    scale_max = models.FloatField(default=10.0)
    scale_step = models.FloatField(default=1.0)
    options = models.JSONField(default=list, blank=True)
    multiple = models.BooleanField(default=False, help_text="Tags: more than one may be chosen")
    invalid_option = models.BooleanField(
        default=False, help_text='Ordinal: offer "Invalid question" (an abstention)'
    )

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(scale_min__lt=models.F("scale_max")), name="question_scale_valid"
            ),
            models.CheckConstraint(condition=Q(scale_step__gt=0), name="question_step_pos"),
        ]

    def __str__(self) -> str:
        return f"{self.dimension}: {self.kind}"


class ExpertLabel(models.Model):
    """An expert's answer to one question about an exemplar (tutorial), golden or
    qualification video, in the answer's JSON form (a number, a level or "invalid", a
    list of tags, a text), with why."""

    stimulus = models.ForeignKey(Stimulus, on_delete=models.CASCADE, related_name="expert_labels")
    dimension = models.ForeignKey(Dimension, on_delete=models.CASCADE, related_name="+")
    value = models.JSONField()
    note = models.TextField(blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["stimulus", "dimension"], name="expert_label_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.stimulus} {self.dimension.key}: {self.value}"


class LabelAnswer(models.Model):
    """One rater's answer to one question about one video: `number` (a score or a
    level), `invalid` ("Invalid question"), `text` (a comment) by the question's kind;
    a tags answer's chosen tags are its LabelTag rows (none: the rater chose none)."""

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="labels")
    dimension = models.ForeignKey(Dimension, on_delete=models.PROTECT, related_name="+")
    stimulus = models.ForeignKey(Stimulus, on_delete=models.PROTECT, related_name="+")
    number = models.FloatField(null=True, blank=True)
    invalid = models.BooleanField(default=False)
    text = models.TextField(blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["answer", "dimension"], name="label_once_per_answer"),
        ]

    def __str__(self) -> str:
        return f"{self.answer_id}:{self.dimension_id}"


class LabelTag(models.Model):
    """A tag chosen in a tags answer (one row per tag: the statistics read columns)."""

    label = models.ForeignKey(LabelAnswer, on_delete=models.CASCADE, related_name="tags")
    tag = models.CharField(max_length=80)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["label", "tag"], name="label_tag_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.label_id}:{self.tag}"


class BatchAudit(models.Model):
    """An expert's audit of a finished batch (a rater's session) by the study's
    acceptance plan: `sample` is drawn once, `findings` say per sampled item whether the
    rater's answers were wrong and why; the batch is accepted when at most
    `acceptance_number` are. A rejected batch's session is excluded with the reason."""

    class Verdict(models.TextChoices):
        OPEN = "", "Being audited"
        ACCEPTED = "accepted", "Accepted"
        REJECTED = "rejected", "Rejected"

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="audit")
    auditor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    seed = models.BigIntegerField()
    sample_size = models.PositiveSmallIntegerField()
    acceptance_number = models.PositiveSmallIntegerField()
    sample = models.JSONField(default=list)  # item ids
    findings = models.JSONField(default=list, blank=True)  # [{"item", "wrong", "note"}]
    wrong = models.PositiveSmallIntegerField(default=0)
    verdict = models.CharField(max_length=8, choices=Verdict.choices, default="", blank=True)
    reason = models.TextField(blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-started_at"]

    def __str__(self) -> str:
        return f"audit of {self.assignment_id}: {self.verdict or 'open'}"
