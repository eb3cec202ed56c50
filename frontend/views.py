from django.shortcuts import render

from annotation.models import Study


def home(request):
    studies = Study.objects.filter(state=Study.State.RUNNING).order_by("name")
    return render(request, "frontend/home.html", {"studies": studies})
