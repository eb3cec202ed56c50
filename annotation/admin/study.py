"""The studies' admin: their settings page (with the rater link to give the marketplace),
list figures, and the actions that split new videos into sessions, import a
questionnaire's question set and copy a study's protocol into a new draft."""

from contextvars import ContextVar

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.utils import unquote
from django.db import models
from django.db.models import Count, Q
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from annotation.admin.questionnaire import shipped_question_sets, uploaded_question_set
from annotation.admin.study_inlines import DESIGN_INLINES, DimensionInline
from annotation.errors import ApplicationError
from annotation.models import AdaptiveSettings, Answer, Item, Study
from annotation.readiness import study_problems
from annotation.services.adaptive import adaptive_settings_saved
from annotation.services.question_sets import (
    QuestionSetError,
    question_set_apply,
    read_question_set,
    template_path,
)
from annotation.services.studies import (
    studies_delete,
    study_default_dimensions,
    study_split,
)
from annotation.services.study_copy import study_duplicate

# The request a change form is drawn for: a read-only field's method gets only the object,
# and the admin class is shared by every thread, so it is not kept on `self`.
_form_request = ContextVar("form_request", default=None)
# The session key of the study whose lacks a save said: the page it leads back to does
# not say them again.
PROBLEMS_SAID = "mosaic_problems_said"


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    actions = ["build_sessions", "import_questions", "duplicate"]
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

    def delete_model(self, request, obj):
        studies_delete(studies=Study.objects.filter(pk=obj.pk))

    def delete_queryset(self, request, queryset):
        studies_delete(studies=queryset)

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
        stays_draft = study.state == Study.State.RUNNING and not study.dimensions.exists()
        if stays_draft:
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
        if study.state == Study.State.RUNNING and "state" in form.changed_data:
            # said here, as it starts (a study kept a draft is not started: the page
            # says its lacks as ever); the page this save leads back to says them once
            prefix = "Before raters arrive:" if stays_draft else "Started, but"
            self._say_problems(request, study, prefix=prefix, skip=("no_questions",))
            request.session[PROBLEMS_SAID] = study.pk

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
                    "idle_place_hours",
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
        said = request.session.pop(PROBLEMS_SAID, None) if request.method == "GET" else None
        if (
            request.method == "GET"
            and study is not None
            and self.has_view_or_change_permission(request, study)
            and said != study.pk
        ):
            self._say_problems(request, study)
        token = _form_request.set(request)
        try:
            response = super().changeform_view(request, object_id, *args, **kwargs)
            if isinstance(response, TemplateResponse):
                response.render()  # the read-only fields are drawn while it is set
            return response
        finally:
            _form_request.reset(token)

    def _say_problems(
        self, request, study, *, prefix: str = "Before raters arrive:", skip=()
    ) -> None:
        """What the study still lacks (annotation.readiness), one message each: an error
        where raters could not take part usefully, else a warning; ``skip``: the codes
        said otherwise (no question: save_related keeps the study a draft and says so)."""
        for problem in study_problems(study=study):
            if problem.code in skip:
                continue
            level = messages.ERROR if problem.blocks else messages.WARNING
            self.message_user(request, f"{prefix} {problem.text}.", level)

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
        does right away), and sessions no rater has started get the golden items they
        lack (golden videos imported after the split)."""
        for study in queryset:
            try:
                split = study_split(study=study)
            except ApplicationError as refused:
                self.message_user(request, f"{study.name}: {refused.message}", messages.ERROR)
                continue
            self.message_user(
                request,
                f"{study.name}: {split.said()}",
                messages.SUCCESS if split.sessions or split.golden_added else messages.INFO,
            )

    @admin.action(
        description="Copy as a new draft (settings and questions; no videos)",
        permissions=["add"],
    )
    def duplicate(self, request, queryset):
        """Each chosen study's protocol in a new draft study
        (annotation/services/study_copy.py), named "... (copy)" and linked from the
        message, for its videos to be imported."""
        for study in queryset.order_by("name"):
            copy = study_duplicate(study=study, by=request.user)
            self.log_addition(request, copy, f"Copied from {study.name} ({study.slug}).")
            link = reverse("admin:annotation_study_change", args=[copy.pk])
            self.message_user(
                request,
                format_html(
                    '{}: copied as the draft <a href="{}">{}</a> (slug {}), without its '
                    "videos: import them with the manifest, then start it.",
                    study.name,
                    link,
                    copy.name,
                    copy.slug,
                ),
                messages.SUCCESS,
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
                applied = question_set_apply(study=study, question_set=question_set)
            except QuestionSetError as exc:
                error = str(exc)
            except ApplicationError as exc:  # the study has answers
                error = exc.message
            else:
                self.message_user(
                    request,
                    f"{study.name}: {applied.said(question_set.name)}",
                    messages.WARNING if applied.expert_dropped else messages.SUCCESS,
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
