"""What the monitor shows of a study's adaptive collection (annotation.services.adaptive
settles the videos): the ratings collected against the fixed design's, the videos settled
and open, the widest intervals left, and one plain sentence on whether it is saving or
costing in this study so far."""

from __future__ import annotations

from django.db.models import Count

from annotation.models import (
    AdaptiveSettings,
    Answer,
    Assignment,
    Item,
    SessionItem,
    SettledStimulus,
    Stimulus,
    Study,
)
from annotation.services.adaptive import adaptive_settings_of
from annotation.services.adaptive_ratings import kept_answers

SETTLE_REASONS = tuple(SettledStimulus.Reason.values)
# Regular videos a session: below this, per-session z-scoring makes the Z-scored MOS of
# adaptive collection measurably less accurate than the fixed design's for the same
# ratings (bench/adaptive.py, part 1c: about 2 % more RMSE at 10 videos, none at 50).
SHORT_SESSION = 50


def adaptive_summary(*, study: Study) -> dict | None:
    """The monitor's adaptive panel, None when adaptive collection is off.

    Counts are of kept ratings of regular videos (one rating scores every dimension of a
    video). The fixed design, the baseline, rates every regular video ``fixed_ratings``
    times (GAIA: 35). The verdict compares, on the settled videos, the kept ratings they
    took (those counted after they settled included) with ``fixed_ratings`` each, and counts
    every open video at the cap: the saving it states is what adaptive collection has
    secured so far, never a forecast that later ratings could undo.
    """
    if adaptive_settings_of(study=study) is None:
        return None
    # read again: the review writes its figures through another instance
    settings = AdaptiveSettings.objects.get(study=study)
    cap, each = settings.max_ratings, settings.fixed_ratings
    videos = (
        Stimulus.objects.filter(study=study, role=Stimulus.Role.STIMULUS)
        .exclude(status=Stimulus.Status.FAILED)
        .count()
    )
    settled = SettledStimulus.objects.filter(stimulus__study=study)
    by_reason = dict(settled.values_list("reason").annotate(count=Count("pk")).order_by())
    settled_count = sum(by_reason.values())
    kept = kept_answers(study=study)
    collected = kept.count()
    on_settled = kept.filter(item__members__stimulus__settled__isnull=False).count()
    awaiting = Answer.objects.filter(
        item__study=study,
        item__role=Item.Role.STIMULUS,
        assignment__state__in=[Assignment.State.ACTIVE, Assignment.State.PAUSED],
    ).count()
    fixed_on_settled = settled_count * each
    saving = fixed_on_settled - on_settled
    fixed = videos * each
    review = settings.review or {}
    verdict = "too_early" if not settled_count else ("saving" if saving > 0 else "costing")
    return {
        "plan": settings.plan,
        "target_half_width": settings.target_half_width,
        "min_ratings": settings.min_ratings,
        "max_ratings": cap,
        "fixed_ratings": each,
        "alpha": settings.alpha,
        "videos": videos,
        "videos_settled": settled_count,
        "videos_open": videos - settled_count,
        "settled_by_reason": {reason: by_reason.get(reason, 0) for reason in SETTLE_REASONS},
        "ratings_collected": collected,
        "ratings_awaiting_gate": awaiting,
        "ratings_on_settled": on_settled,
        "fixed_design_ratings": fixed,
        "fixed_on_settled": fixed_on_settled,
        "projected_ratings": on_settled + (videos - settled_count) * cap,
        "saving": saving,
        "saving_share": round(saving / fixed, 4) if fixed else 0.0,
        "verdict": verdict,
        "sentence": _verdict_sentence(
            verdict=verdict,
            settings=settings,
            settled=settled_count,
            at_cap=by_reason.get(SettledStimulus.Reason.CAP, 0),
            on_settled=on_settled,
            saving=saving,
            fixed=fixed,
            collected=collected,
        ),
        "sessions_note": _sessions_note(_session_length(study, videos)),
        "open_rated": review.get("open_rated", 0),
        "widest_open": _named(review.get("widest_open", [])),
        "reviewed_at": settings.reviewed_at.isoformat() if settings.reviewed_at else None,
    }


def _named(rows: list[dict]) -> list[dict]:
    """The review's widest intervals, each with its video's file name (``name``) beside
    the id the review keeps."""
    names = dict(
        Stimulus.objects.filter(pk__in=[row["video_id"] for row in rows]).values_list(
            "pk", "original_name"
        )
    )
    return [{**row, "name": names.get(row["video_id"]) or f"#{row['video_id']}"} for row in rows]


def _session_length(study: Study, videos: int) -> int:
    """Regular videos in the study's longest session: the session size, unless the study
    has fewer videos than that (GAIA's last session is shorter; the longest counts)."""
    lengths = (
        SessionItem.objects.filter(session__study=study, is_golden=False)
        .values("session")
        .annotate(length=Count("pk"))
        .values_list("length", flat=True)
    )
    return max(lengths, default=min(study.session_size, videos))


def _sessions_note(size: int) -> str:
    """The session size, and what a short one costs the Z-scored MOS (SHORT_SESSION).

    Per-session z-scoring estimates a session's mean and spread on its own videos; with
    few videos that adds to each rating an error the stopping rule cannot see, and a
    design that gives disputed videos more ratings and settled ones fewer then loses to
    one spreading the same ratings evenly (bench/adaptive.py, ``zmos_by_session_size``)."""
    each = f"{size} video{'s' if size != 1 else ''} each"
    if size >= SHORT_SESSION:
        return each
    return (
        f"{each}: sessions this short make the Z-scored MOS of adaptive collection less "
        "accurate than the fixed design's for the same ratings (per-session z-scoring); "
        f"sessions of {SHORT_SESSION} videos or more keep it as accurate"
    )


def _verdict_sentence(
    *,
    verdict: str,
    settings: AdaptiveSettings,
    settled: int,
    at_cap: int,
    on_settled: int,
    saving: int,
    fixed: int,
    collected: int,
) -> str:
    each = settings.fixed_ratings
    if verdict == "too_early":
        return (
            f"No video has settled yet, so nothing is saved so far ({collected} kept ratings; "
            f"a video settles after at least {settings.min_ratings})."
        )
    videos = f"{settled} settled video{'s' if settled != 1 else ''}"
    if verdict == "saving":
        sentence = (
            f"Adaptive collection is saving: {videos} took {on_settled} kept ratings where "
            f"the fixed design spends {settled * each} ({each} each), {saving} fewer "
            f"({saving / (settled * each):.0%} of those); so far that is "
            f"{saving / fixed:.0%} of the {fixed} the fixed design spends on the study."
        )
    else:
        sentence = (
            f"Adaptive collection is costing: {videos} took {on_settled} kept ratings, "
            f"{-saving} more than the fixed design's {settled * each} ({each} each), "
            "and its intervals are wider than the fixed design's for the same ratings."
        )
    if at_cap * 2 >= settled:
        sentence += (
            f" {at_cap} of {settled} settled only at the cap: a target of "
            f"+-{settings.target_half_width:g} is too narrow for this study's spread of "
            "scores; widen it or switch adaptive collection off."
        )
    return sentence
