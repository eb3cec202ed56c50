"""The embedded default: SQLite, in-process tasks, DEBUG on. For one machine only."""

from config.settings.base import *  # noqa: F403
from config.settings.base import STATIC_ROOT, VAR_DIR, env

DEBUG = env.bool("DJANGO_DEBUG", default=True)
VAR_DIR.mkdir(parents=True, exist_ok=True)

# Static files straight from the apps (no collectstatic needed on one machine).
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
