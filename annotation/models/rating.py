"""Answers: ratings in sessions, qualification answers, and payments."""

from django.db import models
from django.db.models import Q

from annotation.models.session import Assignment, Participation
from annotation.models.stimulus import Stimulus
from annotation.models.study import Dimension


class RatingTelemetry(models.Model):
    """Telemetry shared by an answer's per-dimension rows."""

    client_uuid = models.UUIDField(help_text="Chosen by the browser; makes resending harmless")
    shown_at = models.DateTimeField(null=True, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    received_at = models.DateTimeField(auto_now_add=True)
    watch_time_ms = models.PositiveIntegerField(default=0)
    plays = models.PositiveSmallIntegerField(default=0)
    stalls = models.PositiveSmallIntegerField(default=0)

    class Meta:
        abstract = True


class Rating(RatingTelemetry):
    """One slider value: a rater's score of one stimulus on one dimension in a session."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="ratings")
    stimulus = models.ForeignKey(Stimulus, on_delete=models.PROTECT, related_name="ratings")
    dimension = models.ForeignKey(Dimension, on_delete=models.PROTECT, related_name="ratings")
    score = models.FloatField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["client_uuid", "dimension"], name="rating_client_uuid_unique"
            ),
            models.UniqueConstraint(
                fields=["assignment", "stimulus", "dimension"], name="rating_once_per_item"
            ),
        ]
        indexes = [models.Index(fields=["stimulus", "dimension"])]

    def __str__(self) -> str:
        return f"{self.assignment_id}:{self.stimulus_id}:{self.dimension_id}={self.score}"


class QualificationAnswer(RatingTelemetry):
    participation = models.ForeignKey(
        Participation, on_delete=models.CASCADE, related_name="qualification_answers"
    )
    attempt = models.PositiveSmallIntegerField(default=1)
    stimulus = models.ForeignKey(Stimulus, on_delete=models.PROTECT, related_name="+")
    dimension = models.ForeignKey(Dimension, on_delete=models.PROTECT, related_name="+")
    score = models.FloatField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["client_uuid", "dimension"], name="qualification_client_uuid_unique"
            ),
            models.UniqueConstraint(
                fields=["participation", "attempt", "stimulus", "dimension"],
                name="qualification_once_per_item",
            ),
        ]


class Payment(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending approval"
        APPROVED = "approved", "Approved"
        REJECTED = "rejected", "Rejected"

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="payment")
    amount = models.DecimalField(max_digits=8, decimal_places=2)
    currency = models.CharField(max_length=3)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    decided_at = models.DateTimeField(null=True, blank=True)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(amount__gte=0), name="payment_nonneg")]
