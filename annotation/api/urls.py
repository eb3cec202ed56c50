from django.urls import path

from annotation.api import rater, staff, views

app_name = "api"

rater_prefix = "rater/studies/<slug:slug>/"

urlpatterns = [
    path("health/", views.HealthView.as_view(), name="health"),
    path(f"{rater_prefix}state/", rater.StateView.as_view(), name="rater-state"),
    path(f"{rater_prefix}consent/", rater.ConsentView.as_view(), name="rater-consent"),
    path(f"{rater_prefix}withdraw/", rater.WithdrawView.as_view(), name="rater-withdraw"),
    path(f"{rater_prefix}tutorial/", rater.TutorialView.as_view(), name="rater-tutorial"),
    path(
        f"{rater_prefix}tutorial/done/",
        rater.TutorialDoneView.as_view(),
        name="rater-tutorial-done",
    ),
    path(f"{rater_prefix}next/", rater.NextItemView.as_view(), name="rater-next"),
    path(f"{rater_prefix}answers/", rater.AnswerView.as_view(), name="rater-answers"),
    path(f"{rater_prefix}problems/", rater.PlaybackProblemView.as_view(), name="rater-problems"),
    path("studies/", staff.StudyListView.as_view(), name="studies"),
    path("studies/<slug:slug>/progress/", staff.StudyProgressView.as_view(), name="progress"),
    path("studies/<slug:slug>/monitor/", staff.MonitorView.as_view(), name="monitor"),
    path("studies/<slug:slug>/problems/", staff.StudyProblemsView.as_view(), name="problems"),
    path("studies/<slug:slug>/sessions/", staff.SessionBuildView.as_view(), name="build-sessions"),
    path(
        "assignments/<int:pk>/pause/",
        staff.AssignmentActionView.as_view(action="pause"),
        name="assignment-pause",
    ),
    path(
        "assignments/<int:pk>/reopen/",
        staff.AssignmentActionView.as_view(action="reopen"),
        name="assignment-reopen",
    ),
    path(
        "assignments/<int:pk>/exclude/",
        staff.AssignmentActionView.as_view(action="exclude"),
        name="assignment-exclude",
    ),
    path(
        "assignments/<int:pk>/exclude-rater/",
        staff.ExcludeRaterView.as_view(),
        name="assignment-exclude-rater",
    ),
    path(
        "payments/<int:pk>/decision/", staff.PaymentDecisionView.as_view(), name="payment-decision"
    ),
]
