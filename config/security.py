"""A Content-Security-Policy for MOSaic's own pages (rater and staff).

The pages show text others wrote (study texts, labels, prompts, comments, reasons): the
templates escape it and the scripts set it as text, and this policy is the second line:
scripts only from MOSaic's own static files (no inline script, no eval), media and
images from MOSaic itself (videos downloaded ahead are played from blob: URLs), no
plugins, no framing, forms posted only to MOSaic. Inline style stays allowed (scripts
set element styles). The Django admin and the API (its browsable pages and the Swagger
UI load their own inline scripts) keep Django's and DRF's own headers.
"""

from __future__ import annotations

POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data: blob:",
        "media-src 'self' blob:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)
EXEMPT_PREFIXES = ("/admin/", "/api/")


class ContentSecurityPolicyMiddleware:
    """Adds POLICY to every HTML response outside EXEMPT_PREFIXES that has none."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        html = response.get("Content-Type", "").startswith("text/html")
        if html and not request.path.startswith(EXEMPT_PREFIXES):
            response.headers.setdefault("Content-Security-Policy", POLICY)
        return response
