from django.conf import settings
from django.contrib import admin
from django.http import HttpResponsePermanentRedirect
from django.templatetags.static import static
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from frontend.auth import login_throttled, site_login
from frontend.urls import media_urlpatterns, rater_urlpatterns


def favicon(request):
    """Pages that link no icon (the admin's, the browsable API's) are asked for
    /favicon.ico: MOSaic's own (resolved per request: the static files' manifest may not
    exist yet when the URLs are imported)."""
    return HttpResponsePermanentRedirect(static("frontend/favicon.svg"))


admin.site.site_header = "MOSaic administration"
admin.site.site_title = "MOSaic admin"
admin.site.index_title = "Studies, raters and results"

# Under /api/, a 404 or 500 answers in the API's {"error", "detail"} shape.
handler404 = "annotation.api.exception_handler.not_found"
handler500 = "annotation.api.exception_handler.server_error"

urlpatterns = [
    path("favicon.ico", favicon),
    # The admin's sign-in counts failures with the site's (frontend/auth.py).
    path("admin/login/", login_throttled(admin.site.login)),
    path("admin/", admin.site.urls),
    path("accounts/login/", site_login, name="login"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/", include("annotation.api.urls")),
    path("api/", include("quality.urls")),
    path("api/", include("media_pipeline.urls")),
    *media_urlpatterns,
    *rater_urlpatterns,
    path("", include("frontend.urls")),
]

if settings.DEBUG:
    from django.conf.urls.static import static as static_patterns

    urlpatterns += static_patterns(settings.STATIC_URL, document_root=settings.STATIC_ROOT)
