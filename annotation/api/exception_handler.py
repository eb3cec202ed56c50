"""Turns ApplicationError into a JSON answer, logged; everything else goes to DRF."""

import logging

from rest_framework.response import Response
from rest_framework.views import exception_handler

from annotation.errors import ApplicationError

logger = logging.getLogger("mosaic.api")


def application_exception_handler(exc, context):
    if isinstance(exc, ApplicationError):
        request = context.get("request")
        logger.warning(
            "refused %s %s for user %s: %s",
            getattr(request, "method", "?"),
            getattr(request, "path", "?"),
            getattr(getattr(request, "user", None), "pk", None),
            exc.message,
        )
        return Response({"error": exc.code, "detail": exc.message, **exc.extra}, status=exc.status)
    response = exception_handler(exc, context)
    if response is not None and response.status_code >= 400:
        logger.info("refused %s: %s", response.status_code, response.data)
    return response
