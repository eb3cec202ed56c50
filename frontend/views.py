from django.db.models import Q
from django.shortcuts import render

from annotation.models import Study
from annotation.roles import is_researcher


def home(request):
    """The running studies; signed in, each with the pages the user's role opens. A rater
    is offered the studies they may enter without a link: those open to every signed-in
    rater, and those they already take part in."""
    studies = Study.objects.filter(state=Study.State.RUNNING).order_by("name")
    researcher = is_researcher(request.user)  # given to the page: the bar asks it too
    enterable = set()
    if request.user.is_authenticated and not researcher:
        enterable = set(
            studies.filter(
                Q(open_to_signed_in=True) | Q(participations__rater__user=request.user)
            ).values_list("pk", flat=True)
        )
    context = {"studies": studies, "enterable": enterable, "is_researcher": researcher}
    return render(request, "frontend/home.html", context)
