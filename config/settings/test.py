"""Settings for the test suite: PostgreSQL on the local server, as in production."""

from config.settings.base import *  # noqa: F403
from config.settings.base import STATIC_ROOT, env

DATABASES = {
    "default": env.db("DATABASE_URL", default="postgres://postgres@127.0.0.1:5432/postgres"),
}
DATABASES["default"]["TEST"] = {"NAME": env.str("MOSAIC_TEST_DB", default="test_mosaic")}
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="redis://127.0.0.1:6379/15")
# Unit tests run tasks in-process; the pipeline tests start a real worker on Redis.
CELERY_TASK_ALWAYS_EAGER = env.bool("MOSAIC_TEST_EAGER", default=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# Static files straight from the apps (no collectstatic needed on one machine).
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
