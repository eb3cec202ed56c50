from django.urls import path

from media_pipeline import api

app_name = "media_api"

urlpatterns = [
    path("studies/<slug:slug>/stimuli/", api.StimulusUploadView.as_view(), name="upload"),
]
