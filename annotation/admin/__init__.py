"""The Django admin, set up for study admins: search, filters and inlines."""

import tempfile
from pathlib import Path

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db import transaction
from django.db.models import Count, Q
from django.template.response import TemplateResponse
from django.utils.html import format_html_join

from annotation.admin.propose import ProposeVerifySettingsInline
from annotation.designs.questionnaire import CHECKS, questions_forget
from annotation.errors import ApplicationError, ValidationFailed
from annotation.models import (
    AdaptiveSettings,
    Answer,
    Assignment,
    BatchAudit,
    Dimension,
    ExpertLabel,
    Item,
    ItemMember,
    Participation,
    Payment,
    PreferenceSettings,
    Question,
    QuestionnaireSettings,
    RankingSettings,
    Rater,
    Rating,
    Session,
    SessionItem,
    SettledStimulus,
    Study,
    TutorialPair,
)
from annotation.services.audits import plan_characteristic
from annotation.services.question_sets import (
    TEMPLATES,
    QuestionSet,
    QuestionSetError,
    question_set_apply,
    question_set_from,
    read_question_set,
    template_path,
)
from annotation.services.studies import study_build_sessions


class DimensionInline(admin.TabularInline):
    model = Dimension
    extra = 0


class PreferenceSettingsInline(admin.StackedInline):
    model = PreferenceSettings
    can_delete = False
    max_num = 1


class RankingSettingsInline(admin.StackedInline):
    model = RankingSettings
    can_delete = False
    max_num = 1


class QuestionnaireSettingsForm(forms.ModelForm):
    class Meta:
        model = QuestionnaireSettings
        fields = (
            "raters_per_video",
            "method",
            "keep_share",
            "source",
            "score_tolerance",
            "ordinal_adjacent",
            "tags_jaccard",
            "golden_pass_share",
            "audit_sample_size",
            "audit_acceptance_number",
        )

    def clean(self):
        cleaned = super().clean()
        n, c = cleaned.get("audit_sample_size"), cleaned.get("audit_acceptance_number")
        if n is not None and c is not None and c >= n:
            self.add_error(
                "audit_acceptance_number",
                f"must be less than the sample size ({n}): otherwise every batch is accepted",
            )
        return cleaned


class QuestionnaireSettingsInline(admin.StackedInline):
    model = QuestionnaireSettings
    form = QuestionnaireSettingsForm
    can_delete = False
    max_num = 1
    readonly_fields = ("operating_characteristic",)
    fieldsets = (
        (None, {"fields": ("raters_per_video", "method", "keep_share", "source")}),
        (
            "Agreement with the experts (exemplars, golden and qualification videos)",
            {
                "fields": (
                    "score_tolerance",
                    "ordinal_adjacent",
                    "tags_jaccard",
                    "golden_pass_share",
                )
            },
        ),
        (
            "Audit acceptance plan",
            {
                "fields": (
                    "audit_sample_size",
                    "audit_acceptance_number",
                    "operating_characteristic",
                )
            },
        ),
    )

    @admin.display(description="P(accept) by share of wrong videos")
    def operating_characteristic(self, obj):
        """What the saved plan guarantees (a batch opened for audit keeps its plan)."""
        if obj is None or obj.pk is None:
            return "-"
        rows = plan_characteristic(
            sample_size=obj.audit_sample_size, acceptance_number=obj.audit_acceptance_number
        )
        return ", ".join(f"{row['defects']:.0%} wrong: {row['accept']:.1%}" for row in rows)


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
QUESTION_FILE_LIMIT = 1_000_000  # bytes; VGA-Bench's set is about 30 kB
QUESTION_FILE_SUFFIXES = (".yaml", ".yml", ".json")


def shipped_question_sets() -> list[str]:
    return sorted(path.stem for path in TEMPLATES.glob("*.yaml"))


def uploaded_question_set(upload) -> QuestionSet:
    """The question set in an uploaded file, read as `import_questions` reads a file (its
    messages name the file as uploaded)."""
    name = Path(upload.name).name
    if Path(name).suffix.lower() not in QUESTION_FILE_SUFFIXES:
        raise QuestionSetError(f"{name}: a question set is a .yaml, .yml or .json file")
    if upload.size > QUESTION_FILE_LIMIT:
        raise QuestionSetError(f"{name}: larger than {QUESTION_FILE_LIMIT // 1000} kB")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        with path.open("wb") as out:
            for chunk in upload.chunks():
                out.write(chunk)
        return read_question_set(path)


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

    def get_inlines(self, request, obj):
        design = DESIGN_INLINES.get(getattr(obj, "design", ""))
        return [*self.inlines, design] if design else self.inlines

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

    def get_readonly_fields(self, request, obj=None):
        readonly = super().get_readonly_fields(request, obj)
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
            with transaction.atomic():
                sessions = study_build_sessions(study=study)
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


def _study_has_answers(study_id: int) -> bool:
    return Answer.objects.filter(item__study_id=study_id).exists()


class QuestionForm(forms.ModelForm):
    """Checked as a question set's question is (annotation/services/question_sets.py):
    tags given as plain labels get their slug values, levels must increase."""

    def clean(self):
        cleaned = super().clean()
        dimension = cleaned.get("dimension") or getattr(self.instance, "dimension", None)
        if dimension is None or self.errors:
            return cleaned
        kind = cleaned.get("kind")
        raw = {
            "key": dimension.key,
            "kind": kind,
            "scale": {
                "min": cleaned.get("scale_min"),
                "max": cleaned.get("scale_max"),
                "step": cleaned.get("scale_step"),
            },
            "options": cleaned.get("options"),
            "multiple": cleaned.get("multiple"),
            "invalid_option": cleaned.get("invalid_option"),
        }
        try:
            (spec,) = question_set_from({"questions": [raw]}).questions
        except QuestionSetError as exc:
            raise forms.ValidationError(str(exc)) from None
        cleaned["options"] = spec.options
        if _study_has_answers(dimension.study_id):
            raise forms.ValidationError(
                "this study has answers: its questions can no longer change"
            )
        return cleaned


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    """A questionnaire study's questions: the wording (label, question text) is the
    dimension's, in the study's page; the kind and options are here, fixed once the
    study has answers. Whole sets are imported with the Studies action."""

    form = QuestionForm
    list_display = ("key", "label", "study", "kind", "group", "order")
    list_filter = ("dimension__study", "kind")
    search_fields = ("dimension__key", "dimension__label")
    ordering = ("dimension__study", "dimension__order")
    list_select_related = ("dimension__study",)
    fields = (
        "dimension",
        "kind",
        "group",
        "scale_min",
        "scale_max",
        "scale_step",
        "options",
        "multiple",
        "invalid_option",
    )

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return ()
        if _study_has_answers(obj.dimension.study_id):
            return self.fields
        return ("dimension",)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "dimension":
            kwargs["queryset"] = Dimension.objects.filter(
                study__design="questionnaire", question__isnull=True
            ).select_related("study")
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        questions_forget(obj.dimension.study_id)

    def delete_model(self, request, obj):
        study_id = obj.dimension.study_id
        super().delete_model(request, obj)
        questions_forget(study_id)

    @admin.display(ordering="dimension__key")
    def key(self, obj):
        return obj.dimension.key

    @admin.display(ordering="dimension__label")
    def label(self, obj):
        return obj.dimension.label

    @admin.display(ordering="dimension__study")
    def study(self, obj):
        return obj.dimension.study

    @admin.display(ordering="dimension__order")
    def order(self, obj):
        return obj.dimension.order


class ExpertLabelForm(forms.ModelForm):
    def clean(self):
        cleaned = super().clean()
        stimulus, dimension = cleaned.get("stimulus"), cleaned.get("dimension")
        if stimulus is None or dimension is None or "value" not in cleaned:
            return cleaned
        if dimension.study_id != stimulus.study_id:
            raise forms.ValidationError("the question is not one of the video's study")
        question = Question.objects.filter(dimension=dimension).first()
        if question is None:
            raise forms.ValidationError(f"{dimension.key} is not a questionnaire question")
        try:
            cleaned["value"] = CHECKS[question.kind](question, cleaned["value"])
        except ValidationFailed as exc:
            self.add_error("value", exc.message)
        return cleaned


@admin.register(ExpertLabel)
class ExpertLabelAdmin(admin.ModelAdmin):
    """The experts' answers to exemplar (tutorial), golden and qualification videos, in
    an answer's JSON form: a number, a level or "invalid", a list of tag values, a text."""

    form = ExpertLabelForm
    list_display = ("stimulus", "role", "dimension", "value", "note")
    list_filter = ("stimulus__study", "stimulus__role")
    search_fields = ("stimulus__public_id", "stimulus__original_name", "dimension__key")
    raw_id_fields = ("stimulus",)
    list_select_related = ("stimulus", "dimension__study")

    @admin.display(ordering="stimulus__role")
    def role(self, obj):
        return obj.stimulus.get_role_display()


@admin.register(BatchAudit)
class BatchAuditAdmin(admin.ModelAdmin):
    """The log of expert audits: who, when, the sample, the findings, the verdict and
    why. Audits are decided on the audit pages (/studies/<slug>/audits/), never here."""

    list_display = (  # the assignment names its study (and session)
        "assignment",
        "verdict",
        "wrong_of_sample",
        "auditor",
        "decided_at",
        "reason",
    )
    list_filter = ("verdict", "assignment__session__study")
    search_fields = ("assignment__rater__external_id", "auditor__username", "reason")
    list_select_related = ("assignment__rater__user", "assignment__session__study", "auditor")
    fields = (
        "assignment",
        "verdict",
        "wrong_of_sample",
        "reason",
        "auditor",
        "started_at",
        "decided_at",
        "sample_size",
        "acceptance_number",
        "sample",
        "finding_list",
        "seed",
    )
    readonly_fields = fields

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="wrong")
    def wrong_of_sample(self, obj):
        return f"{obj.wrong} of {len(obj.sample)}" if obj.verdict else "-"

    @admin.display(description="findings")
    def finding_list(self, obj):
        if not obj.findings:
            return "-"
        return format_html_join(
            "",
            "<div>item {}: <strong>{}</strong> {}</div>",
            ((f["item"], "wrong" if f["wrong"] else "right", f["note"]) for f in obj.findings),
        )
