"""Answers: one envelope per answer for every design, the slider's typed value rows
(Rating), and payments."""

import uuid

from django.db import models
from django.db.models import Q

from annotation.models.item import Item
from annotation.models.session import Assignment, Participation
from annotation.models.stimulus import Stimulus
from annotation.models.study import Dimension


class Answer(models.Model):
    """One submission of one rater about one item, in a session (`assignment`) or in the
    qualification test (`attempt`). Its values are typed rows of the study's design (a
    Rating per dimension for sliders, a PreferenceJudgment, ...); `values_digest` is a
    hash of them, so that a repeat of the same client_uuid is recognised whatever the
    design: the same values are a repeat, other values a conflict."""

    client_uuid = models.UUIDField(
        default=uuid.uuid4, unique=True, help_text="Chosen by the browser; makes resending harmless"
    )
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="answers")
    participation = models.ForeignKey(
        Participation, on_delete=models.CASCADE, related_name="answers"
    )
    # No index of its own: the unique (assignment, item) index serves its lookups.
    assignment = models.ForeignKey(
        Assignment,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="answers",
        db_index=False,
    )
    attempt = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="The qualification attempt (qualification answers only)"
    )
    # The videos in the order the rater saw them (left to right): the layout is stored so
    # that position bias is measured, not guessed.
    layout = models.JSONField(default=list, blank=True)
    values_digest = models.CharField(max_length=64)
    shown_at = models.DateTimeField(null=True, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    received_at = models.DateTimeField(auto_now_add=True)
    watch_time_ms = models.PositiveIntegerField(default=0)
    plays = models.PositiveSmallIntegerField(default=0)
    stalls = models.PositiveSmallIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["assignment", "item"],
                condition=Q(assignment__isnull=False),
                name="answer_once_per_session_item",
            ),
            models.UniqueConstraint(
                fields=["participation", "attempt", "item"],
                condition=Q(attempt__isnull=False),
                name="answer_once_per_qualification_item",
            ),
            models.CheckConstraint(
                condition=(Q(assignment__isnull=False) & Q(attempt__isnull=True))
                | (Q(assignment__isnull=True) & Q(attempt__isnull=False)),
                name="answer_in_a_session_or_the_qualification",
            ),
        ]

    def __str__(self) -> str:
        return f"answer {self.client_uuid}"


class Rating(models.Model):
    """One slider value: a rater's score of one video on one dimension."""

    # Neither foreign key has an index of its own: the unique (answer, dimension) and the
    # (stimulus, dimension) indexes serve their lookups (one index fewer per row written).
    answer = models.ForeignKey(
        Answer, on_delete=models.CASCADE, related_name="ratings", db_index=False
    )
    stimulus = models.ForeignKey(
        Stimulus, on_delete=models.PROTECT, related_name="ratings", db_index=False
    )
    dimension = models.ForeignKey(Dimension, on_delete=models.PROTECT, related_name="ratings")
    score = models.FloatField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["answer", "dimension"], name="rating_once_per_answer"),
        ]
        indexes = [models.Index(fields=["stimulus", "dimension"])]

    def __str__(self) -> str:
        return f"{self.answer_id}:{self.stimulus_id}:{self.dimension_id}={self.score}"


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
    # When an approved payment went into a pay-out file (annotation.services.payouts):
    # once only, so that nobody is paid twice.
    paid_out_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(amount__gte=0), name="payment_nonneg")]


class PlaybackReport(models.Model):
    """A video the rater's browser could not play, taken out of what the rater is asked
    (annotation.services.rater_flow.playback_problem_report): the session item, or the
    qualification test's item of an attempt, with the browser's error, for the team to
    look at. Nothing was answered, so nothing is lost. The report outlives the video:
    deleting it to upload it again (docs/admins.md) leaves ``item`` empty and ``videos``
    naming it."""

    participation = models.ForeignKey(
        Participation, on_delete=models.CASCADE, related_name="playback_reports"
    )
    item = models.ForeignKey(
        Item, null=True, blank=True, on_delete=models.SET_NULL, related_name="playback_reports"
    )
    videos = models.CharField(
        max_length=500,
        blank=True,
        help_text="The item's videos (their file names) when reported, kept if they are deleted",
    )
    # the session it was skipped in; null in the qualification test (then: its attempt)
    assignment = models.ForeignKey(
        Assignment, null=True, blank=True, on_delete=models.CASCADE, related_name="playback_reports"
    )
    attempt = models.PositiveSmallIntegerField(null=True, blank=True)
    detail = models.CharField(max_length=300, blank=True, help_text="The browser's error")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["assignment", "item"], name="playback_report_once_a_session"
            ),
            models.UniqueConstraint(
                fields=["participation", "attempt", "item"],
                condition=Q(assignment__isnull=True),
                name="playback_report_once_an_attempt",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.item} not playable for {self.participation}"
