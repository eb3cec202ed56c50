from django.contrib import admin

from quality.models import AnalysisRun


@admin.register(AnalysisRun)
class AnalysisRunAdmin(admin.ModelAdmin):
    list_display = ("study", "status", "progress", "ratings_count", "created_at", "finished_at")
    list_filter = ("study", "status")
    readonly_fields = ("settings_snapshot", "summary", "exclusions", "mos", "error")
