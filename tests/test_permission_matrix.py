"""Every API endpoint against every role and anonymous users.

The matrix must name every route and method the URLconf serves under /api/, so a new
endpoint without a decided permission fails here.
"""

import pytest
from django.urls import get_resolver

from annotation.models import Payment
from quality.services import export_job_request
from tests.annotation.rater_fixtures import answer, onboard, rater_client, tiny_study
from tests.annotation.test_staff_api import client_for
from tests.quality.test_analysis_runs import rated_study, request_run, researcher

pytestmark = pytest.mark.django_db

ROLES = ("anonymous", "rater", "researcher", "admin")
DENIED = {"anonymous": 403, "rater": 403}
RESEARCH = {**DENIED, "researcher": 200, "admin": 200}
ADMIN = {**DENIED, "researcher": 403}
PUBLIC = dict.fromkeys(ROLES, 200)


def signed_in(status: int) -> dict[str, int]:
    return {**dict.fromkeys(ROLES, status), "anonymous": 403}


# (method, route as in the URLconf, expected status per role)
MATRIX = [
    # The OpenAPI schema and its Swagger UI are the study team's (docs/admins.md): they
    # list every staff endpoint; raters have docs/rater-api.md.
    ("get", "api/schema/", RESEARCH),
    ("get", "api/docs/", RESEARCH),
    ("get", "api/health/", PUBLIC),
    ("get", "api/studies/", RESEARCH),
    ("post", "api/studies/", {**ADMIN, "admin": 400}),
    ("get", "api/studies/<slug:slug>/progress/", RESEARCH),
    ("get", "api/studies/<slug:slug>/monitor/", {**ADMIN, "admin": 200}),
    ("get", "api/studies/<slug:slug>/problems/", {**ADMIN, "admin": 200}),
    ("post", "api/studies/<slug:slug>/stimuli/", {**ADMIN, "admin": 400}),
    ("post", "api/studies/<slug:slug>/sessions/", {**ADMIN, "admin": 200}),
    ("post", "api/assignments/<int:pk>/pause/", {**ADMIN, "admin": 200}),
    ("post", "api/assignments/<int:pk>/reopen/", {**ADMIN, "admin": 200}),
    ("post", "api/assignments/<int:pk>/exclude/", {**ADMIN, "admin": 200}),
    ("post", "api/assignments/<int:pk>/exclude-rater/", {**ADMIN, "admin": 200}),
    ("post", "api/payments/<int:pk>/decision/", {**ADMIN, "admin": 200}),
    ("get", "api/studies/<slug:slug>/analysis-runs/", RESEARCH),
    (
        "post",
        "api/studies/<slug:slug>/analysis-runs/",
        {**RESEARCH, "researcher": 202, "admin": 202},
    ),
    ("get", "api/analysis-runs/<int:pk>/", RESEARCH),
    ("get", "api/analysis-runs/<int:pk>/figures/<slug:name>.png", RESEARCH),
    ("get", "api/studies/<slug:slug>/exports/<str:name>", RESEARCH),
    ("get", "api/studies/<slug:slug>/export-jobs/", RESEARCH),
    ("post", "api/studies/<slug:slug>/export-jobs/", {**RESEARCH, "researcher": 202, "admin": 202}),
    ("get", "api/export-jobs/<int:pk>/", RESEARCH),
    ("get", "api/export-jobs/<int:pk>/download", RESEARCH),
    # The rater API answers for the signed-in user's own participation only: a user who
    # has not consented sees where they stand and the tutorial, is refused the steps
    # that need consent, and a payload without the fields is a 400 before anything.
    ("get", "api/rater/studies/<slug:slug>/state/", signed_in(200)),
    ("post", "api/rater/studies/<slug:slug>/consent/", signed_in(400)),
    ("get", "api/rater/studies/<slug:slug>/tutorial/", signed_in(200)),
    ("post", "api/rater/studies/<slug:slug>/tutorial/done/", signed_in(403)),
    ("get", "api/rater/studies/<slug:slug>/next/", signed_in(200)),
    ("post", "api/rater/studies/<slug:slug>/answers/", signed_in(400)),
    ("post", "api/rater/studies/<slug:slug>/problems/", signed_in(400)),
    ("post", "api/rater/studies/<slug:slug>/withdraw/", signed_in(400)),
]


def api_routes() -> set[tuple[str, str]]:
    """(method, route) of every view the URLconf serves under api/."""

    def walk(patterns, prefix=""):
        for pattern in patterns:
            if hasattr(pattern, "url_patterns"):
                yield from walk(pattern.url_patterns, prefix + str(pattern.pattern))
            else:
                yield prefix + str(pattern.pattern), pattern.callback

    routes = set()
    for route, callback in walk(get_resolver().url_patterns):
        view = getattr(callback, "cls", None)
        if route.startswith("api/") and view is not None:
            for method in ("get", "post", "put", "patch", "delete"):
                if hasattr(view, method):
                    routes.add((method, route))
    return routes


def test_the_matrix_names_every_api_endpoint():
    assert {(method, route) for method, route, _ in MATRIX} == api_routes()


@pytest.fixture
def world(django_capture_on_commit_callbacks):
    """A running tiny study (one finished assignment with its payment, one in progress)
    and a rated study with a finished analysis run and a finished export job."""
    tiny = tiny_study(rest_every=0)
    finished, _ = rater_client()
    onboard(finished, tiny)
    for _ in range(8):
        item = finished.get(tiny.base + "next/").json()["item"]["id"]
        finished.post(tiny.base + "answers/", answer(item), format="json")
    rating, rating_user = rater_client()
    onboard(rating, tiny)
    rating.get(tiny.base + "next/")  # starts the assignment
    assignment = rating_user.rater.assignments.get()
    rated, _ = rated_study(raters=4, stimuli=6, line_clicker=False)
    run = request_run(researcher(), rated, django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        job = export_job_request(study=rated, name="ratings.csv", run=run)
    values = {
        "<slug:slug>": tiny.study.slug,
        "<int:pk>": None,
        "<slug:name>": "srcc-curve",
        "<str:name>": "ratings.csv",
    }
    ids = {
        "assignments": assignment.pk,
        "payments": Payment.objects.get().pk,
        "analysis-runs": run.pk,
        "export-jobs": job.pk,
    }
    return tiny, rated, values, ids


def concrete(route: str, tiny, rated, values, ids) -> str:
    url = "/" + route
    if "analysis" in route or "export" in route:
        url = url.replace("<slug:slug>", rated.slug)
    for kind, pk in ids.items():
        url = url.replace(f"{kind}/<int:pk>", f"{kind}/{pk}")
    for placeholder, value in values.items():
        if value is not None:
            url = url.replace(placeholder, value)
    return url


@pytest.mark.parametrize("role", ROLES)
def test_each_role_gets_exactly_what_it_may(world, role):
    tiny, rated, values, ids = world
    client = client_for(role)
    data = {"reason": "check", "approve": True, "name": "ratings.csv"}
    got, expected = {}, {}
    for method, route, statuses in MATRIX:
        url = concrete(route, tiny, rated, values, ids)
        response = getattr(client, method)(url, data, format="json")
        got[(method, route)] = response.status_code
        expected[(method, route)] = statuses[role]
        if route.endswith("/next/") and response.status_code == 200:
            assert response.json()["item"] is None  # nothing to rate before consent
    assert got == expected
