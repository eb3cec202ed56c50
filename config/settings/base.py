"""Settings shared by every environment, read from the environment (django-environ).

With no environment at all MOSaic runs embedded: SQLite under var/ and Celery
tasks executed in-process. Setting DATABASE_URL and CELERY_BROKER_URL switches to
PostgreSQL and Redis.
"""

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = environ.Env()
env_file = BASE_DIR / ".env"
if env_file.exists():
    environ.Env.read_env(str(env_file))
VAR_DIR = Path(env.str("MOSAIC_VAR_DIR", default=str(BASE_DIR / "var")))  # after .env

DEBUG = env.bool("DJANGO_DEBUG", default=False)
SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="insecure-embedded-default-key-change-me")
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "annotation",
    "quality",
    "media_pipeline",
    "frontend",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "config.security.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "frontend.context.roles",
            ],
        },
    },
]

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}"),
}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The embedded default. SQLite has no row locks (select_for_update does nothing): a
    # transaction takes the write lock when it begins, so two writers at once (a rater's
    # two tabs sending their queued answers) wait for each other, for up to 20 s, rather
    # than one failing with "database is locked" when its first write follows a read.
    # WAL lets pages read while an answer is written.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        transaction_mode="IMMEDIATE",
        timeout=20,
        init_command="PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
    )
DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("DATABASE_CONN_MAX_AGE", default=0))
# A persistent connection is checked before use, so a database restart costs no request.
DATABASES["default"]["CONN_HEALTH_CHECKS"] = env.bool("DATABASE_CONN_HEALTH_CHECKS", default=True)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"

LANGUAGE_CODE = "en"
# The languages MOSaic is translated into. Its texts are marked for translation, but no
# catalogue ships yet: a browser asking for German got Django's German for the words
# Django happens to know ("Aktion", "Ja", "Sitzung") amid English pages. Add a language
# here with its catalogue in locale/ (manage.py makemessages / compilemessages) and its
# config/formats module.
LANGUAGES = [("en", "English")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
FORMAT_MODULE_PATH = "config.formats"  # dates written Y-m-d H:i everywhere
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = VAR_DIR / "static"
MEDIA_URL = "/media/"
MEDIA_ROOT = Path(env.str("MOSAIC_MEDIA_ROOT", default=str(VAR_DIR / "media")))
# Videos are uploaded through the admin and the API; the limit is per file.
MOSAIC_MAX_UPLOAD_BYTES = env.int("MOSAIC_MAX_UPLOAD_BYTES", default=512 * 1024 * 1024)
# Pixels one transcode may encode, width x height x frames: a few KB can hold hours of
# 8K frames. 2e10 is 5 minutes of 1080p at 30 fps, 80 s of 4K at 30 fps: about 18
# minutes of a 4-core worker (libx264 medium encodes some 5 million pixels a second a
# core), inside MOSAIC_TRANSCODE_TIMEOUT_S; more would only time out, four times.
MOSAIC_MAX_DECODED_PIXELS = env.int("MOSAIC_MAX_DECODED_PIXELS", default=20_000_000_000)
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
# Local directory of metric checkpoints (CLIP, DINO); nothing is ever downloaded.
MOSAIC_WEIGHTS_DIR = Path(env.str("MOSAIC_WEIGHTS_DIR", default=str(VAR_DIR / "weights")))
# sha256 of each weight file, relative to MOSAIC_WEIGHTS_DIR, pinned by whoever installs
# the weights: "openai-clip-vit-base-patch32/model.safetensors=<sha256>,
# facebook-dino-vitb16/model.safetensors=<sha256>" (media_pipeline/metrics/registry.py).
MOSAIC_WEIGHT_SHA256 = env.dict("MOSAIC_WEIGHT_SHA256", default={})

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": [
        "annotation.api.parsers.JSONParser",  # DRF's, a body nested too deeply a 400
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "annotation.api.exception_handler.application_exception_handler",
    "DEFAULT_THROTTLE_RATES": {"login": "10/min"},
}
SPECTACULAR_SETTINGS = {
    "TITLE": "MOSaic API",
    "DESCRIPTION": "Subjective video-quality studies: rating, progress, analysis and exports.",
    "VERSION": "1.0.0",
    # Swagger UI's files from MOSaic's own static files (no CDN: the docs work offline
    # and under the Content-Security-Policy's script-src 'self')
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # the schema and the docs, signed-in researchers and admins only (annotation/roles.py)
    "SERVE_PERMISSIONS": ["annotation.roles.MayReadApiSchema"],
}

# Celery. Without a broker the embedded default runs tasks in-process (eagerly):
# a deliberate mode for the single-command demo, never a silent fallback when a
# configured broker is down.
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
if not CELERY_BROKER_URL:
    # Never contacted: every task runs eagerly. The host only keeps kombu from warning.
    CELERY_BROKER_URL = "memory://localhost/"
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_ROUTES = {
    "media_pipeline.tasks.transcode_stimulus": {"queue": "media"},
    "media_pipeline.tasks.score_stimulus": {"queue": "gpu"},
}
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ACKS_LATE = False  # set per task: only idempotent tasks ack late
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# ffmpeg's limit of one transcode; the transcode task's Celery limits follow it, 6
# minutes longer (media_pipeline.job_liveness.transcode_time_limits).
MOSAIC_TRANSCODE_TIMEOUT_S = env.int("MOSAIC_TRANSCODE_TIMEOUT_S", default=25 * 60)
# Longer than the longest task (a transcode: by default 31 minutes, and an hour more than
# a longer transcode time-out), so Redis does not hand a running task to a second worker.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env.int(
        "MOSAIC_VISIBILITY_TIMEOUT_S", default=max(2 * 3600, MOSAIC_TRANSCODE_TIMEOUT_S + 3600)
    )
}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Workers and beat log through LOGGING above (MOSAIC_LOG_LEVEL, INFO by default), as web
# does: Celery would otherwise take the root logger over at its own default, WARNING,
# and the services' INFO lines (videos settled, jobs sent again, runs) went nowhere.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_BEAT_SCHEDULE = {
    "requeue-stale-jobs": {"task": "media_pipeline.tasks.requeue_stale", "schedule": 120},
    # analysis runs and export jobs: a lost message sent again, an abandoned run ended
    "sweep-stale-requests": {"task": "quality.tasks.sweep_stale_requests", "schedule": 120},
    "sweep-verify-queues": {"task": "annotation.tasks.sweep_verify_queues", "schedule": 300},
    # adaptive collection: a review lost with the broker is made good within a minute
    "sweep-adaptive": {"task": "annotation.tasks.sweep_adaptive", "schedule": 60},
    "analyse-running-studies": {
        "task": "quality.tasks.analyse_running_studies",
        "schedule": env.int("MOSAIC_ANALYSIS_EVERY_S", default=900),
    },
}

# Each process's own memory unless CACHE_URL names one: enough for one process (the
# embedded default, the tests); production settings insist on a shared Redis cache.
CACHES = {
    "default": env.cache("CACHE_URL", default="locmemcache://mosaic"),
}

LOG_LEVEL = env.str("MOSAIC_LOG_LEVEL", default="INFO")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    # Django's own console handler (DEBUG only) wrote every django.request line a second
    # time, tracebacks included, before the root's: django's loggers keep only the root's.
    "loggers": {"django": {"handlers": [], "level": LOG_LEVEL, "propagate": True}},
}
# score jobs one gpu task takes together (one decoding pass over the batch)
MOSAIC_SCORE_BATCH = env.int("MOSAIC_SCORE_BATCH", default=8)
MOSAIC_LOGIN_MAX_FAILURES = env.int("MOSAIC_LOGIN_MAX_FAILURES", default=5)
MOSAIC_LOGIN_LOCKOUT_S = env.int("MOSAIC_LOGIN_LOCKOUT_S", default=15 * 60)
# What the rater's page downloads ahead of the item on screen, at most: items of its window,
# and bytes (a video larger than the budget streams when shown; docs/rater-api.md).
MOSAIC_RATER_AHEAD_ITEMS = env.int("MOSAIC_RATER_AHEAD_ITEMS", default=10)
MOSAIC_RATER_AHEAD_BYTES = env.int("MOSAIC_RATER_AHEAD_BYTES", default=64 * 1024 * 1024)
# Proxies in front of Django that each append the address they saw to X-Forwarded-For
# (nginx in docker-compose.yml: 1; a TLS terminator before it that appends too: 2). The
# client's address is then the entry that many from the right; 0: REMOTE_ADDR itself.
MOSAIC_PROXY_HOPS = env.int("MOSAIC_PROXY_HOPS", default=0)
