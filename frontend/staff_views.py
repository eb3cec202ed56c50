"""Pages for admins (live monitor, batch audits) and researchers (results); the monitor's
and the results' data come from the API, the audit pages are forms posting here."""

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render

from annotation.designs import design_of
from annotation.designs.questionnaire_answers import label_value
from annotation.designs.questionnaire_study import applicable, option_values, settings_of
from annotation.errors import ApplicationError, Conflict
from annotation.media_urls import media_urls
from annotation.models import (
    Answer,
    Assignment,
    BatchAudit,
    ExpertLabel,
    Item,
    Question,
    Study,
)
from annotation.overview import StudyProgress, studies_progress
from annotation.readiness import study_problems
from annotation.roles import is_admin, is_researcher
from annotation.services.audits import (
    audit_decide,
    audit_open,
    audit_passed_over,
    audit_queue,
    plan_characteristic,
)
from quality.stats.labels.exemplars import INVALID


@login_required
def monitor(request, slug: str):
    if not is_admin(request.user):
        raise PermissionDenied("only admins see the live monitor")
    study = get_object_or_404(Study, slug=slug)
    golden_label = design_of(study).golden_label
    return render(
        request,
        "frontend/staff/monitor.html",
        {"study": study, "golden_label": golden_label, "problems": study_problems(study=study)},
    )


@login_required
def studies(request):
    if not is_researcher(request.user):
        raise PermissionDenied("only researchers and admins see studies")
    studies = list(Study.objects.order_by("name"))
    progress = studies_progress(study_ids=[study.pk for study in studies])
    admin = is_admin(request.user)
    for study in studies:
        study.design_label = design_of(study).label
        study.audited = design_of(study).audited
        study.progress = progress.get(study.pk, StudyProgress())
        if admin:  # what each study still lacks (annotation.readiness)
            study.problems = study_problems(study=study)
    return render(request, "frontend/staff/studies.html", {"studies": studies, "is_admin": admin})


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
    from quality.models import AnalysisRun
    from quality.services import analysis_run_staleness

    if not is_researcher(request.user):
        raise PermissionDenied("only researchers and admins see results")
    study = get_object_or_404(Study, slug=slug)
    analysis = analysis_of(study)
    run = latest_done_run(study, None)
    summary = run.summary if run else {}
    # a run that failed since (a periodic one, or one started from this page): why
    failed = AnalysisRun.objects.filter(study=study, status=AnalysisRun.Status.FAILED)
    if run is not None:
        failed = failed.filter(created_at__gt=run.created_at)
    exports = [n for n in analysis.exports if run is not None or n not in analysis.run_exports]
    return render(
        request,
        "frontend/staff/results.html",
        {
            "study": study,
            "run": run,
            "failed": failed.order_by("-created_at").first(),
            "figures": {name: analysis.figures[name] for name in analysis.available(summary)},
            "exports": exports,
            "exclusions": exclusion_table(run.exclusions, analysis.rules) if run else None,
            "stale": analysis_run_staleness(run=run) if run else [],
            "design_template": analysis.results_template,
            "rows_noun": analysis.rows_noun,
            **(analysis.results_context(run=run) if run else {}),
        },
    )


# --- expert audits of questionnaire batches (annotation/services/audits.py) ---------------


def _audited_study(request, slug: str) -> Study:
    if not is_admin(request.user):
        raise PermissionDenied("only admins audit batches")
    study = get_object_or_404(Study, slug=slug)
    if not design_of(study).audited:
        raise Http404(f"a {study.design} study has no audits")
    return study


@login_required
def audits(request, slug: str):
    """The study's finished batches awaiting an audit, and the audits decided."""
    study = _audited_study(request, slug)
    decided = list(
        BatchAudit.objects.filter(assignment__session__study=study)
        .exclude(verdict=BatchAudit.Verdict.OPEN)
        .select_related("assignment__rater", "assignment__session", "auditor")
        .order_by("-decided_at")
    )
    return render(
        request,
        "frontend/staff/audits.html",
        {
            "study": study,
            "plan": settings_of(study),
            "queue": audit_queue(study=study),
            "passed_over": audit_passed_over(study=study),
            "decided": decided,
            "accepted": sum(a.verdict == BatchAudit.Verdict.ACCEPTED for a in decided),
            "rejected": sum(a.verdict == BatchAudit.Verdict.REJECTED for a in decided),
        },
    )


def answer_text(question: Question, value: object) -> str:
    """An answer in the question's own terms: a score on its scale, a level's label, the
    tags' labels, the comment."""
    if question.kind == Question.Kind.COMMENT:
        return str(value or "").strip() or "(no comment)"
    if question.kind == Question.Kind.SCORE:
        return f"{value:g} (scale {question.scale_min:g}–{question.scale_max:g})"
    labels = {option["value"]: option["label"] for option in question.options}
    if question.kind == Question.Kind.TAGS:
        return ", ".join(labels.get(tag, str(tag)) for tag in value or []) or "(no tag)"
    if value == INVALID:
        return "Invalid question"
    level = int(value) if float(value).is_integer() else value
    return f"{level} · {labels.get(level, '?')}"


def _given_text(question: Question, label) -> str:
    if label is None:  # a comment is optional; the rest were answered, or not asked
        return answer_text(question, "") if question.kind == Question.Kind.COMMENT else "–"
    return answer_text(question, label_value(label, question.kind, option_values(question)))


def _sampled_videos(audit: BatchAudit, typed: dict) -> list[dict]:
    """Each sampled video with the rater's answers and the experts' (where there are
    any), and its verdict: the one decided, or the one typed so far."""
    questions = list(
        Question.objects.filter(dimension__study_id=audit.assignment.session.study_id)
        .select_related("dimension")
        .order_by("dimension__order")
    )
    items = Item.objects.filter(pk__in=audit.sample).prefetch_related("members__stimulus")
    video_of = {item.pk: item.members.all()[0].stimulus for item in items}
    answers = Answer.objects.filter(
        assignment_id=audit.assignment_id, item_id__in=audit.sample
    ).prefetch_related("labels__tags")
    given = {
        answer.item_id: {label.dimension_id: label for label in answer.labels.all()}
        for answer in answers
    }
    experts: dict[int, dict[int, ExpertLabel]] = {}
    for label in ExpertLabel.objects.filter(stimulus__in=video_of.values()):
        experts.setdefault(label.stimulus_id, {})[label.dimension_id] = label
    decided = {finding["item"]: finding for finding in audit.findings}
    videos = []
    for number, item_id in enumerate(audit.sample, start=1):
        video = video_of[item_id]
        known = experts.get(video.pk, {})
        asked = applicable(video, questions)
        rows = []
        for question in asked:
            label = given.get(item_id, {}).get(question.dimension_id)
            expert = known.get(question.dimension_id)
            rows.append(
                {
                    "question": question.dimension.label,
                    "group": question.group,
                    "answer": _given_text(question, label),
                    "expert": answer_text(question, expert.value) if expert else "",
                    "expert_note": expert.note if expert else "",
                }
            )
        finding = decided.get(item_id)
        entry = typed.get(item_id, {})
        verdict = entry.get("verdict", "")
        if finding is not None:
            verdict = "wrong" if finding["wrong"] else "right"
        videos.append(
            {
                "number": number,
                "item": item_id,
                "media": media_urls(video),
                "prompt": video.prompt,
                "rows": rows,
                "has_experts": bool(known),
                "verdict": verdict,
                "note": finding["note"] if finding is not None else entry.get("note", ""),
                "missing": bool(typed) and not verdict,
            }
        )
    return videos


def _typed_findings(post, sample: list[int]) -> tuple[dict, dict]:
    """The findings the form sent, as audit_decide takes them, and as typed (for the
    page shown again after a refusal: nothing typed is lost)."""
    findings, typed = {}, {}
    for item_id in sample:
        verdict = post.get(f"verdict-{item_id}", "")
        note = post.get(f"note-{item_id}", "")
        typed[item_id] = {"verdict": verdict if verdict in ("right", "wrong") else "", "note": note}
        if typed[item_id]["verdict"]:
            findings[str(item_id)] = {"wrong": verdict == "wrong", "note": note}
    return findings, typed


@login_required
def audit(request, slug: str, pk: int):
    """One batch's audit: opened (its sample drawn) on the first visit, decided by the
    form; a decided audit is shown as it was decided."""
    study = _audited_study(request, slug)
    assignment = get_object_or_404(
        Assignment.objects.select_related("rater", "session"), pk=pk, session__study=study
    )
    context = {"study": study, "assignment": assignment}
    try:
        batch_audit = audit_open(assignment=assignment, by=request.user)
    except ApplicationError as exc:  # a batch not finished yet
        return render(
            request,
            "frontend/staff/audit.html",
            {**context, "refused": exc.message},
            status=exc.status,
        )
    typed, error, status, reason = {}, "", 200, ""
    if request.method == "POST":
        findings, typed = _typed_findings(request.POST, batch_audit.sample)
        reason = request.POST.get("reason", "")
        try:
            audit_decide(audit=batch_audit, findings=findings, reason=reason, by=request.user)
        except Conflict as exc:  # decided by another expert meanwhile: theirs stands
            batch_audit.refresh_from_db()
            typed, error, status = {}, exc.message, exc.status
        except ApplicationError as exc:
            error, status = exc.message, exc.status
        else:
            return redirect("frontend:audit", slug=study.slug, pk=assignment.pk)
    plan = plan_characteristic(
        sample_size=batch_audit.sample_size, acceptance_number=batch_audit.acceptance_number
    )
    return render(
        request,
        "frontend/staff/audit.html",
        {
            **context,
            "audit": batch_audit,
            "characteristic": [
                {
                    "defects": f"{row['defects']:.0%}",
                    "accept": f"{row['accept']:.1%}",
                    "exact": f"{float(row['accept']):.17g}",
                }
                for row in plan
            ],
            "videos": _sampled_videos(batch_audit, typed),
            "error": error,
            "reason": reason,
        },
        status=status,
    )
