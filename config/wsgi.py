import os

from django.core.wsgi import get_wsgi_application

# Production by default, as config/celery_app.py (imported first with the package) sets.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")
application = get_wsgi_application()
