"""Malformed answers and consents are refused with a 400 that says what is wrong, on the
fast path and the DRF path alike: never a 500, which the rater's browser retries forever
(one such answer at the head of its queue would hold back every answer after it)."""

import json

import pytest

from annotation.api import rater as rater_api
from annotation.models import Assignment, Participation
from tests.annotation.rater_fixtures import (
    answer,
    consent_and_tutorial,
    onboard,
    qualification_ratings,
    rater_client,
    session_ratings,
    tiny_study,
)

pytestmark = pytest.mark.django_db

HUGE = "1" + "0" * 400  # valid JSON, and an int no float can hold
PLACEHOLDER = '"@@"'


def with_raw(payload: dict, raw: str) -> str:
    """The payload as JSON, with the value written "@@" replaced by `raw` as it is."""
    return json.dumps(payload).replace(PLACEHOLDER, raw)


@pytest.mark.parametrize("path", ["fast", "drf"])
@pytest.mark.parametrize(
    ("field", "raw", "detail"),
    [
        ("subject", HUGE, "score for 'subject' is outside the scale [0, 100]"),
        ("subject", "-" + HUGE, "score for 'subject' is outside the scale [0, 100]"),
        ("subject", "1e400", "score for 'subject' is not a finite number"),
        ("shown_at", '"2026-02-30T10:00:00Z"', "'shown_at' must be an ISO 8601 date and time"),
        (
            "answered_at",
            '"2026-11-22T25:00:00Z"',
            "'answered_at' must be an ISO 8601 date and time",
        ),
        (
            "answered_at",
            '"9999-12-31T23:59:59-05:00"',  # past the year 9999 in UTC
            "'answered_at' must be an ISO 8601 date and time",
        ),
        ("shown_at", "20261122", "'shown_at' must be an ISO 8601 date and time"),
        ("watch_time_ms", HUGE, "'watch_time_ms' must be a number between 0 and 86400000"),
        ("plays", "1e400", "'plays' must be a number between 0 and 10000"),
        ("stalls", "-" + HUGE, "'stalls' must be a number between 0 and 10000"),
    ],
)
def test_a_malformed_answer_is_a_400_that_says_why(field, raw, detail, path, monkeypatch):
    # given: a rater at the first item of a session, which the fast path would serve
    tiny = tiny_study(rest_every=0)
    client, _ = rater_client()
    onboard(client, tiny)
    item = client.get(tiny.base + "next/").json()["item"]["id"]
    if path == "drf":
        monkeypatch.setattr(rater_api, "fast_answer", lambda request, slug: None)
    payload = answer(item)
    if field == "subject":
        payload["scores"]["subject"] = "@@"
    else:
        payload[field] = "@@"
    # when
    response = client.post(
        tiny.base + "answers/", with_raw(payload, raw), content_type="application/json"
    )
    # then
    assert (response.status_code, response.json()) == (400, {"error": "invalid", "detail": detail})
    assert session_ratings().count() == 0
    assert Assignment.objects.get().position == 0


def test_an_answer_at_another_utc_offset_is_stored_as_the_same_moment():
    # given
    tiny = tiny_study(rest_every=0)
    client, _ = rater_client()
    onboard(client, tiny)
    item = client.get(tiny.base + "next/").json()["item"]["id"]
    payload = answer(item, shown_at="2026-11-22T11:00:00+01:00", answered_at="2026-11-22T10:00:05")
    # when
    response = client.post(tiny.base + "answers/", payload, format="json")
    # then: the offset is kept in the moment, a naive time is read in UTC (TIME_ZONE)
    assert response.status_code == 201
    shown, answered = (
        session_ratings().values_list("answer__shown_at", "answer__answered_at").first()
    )
    assert (shown.isoformat(), answered.isoformat()) == (
        "2026-11-22T10:00:00+00:00",
        "2026-11-22T10:00:05+00:00",
    )


def at_first_item(path: str, monkeypatch, **settings) -> tuple:
    """A rater at the first item of their qualification test, or of a session (served by
    the fast path, or by the DRF view only); (tiny study, client, item id)."""
    tiny = tiny_study(rest_every=0, **settings)
    client, _ = rater_client()
    if path == "qualification":
        consent_and_tutorial(client, tiny)
    else:
        onboard(client, tiny)
    item = client.get(tiny.base + "next/").json()["item"]["id"]
    if path == "drf":
        monkeypatch.setattr(rater_api, "fast_answer", lambda request, slug: None)
    return tiny, client, item


def stored_scores(path: str) -> list[float]:
    """The scores of the kind of answer the path sends: qualification answers, or ratings
    (the qualification answers that onboarded the rater aside)."""
    rows = qualification_ratings() if path == "qualification" else session_ratings()
    return list(rows.order_by("dimension__order").values_list("score", flat=True))


@pytest.mark.parametrize("path", ["fast", "drf", "qualification"])
@pytest.mark.parametrize(
    ("scale", "score", "detail"),
    [
        (
            {"slider_step": 0.5},
            52.25,
            "score for 'subject' is 52.25, not on the slider's steps: 0 to 100 in steps of 0.5",
        ),
        (
            {},  # the default step of 1
            40.5,
            "score for 'subject' is 40.5, not on the slider's steps: 0 to 100 in steps of 1",
        ),
        (  # the steps count from the scale's minimum (2, 7, ..., 52, ...), as the browser's do
            {"slider_min": 2, "slider_max": 98, "slider_step": 5},
            50,
            "score for 'subject' is 50, not on the slider's steps: 2 to 98 in steps of 5",
        ),
        (  # two millionths of a step off is off (one is the tolerance)
            {"slider_step": 0.1},
            50.0 + 2e-7,
            "score for 'subject' is 50.0000002, not on the slider's steps: "
            "0 to 100 in steps of 0.1",
        ),
    ],
)
def test_a_score_between_the_slider_steps_is_a_400_and_nothing_is_stored(
    scale, score, detail, path, monkeypatch
):
    # given
    tiny, client, item = at_first_item(path, monkeypatch, **scale)
    payload = answer(item, {"subject": score, "completeness": 52, "interaction": 52})
    # when
    response = client.post(tiny.base + "answers/", payload, format="json")
    # then
    assert (response.status_code, response.json()) == (400, {"error": "invalid", "detail": detail})
    assert stored_scores(path) == []
    assert Assignment.objects.filter(position__gt=0).count() == 0


@pytest.mark.parametrize("path", ["fast", "drf", "qualification"])
def test_a_score_on_a_step_but_for_float_error_is_stored_as_sent(path, monkeypatch):
    # given: steps of 0.1, and scores that float arithmetic put a hair off them
    tiny, client, item = at_first_item(path, monkeypatch, slider_step=0.1)
    scores = {"subject": 0.1 + 0.2, "completeness": 70.00000000000001, "interaction": 1.1 * 3}
    # when
    response = client.post(tiny.base + "answers/", answer(item, scores), format="json")
    # then
    assert response.status_code == 201
    assert stored_scores(path) == [0.30000000000000004, 70.00000000000001, 3.3000000000000003]


CONSENT = {"accept": True, "viewport_width": 1280, "viewport_height": 800, "pixel_ratio": 1}
PIXELS = "must be a number of pixels between 0 and 100000"


@pytest.mark.parametrize(
    ("field", "raw", "detail"),
    [
        ("screen_width", '"abc"', f"'screen_width' {PIXELS}"),
        ("screen_width", "[1]", f"'screen_width' {PIXELS}"),
        ("screen_height", "1e400", f"'screen_height' {PIXELS}"),
        ("viewport_width", "1e400", f"'viewport_width' {PIXELS}"),
        ("viewport_height", HUGE, f"'viewport_height' {PIXELS}"),
        ("viewport_width", "-1", f"'viewport_width' {PIXELS}"),
        ("viewport_height", "null", f"'viewport_height' {PIXELS}"),
        ("pixel_ratio", "1e400", "'pixel_ratio' must be a number above 0 and at most 100"),
        ("pixel_ratio", "0", "'pixel_ratio' must be a number above 0 and at most 100"),
        ("pixel_ratio", '"2"', "'pixel_ratio' must be a number above 0 and at most 100"),
    ],
)
def test_a_malformed_consent_is_a_400_that_says_why(field, raw, detail):
    # given
    tiny = tiny_study()
    client, _ = rater_client()
    body = with_raw({**CONSENT, field: "@@"}, raw)
    # when
    response = client.post(tiny.base + "consent/", body, content_type="application/json")
    # then: nothing recorded
    assert (response.status_code, response.json()) == (400, {"error": "invalid", "detail": detail})
    participation = Participation.objects.get()
    assert (participation.consent_at, participation.viewing_check) == (None, {})


@pytest.mark.parametrize("body", ["[]", '"yes"', "[true]"])
def test_a_consent_that_is_no_json_object_is_a_400(body):
    tiny = tiny_study()
    client, _ = rater_client()
    response = client.post(tiny.base + "consent/", body, content_type="application/json")
    assert (response.status_code, response.json()) == (
        400,
        {"error": "invalid", "detail": "the consent must be a JSON object"},
    )
    assert Participation.objects.get().consent_at is None


def test_the_viewing_conditions_the_browser_does_not_know_are_stored_as_defaults():
    # given
    tiny = tiny_study()
    client, _ = rater_client()
    body = {**CONSENT, "screen_width": None, "pixel_ratio": 2.5}
    # when
    response = client.post(tiny.base + "consent/", body, format="json")
    # then
    assert response.status_code == 200
    check = Participation.objects.get().viewing_check
    assert {k: check[k] for k in ("pixel_ratio", "screen_width", "screen_height")} == {
        "pixel_ratio": 2.5,
        "screen_width": 0,
        "screen_height": 0,
    }


# ---------------------------------------------------------------- one shape for every refusal


@pytest.mark.parametrize(
    "body",
    [
        '{"client_uuid": ',
        "not json at all",
        '{"scores": {"subject": NaN}}',
        "[Infinity]",
        "[" * 5000 + "]" * 5000,  # too deep for Python's decoder (before: a 500)
        '{"a": ' * 5000 + "1" + "}" * 5000,
    ],
    ids=["cut", "text", "nan", "infinity", "deep-list", "deep-object"],
)
@pytest.mark.parametrize("endpoint", ["answers/", "consent/", "withdraw/", "problems/"])
def test_a_body_that_is_not_strict_json_is_refused_in_the_documented_shape(body, endpoint):
    tiny = tiny_study()
    client, _ = rater_client()
    onboard(client, tiny)
    # when
    response = client.post(tiny.base + endpoint, body, content_type="application/json")
    # then
    assert response.status_code == 400
    assert set(response.json()) == {"error", "detail"}
    assert response.json()["error"] == "invalid"
    assert "JSON" in response.json()["detail"]
    assert not session_ratings().exists()
    assert Participation.objects.get().withdrawn_at is None


def test_the_sign_in_csrf_and_method_refusals_have_the_documented_shape():
    from django.test import Client

    tiny = tiny_study()
    client, user = rater_client()
    onboard(client, tiny)
    anonymous = Client(enforce_csrf_checks=True)
    signed_in = Client(enforce_csrf_checks=True)
    signed_in.force_login(user)
    # when
    cases = {
        "not_authenticated": anonymous.get(tiny.base + "next/"),
        "csrf_failed": signed_in.post(
            tiny.base + "answers/", "{}", content_type="application/json"
        ),
        "method_not_allowed": client.delete(tiny.base + "answers/"),
    }
    # then
    for code, response in cases.items():
        assert response.status_code in (401, 403, 405), code
        assert response.json()["error"] == code
        assert isinstance(response.json()["detail"], str) and response.json()["detail"]


@pytest.mark.parametrize(
    "path", ["/api/nonexistent/", "/api/export-jobs/abc/", "/api/studies/x/exports/mos.csv/"]
)
def test_an_api_address_no_route_matches_answers_in_the_api_shape(client, path):
    # before, Django's HTML page, which an API client cannot read
    response = client.get(path)
    assert response.status_code == 404
    assert response.json() == {
        "error": "not_found",
        "detail": f"no API address {path} (see /api/docs/)",
    }


def test_a_page_no_route_matches_is_still_the_sites_page(client):
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


def test_a_server_error_under_the_api_answers_in_the_api_shape(rf):
    from annotation.api.exception_handler import server_error

    response = server_error(rf.get("/api/studies/"))
    assert response.status_code == 500
    assert json.loads(response.content)["error"] == "server_error"
    assert server_error(rf.get("/studies/"))["Content-Type"].startswith("text/html")
