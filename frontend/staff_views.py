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


def agreement_table(agreement: dict | None) -> dict | None:
    """GAIA Tab. 5 for the template: one row per metric, one (SRCC, PLCC, n) cell per
    target, then the trained predictor's rows (n: the stimuli with every feature)."""
    if not agreement:
        return None
    targets = list(dict.fromkeys(row["target"] for row in agreement["rows"]))
    cells: dict[str, dict[str, dict]] = {}
    for row in agreement["rows"]:
        cells.setdefault(row["metric"], {})[row["target"]] = row
    rows = [
        {"metric": metric, "cells": [by_target.get(t) for t in targets]}
        for metric, by_target in sorted(cells.items())
    ]
    trained = agreement.get("ridge") or {}
    if trained:
        features = next(iter(trained.values()))["features"]
        rows.append(
            {
                "metric": "ridge (" + ", ".join(features) + ")",
                "trained": True,
                "cells": [
                    {
                        "srcc": trained[t]["srcc_mean"],
                        "plcc": trained[t]["plcc_mean"],
                        "n": trained[t].get("n", agreement.get("n")),
                    }
                    if t in trained
                    else None
                    for t in targets
                ],
            }
        )
    return {"targets": targets, "rows": rows, "stimuli": agreement.get("stimuli")}


RULE_LABELS = {
    "admin_excluded_rater": "rater excluded by an admin",
    "admin_excluded_session": "session excluded by an admin",
    "golden_gate_failed": "session failed the golden gate",
    "line_clicker": "line clicker (found by the run)",
}


def exclusion_table(stored: list[dict]) -> dict:
    """The run's exclusions for the template: a count per rule (raters, sessions, ratings
    left out), then every exclusion with its reason and who decided."""
    from quality.stats.exclusions import RULES, Exclusion

    exclusions = [Exclusion.from_dict(e) for e in stored]
    counts = []
    for rule in RULES:
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
    from quality.export import EXPORT_NAMES, RUN_EXPORTS
    from quality.plots import FIGURES, available
    from quality.services import analysis_run_staleness

    if not is_researcher(request.user):
        raise PermissionDenied("only researchers and admins see results")
    study = get_object_or_404(Study, slug=slug)
    run = latest_done_run(study, None)
    summary = run.summary if run else {}
    exports = [n for n in EXPORT_NAMES if run is not None or n not in RUN_EXPORTS]
    exclusions = exclusion_table(run.exclusions) if run else None
    return render(
        request,
        "frontend/staff/results.html",
        {
            "study": study,
            "run": run,
            "figures": {name: FIGURES[name] for name in available(summary)},
            "alpha": summary.get("alpha", {}),
            "correlation": summary.get("dimension_correlation", []),
            "agreement": agreement_table(summary.get("metric_agreement")),
            "exports": exports,
            "exclusions": exclusions,
            "stale": analysis_run_staleness(run=run) if run else [],
        },
    )
