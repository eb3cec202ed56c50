"""The Celery application shared by the web process and every worker.

Queues: `default` (analysis, bookkeeping), `media` (ffmpeg transcodes) and `gpu`
(metric scoring). Long tasks run on their own queues with prefetch 1, see
docker-compose.yml for the worker commands.
"""

import os

from celery import Celery

# The server processes (Celery here, gunicorn in config/wsgi.py) default to production,
# which refuses to start without a real secret key, so one started without the variable
# never runs with DEBUG and a known key. Importing the `config` package runs this line
# first, so it also decides config/wsgi.py's default; manage.py sets local before.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

app = Celery("mosaic")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
