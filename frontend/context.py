"""Template context for every page: what the signed-in user's roles let the pages show."""

from __future__ import annotations

from django.utils.functional import SimpleLazyObject

from annotation.roles import is_admin, is_researcher


def roles(request) -> dict:
    """``is_researcher`` (researchers and admins: the studies list, results) and
    ``is_study_admin`` (staff: the live monitor, audits), looked up only where a page
    asks (the group lookup is a query)."""
    user = getattr(request, "user", None)
    return {
        "is_researcher": SimpleLazyObject(lambda: is_researcher(user)),
        "is_study_admin": SimpleLazyObject(lambda: is_admin(user)),
    }
