"""Adaptive collection of a single-stimulus study (issue 22): stop serving a video once
every dimension's interval is narrow enough, and the videos that stopped (settled).

The statistics are quality/stats/adaptive (the plans and the stopping rule); the review
that applies them to a study's ratings is annotation/services/adaptive.py. Every number
here is the study's setting with a documented default, read from here and nowhere else.
"""

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q

from annotation.models.stimulus import Stimulus
from annotation.models.study import Study

ADAPTIVE_DESIGN = "slider"  # the single-stimulus design is the only one adaptive so far


def parse_looks(text: str) -> tuple[int, ...]:
    """ "10,20,35" -> (10, 20, 35); ValueError when a part is not a whole number."""
    parts = [part.strip() for part in text.split(",") if part.strip()]
    return tuple(int(part) for part in parts)


class AdaptiveSettings(models.Model):
    """A study's adaptive collection: on or off, the target width and the plan."""

    class Plan(models.TextChoices):
        ANYTIME = "anytime", "Anytime-valid (betting confidence sequence)"
        GROUP_SEQUENTIAL = "group_sequential", "Group-sequential (repeated t at planned looks)"
        TWO_STAGE = "two_stage", "Two-stage (Stein: the first ratings fix how many a video needs)"

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="adaptive")
    enabled = models.BooleanField(
        default=False,
        help_text="Stop serving a video once every dimension's interval is narrow enough "
        "(single-stimulus slider studies only). Off: every video gets its sessions' ratings.",
    )
    plan = models.CharField(
        max_length=20,
        choices=Plan.choices,
        default=Plan.TWO_STAGE,
        help_text="Which interval the rule reads (docs/admins.md, 'Adaptive collection', "
        "with bench/adaptive.py's figures). Two-stage (the default): the first min_ratings "
        "ratings fix how many the video needs (Stein); about 30 % fewer ratings than the "
        "fixed design at its worst-case width on a 0-100 slider, at the nominal coverage; "
        "assumes a roughly normal mean. Group-sequential: looks at set counts, keeps its "
        "coverage, saves little. Anytime-valid: holds whenever the video stops with no "
        "assumption beyond the slider's range, at the price of wider intervals.",
    )
    target_half_width = models.FloatField(
        default=8.6,
        help_text="A video settles once every dimension's interval is at most this many "
        "scale points either side. 8.6 on a 0-100 slider: the precision GAIA's fixed design "
        "(35 ratings) reached on its most disputed videos (SD 25); narrower asks for more "
        "ratings than the fixed design spends wherever raters disagree.",
    )
    min_ratings = models.PositiveIntegerField(
        default=15,
        validators=[MinValueValidator(1)],
        help_text="No video settles on fewer kept ratings than this; the two-stage plan's "
        "first stage (its standard deviation sets the video's count).",
    )
    max_ratings = models.PositiveIntegerField(
        default=80,
        validators=[MinValueValidator(1)],
        help_text="The cap: a video settles at this many kept ratings whatever its width "
        "(the two-stage plan gives GAIA's most disputed videos up to about 80, more than "
        "twice the fixed design's 35).",
    )
    fixed_ratings = models.PositiveIntegerField(
        default=35,
        validators=[MinValueValidator(1)],
        help_text="The fixed design the saving is counted against: ratings per video (GAIA: 35).",
    )
    looks = models.CharField(
        max_length=200,
        blank=True,
        default="10,20,35",
        help_text="Group-sequential plan only: the numbers of ratings at which the interval "
        "is looked at, increasing, the first at least 2, the last at most the cap.",
    )
    alpha = models.FloatField(
        default=0.05,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="Each dimension's interval misses the video's mean with probability at "
        "most alpha (0.05: 95 % intervals), however the stop was decided.",
    )
    # Written by the review (annotation.services.adaptive), never by an admin: what the
    # monitor shows between reviews.
    reviewed_at = models.DateTimeField(null=True, blank=True, editable=False)
    review = models.JSONField(default=dict, blank=True, editable=False)

    class Meta:
        verbose_name = "adaptive collection"
        verbose_name_plural = "adaptive collection"
        constraints = [
            models.CheckConstraint(
                condition=Q(target_half_width__gt=0), name="adaptive_half_width_positive"
            ),
            models.CheckConstraint(
                condition=Q(min_ratings__gte=1, min_ratings__lte=F("max_ratings")),
                name="adaptive_min_within_cap",
            ),
            models.CheckConstraint(
                condition=Q(alpha__gt=0, alpha__lt=1), name="adaptive_alpha_in_unit"
            ),
        ]

    def __str__(self) -> str:
        return f"adaptive collection of {self.study.slug}"

    def look_counts(self) -> tuple[int, ...]:
        return parse_looks(self.looks)

    def clean(self) -> None:
        errors: dict[str, str] = {}
        if self.target_half_width is not None and not self.target_half_width > 0:
            errors["target_half_width"] = "The target half-width must be positive."
        study = getattr(self, "study", None) if self.study_id else None
        if study is not None and self.target_half_width is not None:
            half_range = (study.slider_max - study.slider_min) / 2
            if self.target_half_width >= half_range:
                errors["target_half_width"] = (
                    f"At {self.target_half_width:g} points every video would settle at its "
                    f"minimum: the slider's whole range is only +-{half_range:g}."
                )
        if (
            self.min_ratings is not None
            and self.max_ratings is not None
            and self.min_ratings > self.max_ratings
        ):
            errors["min_ratings"] = "The minimum must not exceed the cap."
        if self.alpha is not None and not 0 < self.alpha < 1:
            errors["alpha"] = "alpha must lie strictly between 0 and 1."
        two_stage = self.plan == self.Plan.TWO_STAGE
        if two_stage and self.min_ratings is not None and self.min_ratings < 2:
            errors["min_ratings"] = (
                "The two-stage plan's first stage (the minimum) needs at least 2 ratings "
                "for a standard deviation; 10 or more keeps its t quantile small."
            )
        # the form of the looks whatever the plan (written now, read when the plan changes:
        # "a,b" was kept under another plan, and refused later, never given with it)
        try:
            looks = self.look_counts()
        except ValueError:
            looks = None
            errors["looks"] = "Looks are whole numbers separated by commas, e.g. 10,20,35."
        if self.plan == self.Plan.GROUP_SEQUENTIAL and looks is not None:
            if not looks:
                errors["looks"] = "A group-sequential plan needs at least one look."
            elif looks[0] < 2 or any(b <= a for a, b in zip(looks, looks[1:], strict=False)):
                errors["looks"] = "Looks must increase, the first at least 2."
            elif self.max_ratings is not None and looks[-1] > self.max_ratings:
                errors["looks"] = f"The last look ({looks[-1]}) is past the cap."
        if self.enabled and study is not None and study.design != ADAPTIVE_DESIGN:
            errors["enabled"] = "Adaptive collection is for single-stimulus slider studies only."
        if errors:
            raise ValidationError(errors)


class SettledStimulus(models.Model):
    """A video the review stopped: it is no longer served in new sessions (nor in the
    positions of open ones that the rater's page does not hold yet). One row per video,
    made once (the unique stimulus makes a second review's insert a no-op); a settlement
    stands even if ratings counted for it are excluded later."""

    class Reason(models.TextChoices):
        PRECISE = "precise", "Every dimension narrow enough"
        PLAN_COMPLETE = "plan_complete", "The plan's last look was reached"
        CAP = "cap", "The cap was reached"

    stimulus = models.OneToOneField(Stimulus, on_delete=models.CASCADE, related_name="settled")
    reason = models.CharField(max_length=16, choices=Reason.choices)
    ratings = models.PositiveIntegerField(help_text="Kept ratings when it settled")
    half_width = models.FloatField(help_text="The widest dimension's half-width then")
    widest_dimension = models.CharField(max_length=40, blank=True)
    # {dimension key: [n, mean, lower, upper]} when it settled.
    intervals = models.JSONField(default=dict, blank=True)
    settled_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "settled stimuli"
        ordering = ["settled_at", "stimulus_id"]

    def __str__(self) -> str:
        return f"{self.stimulus_id} settled ({self.reason}, {self.ratings} ratings)"
