"""Designs whose tutorial shows expert-answered examples (the manifest's tutorial rows):
what readiness says when a study has none (annotation.readiness, Design.readiness)."""

from __future__ import annotations

from annotation.models import Stimulus


def examples_lacking(*, study, text: str) -> list[tuple[str, str]]:
    """``[("no_exemplars", text)]`` when the study has no tutorial video, else nothing."""
    if Stimulus.objects.filter(study=study, role=Stimulus.Role.TUTORIAL).exists():
        return []
    return [("no_exemplars", text)]
