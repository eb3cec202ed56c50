from django.db.models import Q
from django.shortcuts import render

from annotation.designs import design_of
from annotation.models import Participation, Study
from annotation.roles import is_researcher


def home(request):
    """The running studies, each with the pages the user's role opens: every one for
    researchers and admins; for a rater those they may enter without a link (open to
    every signed-in rater, or already taking part) and have not withdrawn from; none for
    a visitor not signed in (a study's name is its team's to publish)."""
    running = Study.objects.filter(state=Study.State.RUNNING).order_by("name")
    researcher = is_researcher(request.user)  # given to the page: the bar asks it too
    if researcher:
        studies = running
    elif request.user.is_authenticated:
        withdrawn = Participation.objects.filter(
            rater__user=request.user, withdrawn_at__isnull=False
        ).values("study_id")
        studies = (
            running.filter(Q(open_to_signed_in=True) | Q(participations__rater__user=request.user))
            .exclude(pk__in=withdrawn)
            .distinct()
        )
    else:
        studies = running.none()
    studies = list(studies)
    for study in studies:
        study.audited = design_of(study).audited  # the Audits page's link
    context = {"studies": studies, "is_researcher": researcher}
    return render(request, "frontend/home.html", context)
