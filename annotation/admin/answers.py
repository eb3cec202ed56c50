"""The admin of what raters sent: their answers (with their ratings) and the videos their
browsers could not play. A record to read: nothing here is edited."""

from django.contrib import admin

from annotation.models import Answer, PlaybackReport, Rating


class RatingInline(admin.TabularInline):
    model = Rating
    extra = 0
    fields = ("stimulus", "dimension", "score")
    readonly_fields = fields
    can_delete = False


@admin.register(Answer)
class AnswerAdmin(admin.ModelAdmin):
    """Answers are the raters' own: shown, never edited here (an exclusion takes them out
    of the numbers, with its reason on record)."""

    list_display = ("client_uuid", "participation", "item", "assignment", "attempt", "received_at")
    list_filter = ("item__study", "item__role")
    search_fields = ("client_uuid", "item__public_id")
    raw_id_fields = ("item", "participation", "assignment")
    readonly_fields = (
        "client_uuid",
        "item",
        "participation",
        "assignment",
        "attempt",
        "layout",
        "values_digest",
        "shown_at",
        "answered_at",
        "received_at",
        "watch_time_ms",
        "plays",
        "stalls",
    )
    inlines = [RatingInline]
    # what Participation.__str__ and Assignment.__str__ (rater, session, study) read
    list_select_related = (
        "participation__rater__user",
        "participation__study",
        "item",
        "assignment__rater__user",
        "assignment__session__study",
    )


@admin.register(PlaybackReport)
class PlaybackReportAdmin(admin.ModelAdmin):
    """Videos raters' browsers could not play, and skipped (docs/admins.md, "Videos a
    rater cannot play"): a record to act on, not to edit."""

    list_display = (
        "videos",
        "item",
        "participation",
        "assignment",
        "attempt",
        "detail",
        "created_at",
    )
    list_filter = ("participation__study",)
    list_select_related = ("item", "participation__rater", "participation__study", "assignment")
    search_fields = ("detail", "videos")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
