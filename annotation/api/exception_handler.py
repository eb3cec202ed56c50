"""Every refusal of the API in one shape, `{"error": CODE, "detail": TEXT, ...}`, logged.

ApplicationError carries its own code. DRF's own refusals (a body that is not JSON or
carries NaN or Infinity, a missing sign-in, a failed CSRF check, a wrong method) get a
code of the same family (docs/rater-api.md, "Errors"); a serializer's field errors stay
under `fields`.
"""

import logging

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404, JsonResponse
from django.views import defaults
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler

from annotation.errors import ApplicationError

logger = logging.getLogger("mosaic.api")

# DRF's exception classes, most specific first, and the codes the API documents for them.
_DRF_CODES = (
    (exceptions.ParseError, "invalid"),
    (exceptions.ValidationError, "invalid"),
    (exceptions.NotAuthenticated, "not_authenticated"),
    (exceptions.AuthenticationFailed, "authentication_failed"),
    (exceptions.PermissionDenied, "forbidden"),
    (exceptions.NotFound, "not_found"),
    (Http404, "not_found"),  # get_object_or_404: DRF answers it as its NotFound
    (DjangoPermissionDenied, "forbidden"),
    (exceptions.MethodNotAllowed, "method_not_allowed"),
    (exceptions.NotAcceptable, "not_acceptable"),
    (exceptions.UnsupportedMediaType, "unsupported_media_type"),
    (exceptions.Throttled, "throttled"),
)


def _log(level: int, request, refusal: str) -> None:
    logger.log(
        level,
        "refused %s %s for user %s: %s",
        getattr(request, "method", "?"),
        getattr(request, "path", "?"),
        getattr(getattr(request, "user", None), "pk", None),
        refusal,
    )


def _drf_code(exc: Exception) -> str:
    if isinstance(exc, exceptions.PermissionDenied) and str(exc.detail).startswith("CSRF Failed"):
        return "csrf_failed"  # the page's CSRF cookie is gone: it signs in again
    return next((code for cls, code in _DRF_CODES if isinstance(exc, cls)), "invalid")


def _detail(data: object) -> str:
    """A readable sentence of DRF's error data (a string, a list or a dict of fields)."""
    if isinstance(data, dict):
        return "; ".join(f"{key}: {_detail(value)}" for key, value in data.items())
    if isinstance(data, list):
        return " ".join(_detail(value) for value in data)
    return str(data)


def application_exception_handler(exc, context):
    request = context.get("request")
    if isinstance(exc, ApplicationError):
        _log(logging.WARNING, request, exc.message)
        return Response({"error": exc.code, "detail": exc.message, **exc.extra}, status=exc.status)
    response = exception_handler(exc, context)
    if response is None or response.status_code < 400:
        return response
    data = response.data
    body = {"error": _drf_code(exc)}
    if isinstance(data, dict) and set(data) == {"detail"}:
        body["detail"] = str(data["detail"])
    else:
        body["detail"] = _detail(data)
        body["fields"] = data
    _log(logging.INFO, request, f"{response.status_code} {body['detail']}")
    response.data = body
    return response


def _api_path(request) -> bool:
    return request.path.startswith("/api/")


def not_found(request, exception=None):
    """Django's 404 (handler404): an address under /api/ that no route matches (a typo,
    a missing trailing slash, an id that is not a number) answers in the API's shape, the
    site's page otherwise."""
    if not _api_path(request):
        return defaults.page_not_found(request, exception)
    _log(logging.INFO, request, "404 no such address")
    return JsonResponse(
        {"error": "not_found", "detail": f"no API address {request.path} (see /api/docs/)"},
        status=404,
    )


def server_error(request):
    """Django's 500 (handler500): in the API's shape under /api/ (the error is logged by
    Django with its traceback), the site's page otherwise."""
    if not _api_path(request):
        return defaults.server_error(request)
    return JsonResponse(
        {"error": "server_error", "detail": "the server failed; the team has the details"},
        status=500,
    )
