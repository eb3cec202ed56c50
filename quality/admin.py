from django.contrib import admin

from quality.models import AnalysisRun, ExportJob


@admin.register(AnalysisRun)
class AnalysisRunAdmin(admin.ModelAdmin):
    list_display = ("study", "status", "progress", "ratings_count", "created_at", "finished_at")
    list_filter = ("study", "status")
    readonly_fields = (
        "settings_snapshot",
        "summary",
        "exclusions",
        "mos",
        "error",
        "attempts",
        "runner_session",
    )


@admin.register(ExportJob)
class ExportJobAdmin(admin.ModelAdmin):
    list_display = ("study", "name", "run", "status", "size_bytes", "created_at", "finished_at")
    list_filter = ("study", "status", "name")
    readonly_fields = (
        "file",
        "size_bytes",
        "attempts",
        "runner_session",
        "error",
        "started_at",
        "finished_at",
    )
