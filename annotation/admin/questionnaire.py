"""The admin of questionnaire studies (VGA-Bench): their settings with the audit plan's
operating characteristic, question sets (shipped or uploaded), the questions and the
experts' answers (read-only once the study has answers: the answers name them), and the
batch audits' log."""

import tempfile
from pathlib import Path

from django import forms
from django.contrib import admin
from django.utils.html import format_html_join
from django.utils.text import Truncator

from annotation.admin.design_settings import DesignSettingsInline
from annotation.admin.frozen import FrozenOnceAnswered
from annotation.designs.questionnaire_answers import CHECKS
from annotation.designs.questionnaire_study import questions_forget
from annotation.errors import ValidationFailed
from annotation.models import (
    Answer,
    BatchAudit,
    Dimension,
    ExpertLabel,
    Question,
    QuestionnaireSettings,
    Stimulus,
)
from annotation.services.audits import plan_characteristic
from annotation.services.file_values import FILE_LIMIT
from annotation.services.question_sets import (
    TEMPLATES,
    QuestionSet,
    QuestionSetError,
    question_set_from,
    read_question_set,
)

NOTE_PREVIEW_CHARS = 40  # of an expert label's note in the admin's list


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


class QuestionnaireSettingsInline(DesignSettingsInline):
    model = QuestionnaireSettings
    form = QuestionnaireSettingsForm
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


QUESTION_FILE_LIMIT = FILE_LIMIT
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


def _study_has_answers(study_id: int) -> bool:
    return Answer.objects.filter(item__study_id=study_id).exists()


def _judged_on(stimulus: Stimulus) -> bool:
    """Whether the experts' answers to the video decide gates (a golden or qualification
    video's), so are fixed once the study has answers; a tutorial video's are only shown
    (an exemplar, a worked example) and may be mended while the study runs."""
    return stimulus.role != Stimulus.Role.TUTORIAL


class QuestionForm(forms.ModelForm):
    """Checked as a question set's question is (annotation/services/question_sets.py):
    tags given as plain labels get their slug values, levels must increase."""

    def clean(self):
        cleaned = super().clean()
        dimension = cleaned.get("dimension") or getattr(self.instance, "dimension", None)
        if dimension is None or self.errors:
            return cleaned
        kind = cleaned.get("kind")
        given = {  # the fields of the question's kind, as a file gives them
            "scale": {
                "min": cleaned.get("scale_min"),
                "max": cleaned.get("scale_max"),
                "step": cleaned.get("scale_step"),
            }
            if kind == "score"
            else None,
            "options": cleaned.get("options") if kind in ("ordinal", "tags") else None,
            "multiple": cleaned.get("multiple") if kind == "tags" else None,
            "invalid_option": cleaned.get("invalid_option") if kind == "ordinal" else None,
        }
        raw = {"key": dimension.key, "kind": kind, **given}
        try:
            (spec,) = question_set_from({"questions": [raw]}).questions
        except QuestionSetError as exc:
            raise forms.ValidationError(str(exc)) from None
        cleaned["options"] = spec.options
        if _study_has_answers(dimension.study_id):
            raise forms.ValidationError(
                "this study has answers: its questions can no longer change"
            )
        _check_expert_labels(
            Question(
                dimension=dimension,
                kind=kind,
                scale_min=cleaned.get("scale_min"),
                scale_max=cleaned.get("scale_max"),
                scale_step=cleaned.get("scale_step"),
                options=spec.options,
                multiple=cleaned.get("multiple"),
                invalid_option=cleaned.get("invalid_option"),
            )
        )
        return cleaned


def _check_expert_labels(question: Question) -> None:
    """Refuse a question that the experts' stored answers to it no longer fit (another
    kind, a level or tag taken away, a score off the new scale): the tutorial, the
    qualification and the golden gate compare raters with those answers."""
    misfits = []
    for label in ExpertLabel.objects.filter(dimension=question.dimension).select_related(
        "stimulus"
    ):
        try:
            CHECKS[question.kind](question, label.value)
        except ValidationFailed as exc:
            misfits.append(f"{label.stimulus}: {exc.message}")
    if misfits:
        more = f" (and {len(misfits) - 3} more)" if len(misfits) > 3 else ""
        raise forms.ValidationError(
            "the experts' answers to this question no longer fit it; change or delete "
            f"them first: {'; '.join(misfits[:3])}{more}"
        )


@admin.register(Question)
class QuestionAdmin(FrozenOnceAnswered, admin.ModelAdmin):
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

    frozen_because = "its answers name this question, its kind and its options."

    def study_id_of(self, obj) -> int:
        return obj.dimension.study_id

    def get_readonly_fields(self, request, obj=None):
        return () if obj is None else ("dimension",)

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
        if _judged_on(stimulus) and _study_has_answers(stimulus.study_id):
            raise forms.ValidationError(
                "this study has answers: the experts' answers its gates were decided on "
                "can no longer change"
            )
        question = Question.objects.filter(dimension=dimension).first()
        if question is None:
            # A worked example's labels (propose-then-verify's actions, a preference
            # pair's choice) are the manifest's, checked there: its note may be mended.
            unchanged = self.instance.pk is not None and not (
                {"stimulus", "dimension", "value"} & set(self.changed_data)
            )
            if unchanged:
                return cleaned
            raise forms.ValidationError(
                f"{dimension.key} is not a questionnaire question (a worked example's labels "
                "come from its manifest row; only their note is edited here)"
            )
        try:
            cleaned["value"] = CHECKS[question.kind](question, cleaned["value"])
        except ValidationFailed as exc:
            self.add_error("value", exc.message)
        return cleaned


@admin.register(ExpertLabel)
class ExpertLabelAdmin(FrozenOnceAnswered, admin.ModelAdmin):
    """The experts' answers to exemplar (tutorial), golden and qualification videos, in
    an answer's JSON form: a number, a level or "invalid", a list of tag values, a text;
    and the labels of the other designs' worked examples (propose-then-verify's actions,
    a compared design's "best"), whose note alone is edited here. A tutorial video's stay
    editable while the study runs: they decide no gate."""

    form = ExpertLabelForm
    list_display = ("stimulus", "role", "question", "value", "note_start")
    list_filter = ("stimulus__study", "stimulus__role")
    search_fields = ("stimulus__public_id", "stimulus__original_name", "dimension__key")
    raw_id_fields = ("stimulus",)
    list_select_related = ("stimulus", "dimension__study")
    fields = ("stimulus", "dimension", "value", "note")
    # A new label for a study with answers is refused by the form.
    frozen_because = "its qualification and golden gates were decided on the experts' answers."

    class Media:
        css = {"all": ("frontend/admin.css",)}

    def study_id_of(self, obj) -> int:
        return obj.stimulus.study_id

    def answered(self, obj) -> bool:
        return obj is not None and _judged_on(obj.stimulus) and super().answered(obj)

    @admin.display(ordering="stimulus__role")
    def role(self, obj):
        return obj.stimulus.get_role_display()

    @admin.display(ordering="dimension__key")
    def question(self, obj):
        """The question's key (the study is in the filter; its slug made the column wide)."""
        return obj.dimension.key

    @admin.display(description="note")
    def note_start(self, obj):
        """The note's first words: a long explanation would make each row tall (the
        whole note is on the label's page)."""
        return Truncator(obj.note).chars(NOTE_PREVIEW_CHARS)


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
