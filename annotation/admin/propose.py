"""The admin of propose-then-verify studies: their settings, vocabulary and the segments
their proposers set aside (flagged as inappropriate or with a wrong box by a majority)."""

from django.contrib import admin

from annotation.admin.design_settings import DesignSettingsInline
from annotation.admin.frozen import FrozenOnceAnswered
from annotation.designs.propose_study import vocabulary_forget
from annotation.models import Action, ActionGroup, ProposeVerifySettings, StageLink


class ProposeVerifySettingsInline(DesignSettingsInline):
    model = ProposeVerifySettings
    readonly_fields = ("vocabulary_source",)
    fieldsets = (
        (None, {"fields": ("proposers_per_item", "verifiers_per_item", "keep_at_least")}),
        ("Segments", {"fields": ("segment_seconds", "max_labels", "golden_pass_share")}),
        ("Vocabulary (manage.py import_vocabulary)", {"fields": ("vocabulary_source",)}),
    )


class ActionInline(admin.TabularInline):
    model = Action
    extra = 0


@admin.register(ActionGroup)
class ActionGroupAdmin(FrozenOnceAnswered, admin.ModelAdmin):
    """A vocabulary's groups and actions; read-only once the study has answers (the
    answers name them)."""

    list_display = ("label", "study", "limit", "required", "order")
    list_filter = ("study",)
    inlines = [ActionInline]
    frozen_because = "its proposals and verdicts name these actions."

    def study_id_of(self, obj) -> int:
        return obj.study_id

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        vocabulary_forget(form.instance.study_id)  # the pages read it from a cache

    def delete_model(self, request, obj):
        super().delete_model(request, obj)
        vocabulary_forget(obj.study_id)


@admin.register(StageLink)
class StageLinkAdmin(admin.ModelAdmin):
    """Each segment's way from its proposals to its verify item; the ones set aside for
    staff (a majority flagged them) are filtered by `set aside`."""

    list_display = ("propose_item", "verify_item", "set_aside", "flags", "created_at")
    list_filter = ("set_aside", "propose_item__study")
    readonly_fields = ("propose_item", "verify_item", "set_aside", "flags", "created_at")

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
