"""What a slider study's own setup still lacks before raters arrive (annotation.readiness
asks every design through ``Design.readiness``): a dimension without a tutorial pair,
and golden or qualification videos without the experts' score of some dimension."""

from __future__ import annotations

from django.db.models import Count

from annotation.dimensions import dimensions_of
from annotation.models import Stimulus, TutorialPair


def unscored_reference_videos(*, study) -> list[Stimulus]:
    """The study's golden and qualification videos that lack the experts' score of some
    dimension: the gate and the test leave their answers out (qualification_score)."""
    dimensions = len(dimensions_of(study.pk))
    return list(
        Stimulus.objects.filter(
            study=study, role__in=(Stimulus.Role.GOLDEN, Stimulus.Role.QUALIFICATION)
        )
        .annotate(scored=Count("expert_scores__dimension", distinct=True))
        .filter(scored__lt=dimensions)
        .order_by("pk")
    )


def readiness(*, study) -> list[tuple[str, str]]:
    """(code, text) of each lack: the tutorial's pairs per dimension (GAIA: 10 each),
    the experts' scores of the reference videos."""
    lacking = []
    taught = set(TutorialPair.objects.filter(study=study).values_list("dimension_id", flat=True))
    untaught = [d.label for d in study.dimensions.order_by("order") if d.pk not in taught]
    if untaught:
        lacking.append(
            ("no_tutorial", f"no tutorial pair for: {', '.join(untaught)} (admin: Tutorial pairs)")
        )
    unscored = unscored_reference_videos(study=study)
    if unscored:
        names = ", ".join(v.original_name or str(v.public_id) for v in unscored[:5])
        more = f" and {len(unscored) - 5} more" if len(unscored) > 5 else ""
        lacking.append(
            (
                "unscored_reference",
                f"{len(unscored)} golden or qualification video(s) lack the experts' score "
                f"of some dimension ({names}{more}): the golden gate and the qualification "
                "test leave their answers out until the scores are added (Stimuli, each "
                "video's Expert scores)",
            )
        )
    return lacking
