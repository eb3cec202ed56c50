"""Arrival through a crowd-marketplace link (Prolific convention)."""

from urllib.parse import quote

from django.conf import settings
from django.contrib.auth import login
from django.shortcuts import redirect, render

from annotation.errors import ApplicationError
from annotation.services.participation import rater_enter_marketplace, rater_enter_signed_in


def marketplace_entry(request, slug: str):
    """`/r/<slug>/?token=...&PROLIFIC_PID=...&STUDY_ID=...&SESSION_ID=...`: a marketplace
    participant arrives (and is signed in as that participant). Without PROLIFIC_PID the
    link is a study link: a signed-in rater takes part with their own account, and
    anybody else is asked to sign in first."""
    token = request.GET.get("token", "")
    try:
        if "PROLIFIC_PID" not in request.GET and request.user.is_authenticated:
            rater_enter_signed_in(user=request.user, slug=slug, token=token)
            return redirect("rater:study", slug=slug)
        if "PROLIFIC_PID" not in request.GET:
            return redirect(f"{settings.LOGIN_URL}?next={quote(request.get_full_path())}")
        user, _ = rater_enter_marketplace(
            slug=slug,
            token=token,
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
