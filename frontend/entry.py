"""Arrival through a crowd-marketplace link (Prolific convention)."""

from django.contrib.auth import login
from django.shortcuts import redirect, render

from annotation.errors import ApplicationError
from annotation.services.participation import rater_enter_marketplace


def marketplace_entry(request, slug: str):
    """`/r/<slug>/?token=...&PROLIFIC_PID=...&STUDY_ID=...&SESSION_ID=...`"""
    try:
        user, _ = rater_enter_marketplace(
            slug=slug,
            token=request.GET.get("token", ""),
            participant_id=request.GET.get("PROLIFIC_PID", ""),
            marketplace_study_id=request.GET.get("STUDY_ID", ""),
            marketplace_session_id=request.GET.get("SESSION_ID", ""),
        )
    except ApplicationError as exc:
        return render(
            request, "frontend/entry_refused.html", {"message": exc.message}, status=exc.status
        )
    login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    return redirect("rater:study", slug=slug)
