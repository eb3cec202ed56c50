from django.conf import settings
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from frontend.auth import login_throttled, site_login
from frontend.urls import media_urlpatterns, rater_urlpatterns

urlpatterns = [
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
    from django.conf.urls.static import static

    urlpatterns += static(settings.STATIC_URL, document_root=settings.STATIC_ROOT)
