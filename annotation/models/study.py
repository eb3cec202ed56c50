"""A study, its protocol settings and its rating dimensions.

Every protocol number is a per-study setting whose default is the GAIA value
(docs/PROTOCOL.md); code reads it from here and nowhere else.
"""

import hashlib
import secrets
from decimal import Decimal

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q


def _design_choices() -> list[tuple[str, str]]:
    from annotation.designs import design_choices  # the designs read these models

    return design_choices()


def new_entry_token() -> str:
    return secrets.token_urlsafe(24)


class Study(models.Model):
    class State(models.TextChoices):
        DRAFT = "draft", "Draft"
        RUNNING = "running", "Running"
        PAUSED = "paused", "Paused"
        CLOSED = "closed", "Closed"

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=80, unique=True)
    # The kind of study (annotation/designs): what an item is and what an answer holds.
    design = models.CharField(max_length=32, default="slider", choices=_design_choices)
    state = models.CharField(max_length=16, choices=State.choices, default=State.DRAFT)
    instructions = models.TextField(blank=True, help_text="Shown to raters before the tutorial.")
    consent_text = models.TextField(blank=True, help_text="Raters must accept it to take part.")
    entry_token = models.CharField(
        max_length=64,
        default=new_entry_token,
        unique=True,
        help_text="Secret carried by marketplace links; without it nobody can enter the study.",
    )
    open_to_signed_in = models.BooleanField(
        default=False,
        help_text="Any signed-in rater may open the study without its link "
        "(otherwise a rater enters through the link only).",
    )

    # Sessions (PROTOCOL.md section 1, "Sessions").
    session_size = models.PositiveIntegerField(default=300, validators=[MinValueValidator(1)])
    golden_per_session = models.PositiveIntegerField(default=10)
    split_seed = models.BigIntegerField(default=0, help_text="Seed of the split into sessions.")
    rest_every = models.PositiveIntegerField(
        default=150, help_text="A rest break after this many stimuli (0: no breaks)."
    )
    rest_seconds = models.PositiveIntegerField(default=15 * 60, help_text="Minimum rest length.")
    window_size = models.PositiveSmallIntegerField(
        default=5,
        validators=[MinValueValidator(1), MaxValueValidator(50)],
        help_text="Items, the current one included, that the rater's page may answer "
        "without asking the server, so that a rater whose connection drops keeps rating; "
        "never past a rest break or the end of a session or of the qualification test. "
        "Their videos are downloaded ahead only within the server's limit "
        "(MOSAIC_RATER_AHEAD_ITEMS items, MOSAIC_RATER_AHEAD_BYTES bytes): a video past it "
        "streams when shown and needs the connection then. 1: the current item only (the "
        "next video is still preloaded).",
    )

    # Qualification.
    qualification_size = models.PositiveIntegerField(default=30)
    qualification_pass_share = models.FloatField(
        default=0.75, validators=[MinValueValidator(0.01), MaxValueValidator(1)]
    )
    qualification_tolerance_sigma = models.FloatField(
        default=1.5, validators=[MinValueValidator(0.01)]
    )
    qualification_retries = models.PositiveIntegerField(default=0)

    target_raters_per_stimulus = models.PositiveIntegerField(
        default=35, help_text="Raters wanted per video (GAIA: about 35 per dimension)"
    )
    idle_place_hours = models.PositiveSmallIntegerField(
        default=6,
        help_text="Where the design takes a set number of raters per session (questionnaire, "
        "propose-then-verify): a session without an answer for this many hours gives its "
        "place to another rater; its rater may still finish it (0: never)",
    )

    # Golden gate and quality control.
    golden_gate_plcc = models.FloatField(
        default=0.7, validators=[MinValueValidator(-1), MaxValueValidator(1)]
    )
    keep_failed_gate_sessions = models.BooleanField(
        default=False,
        help_text="Count the ratings of sessions that failed the golden gate in the analysis "
        "(GAIA kept only raters who agreed with the experts: off).",
    )
    line_click_share = models.FloatField(
        default=0.40, validators=[MinValueValidator(0.01), MaxValueValidator(1)]
    )

    # Scale.
    slider_min = models.FloatField(default=0.0)
    slider_max = models.FloatField(default=100.0)
    slider_step = models.FloatField(default=1.0)

    # Crowd marketplace and payment.
    payment_per_session = models.DecimalField(
        max_digits=8, decimal_places=2, default=Decimal("12.00"), validators=[MinValueValidator(0)]
    )
    payment_currency = models.CharField(max_length=3, default="USD")
    completion_url = models.URLField(
        blank=True,
        help_text="Where a rater who finished is sent, their completion code shown first "
        "(Prolific: the study's completion link, https://app.prolific.com/submissions/"
        "complete?cc=...). Empty: the code alone is shown.",
    )
    screenout_url = models.URLField(
        blank=True,
        help_text="Where a rater who failed the qualification test is sent, their code "
        "shown first (Prolific: the screen-out completion link). Empty: the code alone.",
    )
    min_viewport_width = models.PositiveIntegerField(default=0)
    min_viewport_height = models.PositiveIntegerField(default=0)
    drop_audio = models.BooleanField(default=True)

    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "studies"
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(slider_min__lt=F("slider_max")),
                name="study_slider_range_valid",
                violation_error_message="The slider's minimum must be below its maximum.",
            ),
            models.CheckConstraint(
                condition=Q(slider_step__gt=0),
                name="study_slider_step_pos",
                violation_error_message="The slider's step must be above 0.",
            ),
            models.CheckConstraint(
                condition=Q(qualification_pass_share__gt=0, qualification_pass_share__lte=1),
                name="study_pass_share_in_unit",
                violation_error_message="The qualification's pass share must be in (0, 1].",
            ),
            models.CheckConstraint(
                condition=Q(line_click_share__gt=0, line_click_share__lte=1),
                name="study_line_click_share_in_unit",
                violation_error_message="The line-click share must be above 0 and at most 1.",
            ),
            models.CheckConstraint(
                condition=Q(golden_gate_plcc__gte=-1, golden_gate_plcc__lte=1),
                name="study_golden_gate_in_range",
                violation_error_message="The golden gate's PLCC must be between -1 and 1.",
            ),
            models.CheckConstraint(
                condition=Q(qualification_tolerance_sigma__gt=0),
                name="study_tolerance_positive",
                violation_error_message="The qualification's tolerance must be above 0.",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def consent_version(self) -> str:
        """Names the consent text as it is now: the rater page sends it back with the
        consent, so that a text edited meanwhile is read again before it is agreed to."""
        return hashlib.sha256(self.consent_text.encode()).hexdigest()[:16]


class Dimension(models.Model):
    """One rated aspect, shown as one slider; `order` is the rating order (GAIA's syllogism)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="dimensions")
    key = models.SlugField(max_length=40)
    label = models.CharField(max_length=100)
    help_text = models.TextField(blank=True)
    anchor_low = models.CharField(max_length=60, default="Bad")
    anchor_high = models.CharField(max_length=60, default="Excellent")
    order = models.PositiveSmallIntegerField()
    # Designs that compare videos (preference): the question is about a reference video,
    # shown between the compared ones (WYD's motion and human templates).
    shows_reference = models.BooleanField(default=False)

    class Meta:
        ordering = ["study", "order"]
        constraints = [
            models.UniqueConstraint(fields=["study", "key"], name="dimension_key_unique"),
            models.UniqueConstraint(fields=["study", "order"], name="dimension_order_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.study.slug}:{self.key}"


GAIA_DIMENSIONS: tuple[tuple[str, str, str], ...] = (
    (
        "subject",
        "Subject quality",
        "How well is the acting subject rendered: its shape, texture and anatomy?",
    ),
    (
        "completeness",
        "Action completeness",
        "Is the action recognisable, coherent and complete over time?",
    ),
    (
        "interaction",
        "Action-scene interaction",
        "Do objects and the scene respond to the action plausibly?",
    ),
)
