"""The web container's health check (docker-compose.yml): `python config/healthcheck.py`.

It asks gunicorn for /api/health/ over loopback, as a host production allows: Django
answers any other Host with 400 (DisallowedHost). The health path is exempt from the
HTTPS redirect (SECURE_REDIRECT_EXEMPT in config/settings/production.py), so plain
http gets 200. Plain urllib, no Django: it runs every 15 seconds, as a script so that
importing the `config` package (and Celery with it) is not part of the cost.
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request

HEALTH_URL = "http://127.0.0.1:8000/api/health/"


def health_host(allowed_hosts: str) -> str:
    """The first concrete name of DJANGO_ALLOWED_HOSTS ('.example.org' allows example.org)."""
    for pattern in allowed_hosts.split(","):
        host = pattern.strip().lstrip(".")
        if host and host != "*":
            return host
    return "localhost"  # nothing named: '*' (or nothing) allows any host


def health_request(environ: dict[str, str] | None = None) -> urllib.request.Request:
    environ = os.environ if environ is None else environ
    host = health_host(environ.get("DJANGO_ALLOWED_HOSTS", ""))
    return urllib.request.Request(HEALTH_URL, headers={"Host": host})


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # a redirect is an unhealthy answer, not one to follow


def main() -> int:
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(health_request(), timeout=5) as response:
            status = response.status
    except urllib.error.HTTPError as exc:
        status = exc.code
    except OSError as exc:
        print(f"unhealthy: {exc}", file=sys.stderr)
        return 1
    if status != 200:
        print(f"unhealthy: HTTP {status} from {HEALTH_URL}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
