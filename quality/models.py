"""Stored analysis runs: what was computed, with which settings and code, and the results."""

from django.db import models

from annotation.models import Study


class JobStatus(models.TextChoices):
    """The life of a job row: queued, then running, then done or failed."""

    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class AnalysisRun(models.Model):
    Status = JobStatus

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="analysis_runs")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    progress = models.FloatField(default=0.0)
    settings_snapshot = models.JSONField(default=dict)
    code_version = models.CharField(max_length=40, blank=True)
    ratings_count = models.PositiveIntegerField(default=0)
    exclusions = models.JSONField(default=list, blank=True)
    summary = models.JSONField(default=dict, blank=True)
    mos = models.JSONField(default=list, blank=True, help_text="Per-stimulus MOS rows")
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    # The PostgreSQL session (backend pid) of the worker running it, or on SQLite its
    # process id: when that is gone, so is the worker (config.run_liveness).
    runner_session = models.IntegerField(null=True, blank=True)
    requested_by = models.ForeignKey(
        "auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        get_latest_by = "created_at"

    def __str__(self) -> str:
        return f"analysis {self.pk} of {self.study.slug} ({self.status})"


class ExportJob(models.Model):
    """An export written to a file by a worker, for studies too large to stream in one
    request; the researcher downloads the finished file as often as needed."""

    Status = JobStatus

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="export_jobs")
    run = models.ForeignKey(
        AnalysisRun, null=True, blank=True, on_delete=models.CASCADE, related_name="export_jobs"
    )
    name = models.CharField(max_length=40, help_text="Which export, e.g. ratings.csv")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    file = models.FileField(upload_to="exports/", blank=True)
    size_bytes = models.BigIntegerField(default=0)
    attempts = models.PositiveSmallIntegerField(default=0)
    # The PostgreSQL session (backend pid) of the worker running it, or on SQLite its
    # process id: when that is gone, so is the worker (config.run_liveness).
    runner_session = models.IntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    requested_by = models.ForeignKey(
        "auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"export {self.name} of {self.study.slug} ({self.status})"
