"""Sign-in with a limit on failed attempts per client address and user name.

The same limit guards both sign-in pages: the site's (/accounts/login/) and the Django
admin's (/admin/login/), see config/urls.py.
"""

from __future__ import annotations

import functools
import hashlib
import logging
from collections.abc import Callable

from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.views import LoginView
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

logger = logging.getLogger(__name__)


def normalised_username(raw: str) -> str:
    """The user name as the sign-in form cleans it before the backend looks it up.

    The form's UsernameField strips surrounding whitespace and applies NFKC, so "boss ",
    "boss  " and a full-width "ｂｏｓｓ" all sign in as boss and must share boss's counter.
    Case is folded on top: the backend matches case exactly, so folding only merges
    counters that could be kept apart, never splits one user's failures over several.
    """
    field = AuthenticationForm().fields["username"]  # with the max_length the form sets
    return field.to_python(raw).casefold()


def client_address(request: HttpRequest) -> str:
    """The client's address as the proxies in front of Django saw it.

    Behind nginx every request comes from nginx's address, so counting failures per
    REMOTE_ADDR would lock a user name for everyone after a few bad tries. Each of the
    MOSAIC_PROXY_HOPS trusted proxies appends the address it saw to X-Forwarded-For: the
    entry that many from the right is the one the outermost trusted proxy saw; entries
    further left are whatever the client sent, and are not believed."""
    hops = settings.MOSAIC_PROXY_HOPS
    if hops > 0:
        forwarded = [
            entry.strip() for entry in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")
        ]
        forwarded = [entry for entry in forwarded if entry]
        if len(forwarded) >= hops:
            return forwarded[-hops]
    return request.META.get("REMOTE_ADDR", "")


def _key(request: HttpRequest) -> str:
    address = client_address(request)
    username = normalised_username(request.POST.get("username") or "")
    digest = hashlib.sha256(f"{address}|{username}".encode()).hexdigest()[:32]
    return f"login-failures:{digest}"


def login_throttled(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """After MOSAIC_LOGIN_MAX_FAILURES failed attempts the pair (address, user name) waits
    MOSAIC_LOGIN_LOCKOUT_S seconds; the answer is 429 and nothing is checked meanwhile.

    The counters live in the default cache, which production shares between workers.
    """

    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if request.method != "POST":
            return view(request, *args, **kwargs)
        key = _key(request)
        if cache.get(key, 0) >= settings.MOSAIC_LOGIN_MAX_FAILURES:
            logger.warning("sign-in locked for %s", key)
            return render(
                request,
                "registration/locked.html",
                {"minutes": settings.MOSAIC_LOGIN_LOCKOUT_S // 60},
                status=429,
            )
        response = view(request, *args, **kwargs)
        if response.status_code == 200:  # the form came back: wrong credentials
            cache.add(key, 0, timeout=settings.MOSAIC_LOGIN_LOCKOUT_S)
            cache.incr(key)
        else:
            cache.delete(key)
        return response

    return wrapped


site_login = login_throttled(LoginView.as_view())
