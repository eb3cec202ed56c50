"""Processing jobs: one row per transcode or metric scoring run of a stimulus."""

from django.db import models
from django.db.models import Q
from django.utils import timezone

from annotation.models import Stimulus


class ProcessingJob(models.Model):
    class Kind(models.TextChoices):
        TRANSCODE = "transcode", "Transcode"
        SCORE = "score", "Metric scoring"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    stimulus = models.ForeignKey(Stimulus, on_delete=models.CASCADE, related_name="jobs")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    progress = models.FloatField(default=0.0)
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)
    result = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # When the job's task should next run: when it was queued, or when its scheduled
    # retry fires. The sweep (requeue_stale_jobs) sends again only what is overdue.
    due_at = models.DateTimeField(default=timezone.now)
    # The PostgreSQL session (backend pid) of the worker running the job, or on SQLite its
    # process id: when that is gone, so is the worker, and the job may be taken over.
    runner_session = models.IntegerField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # At most one unfinished job of a kind per stimulus: enqueueing twice is harmless.
            models.UniqueConstraint(
                fields=["stimulus", "kind"],
                condition=Q(status__in=["queued", "running"]),
                name="one_open_job_per_kind",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.stimulus_id} ({self.status})"


class MetricScore(models.Model):
    """One metric's value for one video, per metric version (idempotent key)."""

    stimulus = models.ForeignKey(Stimulus, on_delete=models.CASCADE, related_name="metric_scores")
    metric = models.CharField(max_length=60)
    version = models.CharField(max_length=20)
    value = models.FloatField()
    device = models.CharField(max_length=20)
    runtime_s = models.FloatField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["stimulus", "metric", "version"], name="metric_score_unique"
            ),
        ]
