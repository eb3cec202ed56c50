from django.contrib import admin

from media_pipeline.models import MetricScore, ProcessingJob


@admin.register(ProcessingJob)
class ProcessingJobAdmin(admin.ModelAdmin):
    list_display = ("stimulus", "kind", "status", "progress", "attempts", "error", "finished_at")
    list_filter = ("kind", "status", "stimulus__study")
    search_fields = ("stimulus__original_name", "error")
    raw_id_fields = ("stimulus",)


@admin.register(MetricScore)
class MetricScoreAdmin(admin.ModelAdmin):
    list_display = ("stimulus", "metric", "version", "value", "device", "runtime_s")
    list_filter = ("metric", "device")
    raw_id_fields = ("stimulus",)
