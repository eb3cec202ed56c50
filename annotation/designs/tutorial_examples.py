"""What a tutorial shows besides a design's own: the study's tutorial pairs; and, for
designs whose tutorial shows expert-answered examples (the manifest's tutorial rows),
what readiness says when a study has none (annotation.readiness, Design.readiness).

A tutorial shows only videos that are ready (``READY``, here and in every design's
``tutorial_payload``): one still being transcoded comes once it is, and one that failed
never shows as a broken video (readiness names the failed videos)."""

from __future__ import annotations

from annotation.media_urls import media_urls
from annotation.models import Stimulus, TutorialPair

READY = Stimulus.Status.READY


def examples_lacking(*, study, text: str) -> list[tuple[str, str]]:
    """``[("no_exemplars", text)]`` when the study has no tutorial video that is or will be
    shown (all failed: none), else nothing."""
    videos = Stimulus.objects.filter(study=study, role=Stimulus.Role.TUTORIAL)
    if videos.exclude(status=Stimulus.Status.FAILED).exists():
        return []
    return [("no_exemplars", text)]


def tutorial_pairs(*, study_id: int) -> list[dict]:
    """The study's tutorial pairs (a generated and a real video explained for one
    dimension, with the experts' score of the generated one): the tutorial of a design
    that has none of its own, shown beside a preference study's worked examples."""
    pairs = (
        TutorialPair.objects.filter(study_id=study_id, generated__status=READY, real__status=READY)
        .select_related("dimension", "generated", "real")
        .prefetch_related("generated__expert_scores__dimension")
    )
    result = []
    for pair in pairs:
        expert = {e.dimension.key: e.mean for e in pair.generated.expert_scores.all()}
        result.append(
            {
                "dimension": pair.dimension.key,
                "label": pair.label,
                "caption": pair.caption,
                "explanation": pair.explanation,
                "generated": media_urls(pair.generated),
                "real": media_urls(pair.real),
                "expert": expert,
            }
        )
    return result
