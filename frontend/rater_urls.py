"""The rater's pages, included by frontend/urls.py under `study/<slug:slug>/` (namespace
`rater`)."""

from django.urls import path

from frontend import rater_views

urlpatterns = [
    path("", rater_views.study_page, name="study"),
]
