"""The admin of raters: their participation in studies, their sessions (assignments) and
what they are paid for them."""

from django.contrib import admin

from annotation.models import Assignment, Participation, Payment, Rater


class ParticipationInline(admin.TabularInline):
    model = Participation
    extra = 0
    fields = (
        "study",
        "qualification_state",
        "qualification_share",
        "consent_at",
        "is_excluded",
        "withdrawn_at",
    )
    readonly_fields = fields


@admin.register(Rater)
class RaterAdmin(admin.ModelAdmin):
    list_display = ("__str__", "pseudonym", "user", "created_at")
    search_fields = ("external_id", "user__username")
    inlines = [ParticipationInline]
    list_select_related = ("user",)


@admin.register(Participation)
class ParticipationAdmin(admin.ModelAdmin):
    list_display = (
        "rater",
        "study",
        "qualification_state",
        "qualification_share",
        "is_excluded",
        "withdrawn_at",
        "created_at",
    )
    list_filter = ("study", "qualification_state", "is_excluded")
    # the rater's own decision (annotation.services.withdrawal): not the team's to change
    readonly_fields = ("withdrawn_at",)
    search_fields = ("rater__external_id", "rater__user__username")
    list_select_related = ("rater__user", "study")


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = (
        "rater",
        "session",
        "state",
        "position",
        "golden_agreement",
        "eligible_for_next",
        "flagged_line_clicker",
        "last_activity_at",
    )
    list_filter = ("state", "flagged_line_clicker", "eligible_for_next", "session__study")
    search_fields = ("rater__external_id", "rater__user__username")
    readonly_fields = ("order", "order_seed")
    # what Rater.__str__ and Session.__str__ read
    list_select_related = ("rater__user", "session__study")


@admin.register(Payment)
class PaymentAdmin(admin.ModelAdmin):
    list_display = ("assignment", "amount", "currency", "status", "created_at")
    list_filter = ("status",)
    list_select_related = ("assignment__rater__user", "assignment__session__study")
