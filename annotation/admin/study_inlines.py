"""The inlines of a study's admin page: its dimensions, and its design's own settings
(DESIGN_INLINES: a study's page shows its design's only)."""

from django import forms
from django.contrib import admin

from annotation.admin.design_settings import DesignSettingsInline
from annotation.admin.propose import ProposeVerifySettingsInline
from annotation.admin.questionnaire import QuestionnaireSettingsInline
from annotation.models import (
    AdaptiveSettings,
    Dimension,
    PreferenceSettings,
    RankingSettings,
    SettledStimulus,
)


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


class PreferenceSettingsInline(DesignSettingsInline):
    model = PreferenceSettings


class RankingSettingsInline(DesignSettingsInline):
    model = RankingSettings


class AdaptiveSettingsInline(DesignSettingsInline):
    """Adaptive collection (single-stimulus studies): docs/admins.md, "Adaptive collection"."""

    model = AdaptiveSettings
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
