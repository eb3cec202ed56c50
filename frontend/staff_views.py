"""Pages for admins (live monitor) and researchers (results); data comes from the API."""

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, render

from annotation.designs import design_of
from annotation.models import Study
from annotation.roles import is_admin, is_researcher


@login_required
def monitor(request, slug: str):
    if not is_admin(request.user):
        raise PermissionDenied("only admins see the live monitor")
    study = get_object_or_404(Study, slug=slug)
    golden_label = design_of(study).golden_label
    return render(
        request, "frontend/staff/monitor.html", {"study": study, "golden_label": golden_label}
    )


@login_required
def studies(request):
    if not is_researcher(request.user):
        raise PermissionDenied("only researchers and admins see studies")
    return render(
        request,
        "frontend/staff/studies.html",
        {"studies": Study.objects.order_by("name"), "is_admin": is_admin(request.user)},
    )


def exclusion_table(stored: list[dict], rules: tuple[str, ...]) -> dict:
    """The run's exclusions for the template: a count per rule of the design (raters,
    sessions, answers left out), then every exclusion with its reason and who decided."""
    from quality.stats.exclusions import RULE_LABELS, Exclusion

    exclusions = [Exclusion.from_dict(e) for e in stored]
    counts = []
    for rule in rules:
        mine = [e for e in exclusions if e.rule == rule]
        counts.append(
            {
                "rule": rule,
                "label": RULE_LABELS[rule],
                "raters": len({e.rater_id for e in mine}),
                "sessions": sum(e.session is not None for e in mine),
                "ratings": sum(e.ratings for e in mine),
            }
        )
    rows = [{**e.as_dict(), "label": RULE_LABELS.get(e.rule, e.rule)} for e in exclusions]
    return {"counts": counts, "rows": rows}


@login_required
def results(request, slug: str):
    from quality.api import latest_done_run
    from quality.designs import analysis_of
    from quality.services import analysis_run_staleness

    if not is_researcher(request.user):
        raise PermissionDenied("only researchers and admins see results")
    study = get_object_or_404(Study, slug=slug)
    analysis = analysis_of(study)
    run = latest_done_run(study, None)
    summary = run.summary if run else {}
    exports = [n for n in analysis.exports if run is not None or n not in analysis.run_exports]
    return render(
        request,
        "frontend/staff/results.html",
        {
            "study": study,
            "run": run,
            "figures": {name: analysis.figures[name] for name in analysis.available(summary)},
            "exports": exports,
            "exclusions": exclusion_table(run.exclusions, analysis.rules) if run else None,
            "stale": analysis_run_staleness(run=run) if run else [],
            "design_template": analysis.results_template,
            "rows_noun": analysis.rows_noun,
            **(analysis.results_context(run=run) if run else {}),
        },
    )
