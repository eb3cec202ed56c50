"""The three roles: rater, admin (staff who run studies) and researcher (reads results).

Researchers are members of the `researchers` group; admins are staff and may do what
researchers do. Raters are everyone else with a rater profile.
"""

from __future__ import annotations

from rest_framework.permissions import BasePermission

RESEARCHERS_GROUP = "researchers"


def is_admin(user) -> bool:
    return bool(user and user.is_authenticated and user.is_staff)


def is_researcher(user) -> bool:
    if not (user and user.is_authenticated):
        return False
    return user.is_staff or user.groups.filter(name=RESEARCHERS_GROUP).exists()


class IsStudyAdmin(BasePermission):
    message = "only the study's admins may do this"

    def has_permission(self, request, view) -> bool:
        return is_admin(request.user)


class IsResearcher(BasePermission):
    message = "only researchers and admins may read results"

    def has_permission(self, request, view) -> bool:
        return is_researcher(request.user)


class MayReadApiSchema(IsResearcher):
    """The OpenAPI schema and its Swagger UI (/api/schema/, /api/docs/) are the study
    team's: researchers script exports and runs against them (docs/researchers.md).
    Raters reach the API only through their page and have docs/rater-api.md; the schema
    would show them, and anyone on the internet, every staff endpoint and its fields."""

    message = "the API's schema and docs are for researchers and admins"
