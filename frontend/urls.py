from django.urls import include, path

from frontend import entry, media, rater_urls, staff_views, views

app_name = "frontend"

urlpatterns = [
    path("", views.home, name="home"),
    path("r/<slug:slug>/", entry.marketplace_entry, name="marketplace-entry"),
    path("studies/", staff_views.studies, name="studies"),
    path("studies/<slug:slug>/monitor/", staff_views.monitor, name="monitor"),
    path("studies/<slug:slug>/results/", staff_views.results, name="results"),
    path("studies/<slug:slug>/audits/", staff_views.audits, name="audits"),
    path("studies/<slug:slug>/audits/<int:pk>/", staff_views.audit, name="audit"),
]

media_urlpatterns = [
    path("media/v/<uuid:public_id>/", media.video, name="media-video"),
    path("media/p/<uuid:public_id>/", media.poster, name="media-poster"),
]


rater_urlpatterns = [path("study/<slug:slug>/", include((rater_urls.urlpatterns, "rater")))]
