from django.db import connection
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView


class HealthView(APIView):
    """Liveness for load balancers and docker-compose health checks: the database answers."""

    permission_classes = [AllowAny]
    authentication_classes: list = []

    class HealthSerializer(serializers.Serializer):
        status = serializers.CharField()

    @extend_schema(responses=HealthSerializer)
    def get(self, request):
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return Response({"status": "ok"})
