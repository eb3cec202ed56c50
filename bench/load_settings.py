"""Settings for bench/load.py: production settings on loopback, plus the floor view."""

from config.settings.production import *  # noqa: F403

ROOT_URLCONF = "bench.load_urls"
SECURE_SSL_REDIRECT = False
SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False
LOGGING = {"version": 1, "disable_existing_loggers": True, "root": {"level": "ERROR"}}
