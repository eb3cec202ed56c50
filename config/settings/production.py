"""Production: every secret from the environment; refuses to start without one."""

import os

from django.core.exceptions import ImproperlyConfigured

from config.settings.base import *  # noqa: F403
from config.settings.base import CELERY_BROKER_URL, CELERY_TASK_ALWAYS_EAGER, DATABASES, env

DEBUG = False
# Read as it is: django-environ would take a key starting with "$" for the name of
# another variable (its proxy syntax) and find nothing there.
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "")
if not SECRET_KEY or SECRET_KEY.startswith("insecure") or len(SECRET_KEY) < 50:
    raise ImproperlyConfigured(
        "DJANGO_SECRET_KEY must be set in the environment (at least 50 random characters) "
        "for production settings."
    )
# Words of the placeholder in deploy/env.example and of the usual "change me" values: a
# random key of 50+ characters contains none of them by chance.
_placeholder_words = ("replace", "change", "example", "placeholder", "secret-key")
if len(set(SECRET_KEY)) < 5 or any(word in SECRET_KEY.lower() for word in _placeholder_words):
    raise ImproperlyConfigured(
        "DJANGO_SECRET_KEY is a placeholder (the value from deploy/env.example or another "
        "made-up one): make a random key, e.g. with "
        '`python3 -c "import secrets; print(secrets.token_urlsafe(50))"`.'
    )
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS")
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
MOSAIC_PROXY_HOPS = env.int("MOSAIC_PROXY_HOPS", default=1)  # nginx (docker-compose.yml)
SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=True)
# The container's health check (config/healthcheck.py) asks gunicorn over plain http.
SECURE_REDIRECT_EXEMPT = [r"^api/health/$"]
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", default=31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
# Preloading asks browser makers (hstspreload.org) to build https-only for this domain
# and every subdomain into browsers; leaving that list takes months, so it is an
# admin's decision (docs/admins.md), off by default. Off, Django's deploy check warns
# (security.W021) about what was decided on purpose: that warning is silenced.
SECURE_HSTS_PRELOAD = env.bool("DJANGO_SECURE_HSTS_PRELOAD", default=False)
if not SECURE_HSTS_PRELOAD:
    SILENCED_SYSTEM_CHECKS = ["security.W021"]
SECURE_CONTENT_TYPE_NOSNIFF = True
# The web server (nginx) hands out media files after Django checked access.
MOSAIC_MEDIA_ACCEL_REDIRECT = env.str("MOSAIC_MEDIA_ACCEL_REDIRECT", default="/protected-media/")
# The embedded defaults (SQLite under var/, tasks run in the web process) are for one
# machine's demo: production without DATABASE_URL or CELERY_BROKER_URL is a mistake, and
# would otherwise run quietly on them (a transcode inside a web request that times out).
if DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
    raise ImproperlyConfigured(
        "production settings need PostgreSQL: set DATABASE_URL (e.g. "
        "postgres://mosaic:PASSWORD@postgres:5432/mosaic, the password URL-encoded)."
    )
if CELERY_TASK_ALWAYS_EAGER:
    raise ImproperlyConfigured(
        "production settings need a broker for the workers: set CELERY_BROKER_URL (e.g. "
        "redis://redis:6379/0); without one every task would run inside a web request."
    )
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DATABASE_CONN_MAX_AGE", default=60)
# psycopg 3 binds parameters on the server and prepares a query once it has run a few
# times on a connection, so the queries every answer runs are planned once per
# connection instead of on every request. Needs a direct connection to PostgreSQL (no
# transaction-pooling proxy such as PgBouncer in between); set
# DATABASE_PREPARED_STATEMENTS=false where there is one.
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and env.bool(
    "DATABASE_PREPARED_STATEMENTS", default=True
):
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        server_side_binding=True, prepare_threshold=5
    )

# The sign-in throttle counts failures in the cache, so every gunicorn worker (and every
# web container) must share it: CACHE_URL, else the broker's Redis; never in-process.
_cache_url = env.str("CACHE_URL", default="") or (
    CELERY_BROKER_URL if CELERY_BROKER_URL.startswith(("redis://", "rediss://")) else ""
)
if not _cache_url.startswith(("redis://", "rediss://")):
    raise ImproperlyConfigured(
        "production settings need a cache shared by all workers: set CACHE_URL "
        "(e.g. redis://redis:6379/1) or a Redis CELERY_BROKER_URL."
    )
CACHES = {
    "default": env.cache_url_config(
        _cache_url, backend="django.core.cache.backends.redis.RedisCache"
    ),
}
