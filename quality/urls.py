from django.urls import path

from quality import api

urlpatterns = [
    path(
        "studies/<slug:slug>/analysis-runs/",
        api.AnalysisRunListView.as_view(),
        name="analysis-runs",
    ),
    path("analysis-runs/<int:pk>/", api.AnalysisRunDetailView.as_view(), name="analysis-run"),
    path(
        "analysis-runs/<int:pk>/figures/<slug:name>.png",
        api.FigureView.as_view(),
        name="analysis-figure",
    ),
    path("studies/<slug:slug>/exports/<str:name>", api.ExportView.as_view(), name="export"),
    path(
        "studies/<slug:slug>/export-jobs/",
        api.ExportJobListView.as_view(),
        name="export-jobs",
    ),
    path("export-jobs/<int:pk>/", api.ExportJobDetailView.as_view(), name="export-job"),
    path(
        "export-jobs/<int:pk>/download",
        api.ExportJobDownloadView.as_view(),
        name="export-job-download",
    ),
]
