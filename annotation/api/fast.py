"""The two requests every answer costs (next item, answer), answered without DRF.

Under load these two are nearly all the traffic, and DRF's request wrapping, content
negotiation and the ORM's query building cost more than the work itself. Here they are
served from one query (next) or two (answer) when the rater is simply rating: an active
session, off break, and the answer for the item to rate now. Anything else, every
refusal included, returns None and goes to the DRF view, which decides, answers and logs
the refusal. So the rules live in one place; this module only recognises the common case
and answers it exactly as the DRF view would.
"""

from __future__ import annotations

import json

from django.db import connection
from django.http import HttpRequest, HttpResponse
from rest_framework.authentication import CSRFCheck

from annotation.designs import DESIGNS
from annotation.designs.slider import check_scores, stimulus_payload
from annotation.dimensions import dimensions_of
from annotation.errors import ApplicationError
from annotation.selectors import RatingPosition, rating_position, seconds_until, window_payload
from annotation.services.answers import check_envelope
from annotation.services.slider_fast_path import slider_submit_current

# DRF's JSON renderer writes compact UTF-8.
_encoder = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
_JSON_MEDIA = {"application/json", "*/*"}


def _json_response(body: dict, status: int, *, allow: str) -> HttpResponse:
    """As DRF's JSON renderer and view would send it, headers included."""
    content = _encoder.encode(body).replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    response = HttpResponse(content.encode(), content_type="application/json", status=status)
    response["Allow"] = allow
    response["Vary"] = "Accept"
    return response


def _json_wanted(request: HttpRequest) -> bool:
    """DRF would answer JSON too: no format override, and an Accept header that names
    only JSON or anything (a browser asking for HTML gets DRF's browsable page)."""
    if request.META.get("QUERY_STRING"):
        return False
    for media_range in request.META.get("HTTP_ACCEPT", "*/*").split(","):
        media, _, params = media_range.partition(";")
        if media.strip() not in _JSON_MEDIA or (params and not params.strip().startswith("q=")):
            return False
    return True


def _applies(request: HttpRequest, method: str) -> bool:
    """The fast path serves one method, JSON, on PostgreSQL (the answer's single
    statement uses PostgreSQL's UPDATE ... RETURNING inside a CTE); the embedded SQLite
    default always goes through DRF."""
    return request.method == method and connection.vendor == "postgresql" and _json_wanted(request)


def _csrf_refused(request: HttpRequest) -> bool:
    check = CSRFCheck(lambda _: None)
    check.process_request(request)
    return check.process_view(request, None, (), {}) is not None


def _position(request: HttpRequest, slug: str, *, unsafe: bool) -> RatingPosition | None:
    """The rater's position, found as DRF's authenticators would find the user: a forced
    user (DRF's test client), the session (with its CSRF check on unsafe methods), then
    an API token. None when DRF should decide."""
    forced = getattr(request, "_force_auth_user", None)
    if forced is not None:
        return rating_position(slug=slug, user_id=forced.pk)
    user = request.user
    if user.is_authenticated and user.is_active:
        if unsafe and _csrf_refused(request):
            return None
        return rating_position(slug=slug, user_id=user.pk)
    keyword, _, key = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
    if keyword.lower() != "token" or not key.isascii() or not key.isalnum() or len(key) > 40:
        return None
    return rating_position(slug=slug, token_key=key)


def _served(position: RatingPosition | None) -> bool:
    """The common case this module answers: a rater simply rating a study whose design's
    answers are slider scores (one video per item, as the position query reads it)."""
    return position is not None and position.rating_open and DESIGNS[position.design].fast_path


def fast_next(request: HttpRequest, slug: str) -> HttpResponse | None:
    """GET next/ for a rater in an active session: the window of items to rate from now,
    or the break."""
    if not _applies(request, "GET"):
        return None
    position = _position(request, slug, unsafe=False)
    if not _served(position):
        return None
    left = seconds_until(position.break_until)
    items, ends = ([], "break") if left else position.window()
    payloads = [stimulus_payload(item) for item in items]
    following = position.upcoming[1:2] if items else ()
    preload = None
    if following:  # the window's second item, or the one after a window of one
        preload = payloads[1] if len(payloads) > 1 else stimulus_payload(following[0])
    body = {
        "step": "break" if left else "rating",
        "position": position.position,
        "length": position.length,
        "break_seconds_left": left,
        **window_payload(payloads, preload=preload, ends=ends, rest_seconds=position.rest_seconds),
        "completion": None,
    }
    return _json_response(body, 200, allow="GET, HEAD, OPTIONS")


def _strict_constant(name: str) -> float:
    raise ValueError(f"{name} is not valid JSON")


def _json_body(request: HttpRequest) -> object:
    """The body as DRF's JSON parser reads it (NaN and Infinity refused), or None."""
    if request.content_type != "application/json":
        return None
    if request.content_params.get("charset", "utf-8").lower() not in ("utf-8", "utf8"):
        return None
    try:
        return json.loads(request.body.decode(), parse_constant=_strict_constant)
    except (ValueError, RecursionError):  # DRF's path refuses it, saying why
        return None


def fast_answer(request: HttpRequest, slug: str) -> HttpResponse | None:
    """POST answers/ with a valid answer for the item to rate now, not the session's last."""
    if not _applies(request, "POST"):
        return None
    position = _position(request, slug, unsafe=True)
    if not _served(position) or seconds_until(position.break_until):
        return None
    data = _json_body(request)
    try:
        envelope = check_envelope(data)
    except ApplicationError:
        return None
    # The values are looked at only for the item to rate now: any other goes to the DRF
    # view, which refuses an item not the rater's whatever its values (services/answers).
    if envelope.item != position.current.public_id:
        return None
    dimensions = dimensions_of(position.study_id)
    try:
        scores = check_scores(data=data, scale=position, dimensions=dimensions)
    except ApplicationError:
        return None
    stored = slider_submit_current(
        position=position, envelope=envelope, scores=scores.scores, dimensions=dimensions
    )
    if stored is None:
        return None
    left = seconds_until(stored.break_until)
    body = {
        "status": "stored",
        "step": "break" if left else "rating",
        "position": stored.position,
        "length": position.length,
        "break_seconds_left": left,
    }
    return _json_response(body, 201, allow="POST, OPTIONS")
