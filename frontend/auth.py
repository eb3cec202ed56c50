"""Sign-in with a limit on failed attempts per client address and user name."""

from __future__ import annotations

import hashlib
import logging

from django.conf import settings
from django.contrib.auth.views import LoginView
from django.core.cache import cache
from django.shortcuts import render

logger = logging.getLogger(__name__)


def _key(request) -> str:
    address = request.META.get("REMOTE_ADDR", "")
    username = (request.POST.get("username") or "").lower()
    digest = hashlib.sha256(f"{address}|{username}".encode()).hexdigest()[:32]
    return f"login-failures:{digest}"


class ThrottledLoginView(LoginView):
    """After MOSAIC_LOGIN_MAX_FAILURES failed attempts the pair (address, user name) waits
    MOSAIC_LOGIN_LOCKOUT_S seconds; the answer is 429 and nothing is checked meanwhile."""

    def post(self, request, *args, **kwargs):
        key = _key(request)
        if cache.get(key, 0) >= settings.MOSAIC_LOGIN_MAX_FAILURES:
            logger.warning("sign-in locked for %s", key)
            return render(
                request,
                "registration/locked.html",
                {"minutes": settings.MOSAIC_LOGIN_LOCKOUT_S // 60},
                status=429,
            )
        response = super().post(request, *args, **kwargs)
        if response.status_code == 200:  # the form came back: wrong credentials
            cache.add(key, 0, timeout=settings.MOSAIC_LOGIN_LOCKOUT_S)
            cache.incr(key)
        else:
            cache.delete(key)
        return response
