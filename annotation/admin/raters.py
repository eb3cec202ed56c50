"""The admin of raters: their participation in studies, their sessions (assignments) and
what they are paid for them (decided and paid out through its actions)."""

from django.contrib import admin, messages
from django.http import HttpResponse

from annotation.errors import ApplicationError
from annotation.models import Assignment, Participation, Payment, Rater
from annotation.services.admin_actions import payments_decide
from annotation.services.payouts import payments_pay_out


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
    list_display = ("__str__", "pseudonym", "user", "erased_at", "created_at")
    readonly_fields = ("erased_at",)  # `manage.py erase_rater` (annotation.services.erasure)
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
    # the rater's own decisions (consent, annotation.services.withdrawal): not the team's
    readonly_fields = ("consent_at", "consented_text", "withdrawn_at")
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


class PaidOutFilter(admin.SimpleListFilter):
    title = "paid out"
    parameter_name = "paid_out"

    def lookups(self, request, model_admin):
        return (("yes", "Yes"), ("no", "No"))

    def queryset(self, request, queryset):
        if self.value() in ("yes", "no"):
            return queryset.filter(paid_out_at__isnull=self.value() == "no")
        return queryset


@admin.register(Payment)
class PaymentAdmin(admin.ModelAdmin):
    """Decisions and pay-outs go through the actions (annotation.services.admin_actions
    and payouts), which record when and log who; the form shows them read-only."""

    list_display = (
        "assignment",
        "amount",
        "currency",
        "status",
        "decided_at",
        "paid_out_at",
    )
    list_filter = ("status", PaidOutFilter, "assignment__session__study")
    search_fields = ("assignment__rater__external_id", "assignment__rater__user__username")
    list_select_related = ("assignment__rater__user", "assignment__session__study")
    readonly_fields = ("assignment", "status", "decided_at", "paid_out_at")
    actions = ["approve", "reject", "pay_out"]

    def has_add_permission(self, request):
        return False  # a finished session makes its payment (session_answers)

    def _decide(self, request, queryset, *, approve: bool) -> None:
        decided, passed = payments_decide(
            payment_ids=queryset.values_list("pk", flat=True), approve=approve, by=request.user
        )
        verb = "approved" if approve else "rejected"
        left = f"; {passed} were decided already and are left as they are" if passed else ""
        self.message_user(request, f"{decided} payment(s) {verb}{left}.", messages.SUCCESS)

    @admin.action(description="Approve the chosen pending payments", permissions=["change"])
    def approve(self, request, queryset):
        self._decide(request, queryset, approve=True)

    @admin.action(description="Reject the chosen pending payments", permissions=["change"])
    def reject(self, request, queryset):
        self._decide(request, queryset, approve=False)

    @admin.action(
        description="Pay out: the approved ones as bulk bonus lines (Prolific), once",
        permissions=["change"],
    )
    def pay_out(self, request, queryset):
        """The chosen approved payments not yet paid out, as a file of the marketplace's
        bulk bonus lines (annotation/services/payouts.py), marked paid out."""
        try:
            payout = payments_pay_out(
                payment_ids=queryset.values_list("pk", flat=True), by=request.user
            )
        except ApplicationError as refused:
            self.message_user(request, f"Nothing paid out: {refused.message}.", messages.ERROR)
            return None
        without = (
            f" {payout.without_participant_id} approved payment(s) of raters without a "
            "marketplace id (or simulated) were left out: pay them another way."
            if payout.without_participant_id
            else ""
        )
        if not payout.lines:
            self.message_user(
                request,
                f"Nothing to pay out: no approved payment among those chosen is still to "
                f"be paid out.{without}",
                messages.WARNING,
            )
            return None
        total = sum(amount for _, amount in payout.lines)
        self.message_user(
            request,
            f"Paid out {payout.payments} payment(s) of {payout.study} to "
            f"{len(payout.lines)} participant(s), {total:.2f} {payout.currency} in all: "
            f"paste the downloaded lines into the study's bulk bonus payment.{without}",
            messages.SUCCESS,
        )
        response = HttpResponse(payout.bonus_lines(), content_type="text/csv; charset=utf-8")
        stamp = payout.paid_at.strftime("%Y%m%d-%H%M%S")
        name = f"bonus-{payout.study}-{payout.currency}-{stamp}.csv"
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response
