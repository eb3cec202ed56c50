"""The Celery application shared by the web process and every worker.

Queues: `default` (analysis, bookkeeping), `media` (ffmpeg transcodes) and `gpu`
(metric scoring). Long tasks run on their own queues with prefetch 1, see
docker-compose.yml for the worker commands.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("mosaic")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
