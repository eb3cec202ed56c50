"""The admin of the media pipeline: videos (uploaded through the same service as the API),
their processing jobs and metric scores."""

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.options import IS_POPUP_VAR
from django.http import HttpResponseRedirect
from django.shortcuts import redirect
from django.urls import reverse

from annotation.errors import ApplicationError, Conflict
from annotation.models import ExpertScore, Stimulus
from annotation.services.stimulus_delete import answered_items, items_of, stimuli_delete
from annotation.services.study_import_rows import LABEL_COLUMNS
from media_pipeline.models import MetricScore, ProcessingJob
from media_pipeline.services.transcode_jobs import stimuli_process_again
from media_pipeline.services.uploads import stimulus_upload


class ExpertScoreInline(admin.TabularInline):
    model = ExpertScore
    extra = 0


class StimulusUploadForm(forms.ModelForm):
    """The admin's add form: the upload goes through the same service as the API."""

    class Meta:
        model = Stimulus
        fields = ["study", "role", "source_file", *LABEL_COLUMNS]

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        labels = {k: data.get(k, "") for k in LABEL_COLUMNS}
        try:
            self.uploaded = stimulus_upload(
                study=data["study"], upload=data["source_file"], role=data["role"], labels=labels
            )
        except ApplicationError as exc:
            raise forms.ValidationError(exc.message) from None
        return data


@admin.register(Stimulus)
class StimulusAdmin(admin.ModelAdmin):
    list_display = (
        "__str__",
        "study",
        "role",
        "status",
        "action",
        "action_class",
        "source_model",
        "width",
        "height",
        "fps",
    )
    list_filter = ("study", "role", "status", "action_class", "source_model")
    search_fields = ("original_name", "prompt", "action", "checksum", "public_id")
    readonly_fields = (
        "public_id",
        "checksum",
        "status",
        "processing_error",
        "width",
        "height",
        "fps",
        "frame_count",
        "duration_s",
        "codec",
        "metadata",
        "rendition",
        "poster",
    )
    inlines = [ExpertScoreInline]
    list_select_related = ("study",)
    actions = ["process_again"]

    @admin.action(description="Process again what failed (transcode or scoring)")
    def process_again(self, request, queryset):
        transcodes, scores = stimuli_process_again(queryset.values_list("pk", flat=True))
        if not transcodes and not scores:
            self.message_user(
                request, "Nothing failed among the selected videos.", messages.WARNING
            )
            return
        self.message_user(
            request,
            f"Queued {len(transcodes)} transcode(s) and {len(scores)} scoring(s) again.",
        )

    def get_deleted_objects(self, objs, request):
        """Deleting videos takes the items made of them (annotation.services.
        stimulus_delete), listed on the confirmation page; an answered item keeps its
        videos, listed as what stops the deletion."""
        deleted, counts, perms, protected = super().get_deleted_objects(objs, request)
        chosen = Stimulus.objects.filter(pk__in=[obj.pk for obj in objs])
        answered = list(answered_items(chosen).select_related("study")[:20])
        if answered:
            protected = [*protected, *(f"{item} (it has answers)" for item in answered)]
        else:
            items = list(items_of(chosen))
            deleted = [*deleted, *(f"Item: {item} (left without its video)" for item in items)]
            if items:
                counts = {**counts, "items": len(items)}
        return deleted, counts, perms, protected

    def delete_model(self, request, obj):
        stimuli_delete(stimuli=Stimulus.objects.filter(pk=obj.pk))

    def delete_view(self, request, object_id, extra_context=None):
        """A rater's answer arriving after the confirmation page (``stimuli_delete``
        refuses then, deleting nothing) is said on the video's page, not a server error."""
        try:
            return super().delete_view(request, object_id, extra_context)
        except Conflict as refused:
            self.message_user(request, f"Not deleted: {refused.message}", messages.ERROR)
            return redirect("admin:annotation_stimulus_change", object_id)

    def changelist_view(self, request, extra_context=None):
        """The list's Delete action, refused alike (see ``delete_view``)."""
        try:
            return super().changelist_view(request, extra_context)
        except Conflict as refused:
            self.message_user(request, f"Not deleted: {refused.message}", messages.ERROR)
            return redirect("admin:annotation_stimulus_changelist")

    def delete_queryset(self, request, queryset):
        stimuli_delete(stimuli=queryset)

    def get_form(self, request, obj=None, **kwargs):
        if obj is None:
            kwargs["form"] = StimulusUploadForm
        return super().get_form(request, obj, **kwargs)

    def get_inlines(self, request, obj):
        return self.inlines if obj is not None else []

    def get_readonly_fields(self, request, obj=None):
        return self.readonly_fields if obj is not None else ()

    def save_model(self, request, obj, form, change):
        if change:
            return super().save_model(request, obj, form, change)
        obj.pk = form.uploaded.pk  # stored by the upload service in form.clean()
        obj.refresh_from_db()

    def response_add(self, request, obj, post_url_continue=None):
        """A golden or qualification video of a slider study is judged against the
        experts' scores, which the add form has no room for: the admin is taken to the
        video's page, where they are added, and told so."""
        needs_scores = obj.role in (Stimulus.Role.GOLDEN, Stimulus.Role.QUALIFICATION)
        popup = IS_POPUP_VAR in request.POST  # a related-object popup closes as usual
        if popup or not (needs_scores and obj.study.design == "slider"):
            return super().response_add(request, obj, post_url_continue)
        self.message_user(
            request,
            f"Add the experts' scores of every dimension to this {obj.get_role_display().lower()} "
            "video below (mean and standard deviation): the golden gate and the qualification "
            "test judge the raters by them, and leave out a video without them.",
            messages.WARNING,
        )
        return HttpResponseRedirect(reverse("admin:annotation_stimulus_change", args=[obj.pk]))


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
