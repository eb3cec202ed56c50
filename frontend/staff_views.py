"""Pages for admins (live monitor) and researchers (results); data comes from the API."""

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, render

from annotation.models import Study
from annotation.roles import is_admin, is_researcher


@login_required
def monitor(request, slug: str):
    if not is_admin(request.user):
        raise PermissionDenied("only admins see the live monitor")
    study = get_object_or_404(Study, slug=slug)
    return render(request, "frontend/staff/monitor.html", {"study": study})


@login_required
def studies(request):
    if not is_researcher(request.user):
        raise PermissionDenied("only researchers and admins see studies")
    return render(
        request,
        "frontend/staff/studies.html",
        {"studies": Study.objects.order_by("name"), "is_admin": is_admin(request.user)},
    )


@login_required
def results(request, slug: str):
    from quality.api import latest_done_run
    from quality.plots import FIGURES

    if not is_researcher(request.user):
        raise PermissionDenied("only researchers and admins see results")
    study = get_object_or_404(Study, slug=slug)
    run = latest_done_run(study, None)
    summary = run.summary if run else {}
    return render(
        request,
        "frontend/staff/results.html",
        {
            "study": study,
            "run": run,
            "figures": FIGURES,
            "alpha": summary.get("alpha", {}),
            "correlation": summary.get("dimension_correlation", {}),
            "exports": ["mos.csv", "ratings.csv", "raters.csv", "provenance.json"],
        },
    )
