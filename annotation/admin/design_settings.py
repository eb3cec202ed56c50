"""The inline of a study's design settings (one row per study, made with the study): never
deleted, never a second one. Each design's settings inline extends it."""

from django.contrib import admin


class DesignSettingsInline(admin.StackedInline):
    can_delete = False
    max_num = 1
