"""The project's URLs plus the floor: a bare view that stores one idempotent row."""

import json

from django.db import connection
from django.http import JsonResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt

from config.urls import urlpatterns as project_urlpatterns


@csrf_exempt
def floor(request):
    key = json.loads(request.body)["client_uuid"]
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO bench_floor (client_uuid) VALUES (%s) ON CONFLICT DO NOTHING", [key]
        )
    return JsonResponse({"status": "stored"}, status=201)


urlpatterns = [path("bench/floor/", floor), *project_urlpatterns]
