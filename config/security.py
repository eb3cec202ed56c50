"""A Content-Security-Policy for every page MOSaic serves: the rater's and staff pages, the
Django admin, the API's browsable pages and its Swagger UI.

The pages show text others wrote (study texts, labels, prompts, comments, reasons): the
templates escape it and the scripts set it as text, and this policy is the second line:
scripts only from MOSaic's own static files (no inline script, no eval), media and
images from MOSaic itself (videos downloaded ahead are played from blob: URLs), no
plugins, no framing, forms posted only to MOSaic. Inline style stays allowed (scripts
set element styles). The admin shows what raters wrote (comments, reasons) to the
accounts that can do the most, so it is covered too: Django's admin runs no inline
script, DRF's browsable API neither, and the Swagger UI is served from MOSaic's static
files (drf-spectacular-sidecar) with its start-up script as a file of its own
(SpectacularSwaggerSplitView).
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


class ContentSecurityPolicyMiddleware:
    """Adds POLICY to every HTML response that has none."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        html = response.get("Content-Type", "").startswith("text/html")
        if html:
            response.headers.setdefault("Content-Security-Policy", POLICY)
        return response
