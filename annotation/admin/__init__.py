"""The Django admin, set up for study admins: search, filters and inlines."""

from contextvars import ContextVar

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.utils import unquote
from django.db import models, transaction
from django.db.models import Count, Q
from django.template.response import TemplateResponse

from annotation.admin.propose import ProposeVerifySettingsInline
from annotation.admin.questionnaire import (
    QuestionnaireSettingsInline,
    shipped_question_sets,
    uploaded_question_set,
)
from annotation.designs.slider import unscored_reference_videos
from annotation.errors import ApplicationError
from annotation.models import (
    AdaptiveSettings,
    Answer,
    Assignment,
    Dimension,
    Item,
    ItemMember,
    Participation,
    Payment,
    PlaybackReport,
    PreferenceSettings,
    RankingSettings,
    Rater,
    Rating,
    Session,
    SessionItem,
    SettledStimulus,
    Study,
    TutorialPair,
)
from annotation.services.adaptive import adaptive_settings_saved
from annotation.services.question_sets import (
    QuestionSetError,
    question_set_apply,
    read_question_set,
    template_path,
)
from annotation.services.studies import study_build_sessions, study_default_dimensions

# The request a change form is drawn for: a read-only field's method gets only the object,
# and the admin class is shared by every thread, so it is not kept on `self`.
_form_request = ContextVar("form_request", default=None)


class DimensionForm(forms.ModelForm):
    # One field per column of the inline's table: at the admin's default sizes (a help box
    # of 40 x 10, texts of 20 characters and more) the table took 2,000 px and the study's
    # page scrolled sideways in a laptop's window.
    class Meta:
        model = Dimension
        fields = (
            "key", "label", "help_text", "anchor_low", "anchor_high", "order", "shows_reference",
        )  # fmt: skip
        widgets = {
            "key": forms.TextInput(attrs={"size": 9}),
            "label": forms.TextInput(attrs={"size": 12}),
            "help_text": forms.Textarea(attrs={"rows": 3, "cols": 22}),
            "anchor_low": forms.TextInput(attrs={"size": 8}),
            "anchor_high": forms.TextInput(attrs={"size": 8}),
            "order": forms.NumberInput(attrs={"style": "width: 3.5em"}),
        }


class DimensionInline(admin.TabularInline):
    model = Dimension
    form = DimensionForm
    extra = 0


class PreferenceSettingsInline(admin.StackedInline):
    model = PreferenceSettings
    can_delete = False
    max_num = 1


class RankingSettingsInline(admin.StackedInline):
    model = RankingSettings
    can_delete = False
    max_num = 1


class AdaptiveSettingsInline(admin.StackedInline):
    """Adaptive collection (single-stimulus studies): docs/admins.md, "Adaptive collection"."""

    model = AdaptiveSettings
    can_delete = False
    max_num = 1
    fields = (
        "enabled",
        "plan",
        "target_half_width",
        "min_ratings",
        "max_ratings",
        "fixed_ratings",
        "looks",
        "alpha",
        "reviewed_at",
        "settled_videos",
    )
    readonly_fields = ("reviewed_at", "settled_videos")

    @admin.display(description="Videos settled")
    def settled_videos(self, obj):
        if obj is None or obj.pk is None:
            return "-"
        return SettledStimulus.objects.filter(stimulus__study_id=obj.study_id).count()


# A study's design settings, shown in its page for the study's design only.
DESIGN_INLINES = {
    "slider": AdaptiveSettingsInline,
    "preference": PreferenceSettingsInline,
    "ranking": RankingSettingsInline,
    "questionnaire": QuestionnaireSettingsInline,
    "propose_verify": ProposeVerifySettingsInline,
}


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    actions = ["build_sessions", "import_questions"]
    list_display = (
        "name",
        "slug",
        "state",
        "stimulus_count",
        "processing",
        "session_count",
        "created_at",
    )
    list_filter = ("state",)
    search_fields = ("name", "slug")
    prepopulated_fields = {"slug": ("name",)}
    inlines = [DimensionInline]
    # "app.prolific.com/..." typed without a scheme is kept as https (Django 6's default)
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}

    def get_inlines(self, request, obj):
        design = DESIGN_INLINES.get(getattr(obj, "design", ""))
        return [*self.inlines, design] if design else self.inlines

    def save_related(self, request, form, formsets, change):
        """A study added here without dimensions gets its design's, as one made through
        the API or `import_study --create` does (and new defaults when its design changes
        before any video is imported). A study that asks no question stays a draft. A
        change to its adaptive collection is acted on as the API's is."""
        super().save_related(request, form, formsets, change)
        study = form.instance
        for formset in formsets:
            if formset.model is AdaptiveSettings:
                changed = {name for inline in formset.forms for name in inline.changed_data}
                if changed:  # as the API's change: re-judged, reviewed on commit
                    adaptive_settings_saved(study=study, changed=changed)
        previous = form.initial.get("design") if change and "design" in form.changed_data else None
        if (not change or previous) and study_default_dimensions(
            study=study, previous_design=previous
        ):
            names = ", ".join(study.dimensions.order_by("order").values_list("label", flat=True))
            if names:
                self.message_user(request, f"The design's questions were added: {names}.")
        if study.state == Study.State.RUNNING and not study.dimensions.exists():
            # raters would be shown videos with nothing to answer (and "answer" them)
            Study.objects.filter(pk=study.pk).update(state=Study.State.DRAFT)
            first = (
                "import a question set (the Studies action)"
                if study.design == "questionnaire"
                else "give it its dimensions"
            )
            self.message_user(
                request,
                f"{study.name} asks no question yet, so it stays a draft: {first}, then start it.",
                messages.ERROR,
            )

    fieldsets = (
        (None, {"fields": ("name", "slug", "design", "state", "instructions", "consent_text")}),
        (
            "Sessions",
            {
                "fields": (
                    "session_size",
                    "golden_per_session",
                    "split_seed",
                    "rest_every",
                    "rest_seconds",
                    "window_size",
                    "target_raters_per_stimulus",
                )
            },
        ),
        (
            "Qualification",
            {
                "fields": (
                    "qualification_size",
                    "qualification_pass_share",
                    "qualification_tolerance_sigma",
                    "qualification_retries",
                )
            },
        ),
        (
            "Quality control",
            {"fields": ("golden_gate_plcc", "keep_failed_gate_sessions", "line_click_share")},
        ),
        ("Scale", {"fields": ("slider_min", "slider_max", "slider_step")}),
        (
            "Marketplace and payment",
            {
                "fields": (
                    "entry_token",
                    "rater_link",
                    "open_to_signed_in",
                    "completion_url",
                    "screenout_url",
                    "payment_per_session",
                    "payment_currency",
                    "min_viewport_width",
                    "min_viewport_height",
                    "drop_audio",
                )
            },
        ),
    )

    # Answers already given are on the scale they were given on, and a browser may still
    # hold unsent ones on it: once a study has any, its scale no longer changes.
    scale_fields = ("slider_min", "slider_max", "slider_step")

    @admin.display(description="rater link")
    def rater_link(self, obj):
        """The whole link to give the marketplace, at the address the admin reached the
        site by: Prolific puts each participant's ids where the {{%...%}} placeholders
        are (docs/admins.md)."""
        if obj is None or not obj.pk:
            return "(once the study is saved)"
        path = (
            f"/r/{obj.slug}/?token={obj.entry_token}&PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
            "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
        )
        request = _form_request.get()
        # not build_absolute_uri, which would percent-encode the placeholders' braces
        return f"{request.scheme}://{request.get_host()}{path}" if request is not None else path

    def changeform_view(self, request, object_id=None, *args, **kwargs):
        study = self.get_object(request, unquote(object_id)) if object_id else None
        if (
            request.method == "GET"
            and study is not None
            and study.design == "slider"
            and self.has_view_or_change_permission(request, study)
        ):
            unscored = unscored_reference_videos(study=study)
            if unscored:
                names = ", ".join(v.original_name or str(v.public_id) for v in unscored[:5])
                more = f" and {len(unscored) - 5} more" if len(unscored) > 5 else ""
                self.message_user(
                    request,
                    f"{len(unscored)} golden or qualification video(s) lack the experts' "
                    f"score of some dimension ({names}{more}): the golden gate and the "
                    "qualification test leave their answers out until the scores are added "
                    "(Stimuli, each video's Expert scores).",
                    messages.WARNING,
                )
        token = _form_request.set(request)
        try:
            response = super().changeform_view(request, object_id, *args, **kwargs)
            if isinstance(response, TemplateResponse):
                response.render()  # the read-only fields are drawn while it is set
            return response
        finally:
            _form_request.reset(token)

    def get_readonly_fields(self, request, obj=None):
        readonly = (*super().get_readonly_fields(request, obj), "rater_link")
        if obj is not None and Item.objects.filter(study=obj).exists():
            readonly = (*readonly, "design")  # its items are made: they are of this design
        if obj is not None and Answer.objects.filter(item__study=obj).exists():
            return (*readonly, *self.scale_fields)
        return readonly

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(
                _stimuli=Count("stimuli", distinct=True),
                _sessions=Count("sessions", distinct=True),
                _ready=Count("stimuli", filter=Q(stimuli__status="ready"), distinct=True),
                _failed=Count("stimuli", filter=Q(stimuli__status="failed"), distinct=True),
            )
        )

    @admin.display(description="processing")
    def processing(self, obj):
        """Videos ready out of all, and how many failed (see Processing jobs for why)."""
        text = f"{obj._ready}/{obj._stimuli} ready"
        return f"{text}, {obj._failed} failed" if obj._failed else text

    @admin.display(ordering="_stimuli", description="stimuli")
    def stimulus_count(self, obj):
        return obj._stimuli

    @admin.display(ordering="_sessions", description="sessions")
    def session_count(self, obj):
        return obj._sessions

    @admin.action(description="Split new stimuli into sessions")
    def build_sessions(self, request, queryset):
        """After uploads: the stimuli in no session yet become new sessions (as an import
        does right away)."""
        for study in queryset:
            try:
                with transaction.atomic():
                    sessions = study_build_sessions(study=study)
            except ApplicationError as refused:
                self.message_user(request, f"{study.name}: {refused.message}", messages.ERROR)
                continue
            self.message_user(
                request,
                f"{study.name}: {len(sessions)} new session(s)"
                if sessions
                else f"{study.name}: every stimulus is already in a session",
                messages.SUCCESS if sessions else messages.INFO,
            )

    @admin.action(
        description="Import a question set (a file, or a shipped template)",
        permissions=["change"],
    )
    def import_questions(self, request, queryset):
        """A questionnaire study's questions from a YAML or JSON file or a shipped template
        (annotation/services/question_sets.py), replacing those it has: a page to choose,
        then the set applied; refused once the study has answers."""
        studies = list(queryset[:2])
        if len(studies) != 1 or studies[0].design != "questionnaire":
            self.message_user(
                request, "Choose one questionnaire study to import questions into.", messages.ERROR
            )
            return None
        study, error = studies[0], ""
        if "apply" in request.POST:
            try:
                upload = request.FILES.get("question_file")
                chosen = request.POST.get("template", "")
                if upload is not None:
                    question_set = uploaded_question_set(upload)
                elif chosen in shipped_question_sets():
                    question_set = read_question_set(template_path(chosen))
                else:
                    raise QuestionSetError("choose a shipped template or upload a file")
                count = question_set_apply(study=study, question_set=question_set)
            except QuestionSetError as exc:
                error = str(exc)
            except ApplicationError as exc:  # the study has answers
                error = exc.message
            else:
                self.message_user(
                    request,
                    f"{study.name}: {count} questions from {question_set.name}",
                    messages.SUCCESS,
                )
                return None
        return TemplateResponse(
            request,
            "frontend/staff/question_set_import.html",
            {
                **self.admin_site.each_context(request),
                "title": f"Import a question set into {study.name}",
                "opts": self.model._meta,
                "study": study,
                "questions": study.dimensions.count(),
                "templates": shipped_question_sets(),
                "error": error,
                "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            },
            status=400 if error else 200,
        )


@admin.register(TutorialPair)
class TutorialPairAdmin(admin.ModelAdmin):
    list_display = ("label", "study", "dimension", "order")
    list_filter = ("study", "dimension__key")
    raw_id_fields = ("generated", "real")
    list_select_related = ("study", "dimension__study")


class SessionItemInline(admin.TabularInline):
    model = SessionItem
    extra = 0
    raw_id_fields = ("item",)


@admin.register(Session)
class SessionAdmin(admin.ModelAdmin):
    list_display = ("__str__", "study", "index", "item_count")
    list_filter = ("study",)
    list_select_related = ("study",)
    inlines = [SessionItemInline]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_items=Count("items"))

    @admin.display(ordering="_items", description="items")
    def item_count(self, obj):
        return obj._items


class ParticipationInline(admin.TabularInline):
    model = Participation
    extra = 0
    fields = ("study", "qualification_state", "qualification_share", "consent_at", "is_excluded")
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
        "created_at",
    )
    list_filter = ("study", "qualification_state", "is_excluded")
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


class ItemMemberInline(admin.TabularInline):
    model = ItemMember
    extra = 0
    raw_id_fields = ("stimulus",)


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ("public_id", "study", "role", "dimension", "content", "created_at")
    list_filter = ("study", "role")
    search_fields = ("public_id", "content")
    inlines = [ItemMemberInline]
    list_select_related = ("study", "dimension__study")


@admin.register(Payment)
class PaymentAdmin(admin.ModelAdmin):
    list_display = ("assignment", "amount", "currency", "status", "created_at")
    list_filter = ("status",)
    list_select_related = ("assignment__rater__user", "assignment__session__study")


@admin.register(PlaybackReport)
class PlaybackReportAdmin(admin.ModelAdmin):
    """Videos raters' browsers could not play, and skipped (docs/admins.md, "Videos a
    rater cannot play"): a record to act on, not to edit."""

    list_display = ("item", "participation", "assignment", "attempt", "detail", "created_at")
    list_filter = ("participation__study",)
    list_select_related = ("item", "participation__rater", "participation__study", "assignment")
    search_fields = ("detail", "item__members__stimulus__original_name")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
