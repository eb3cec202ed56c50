"""Malformed answers and consents are refused with a 400 that says what is wrong, on the
fast path and the DRF path alike: never a 500, which the rater's browser retries forever
(one such answer at the head of its queue would hold back every answer after it)."""

import json

import pytest

from annotation.api import rater as rater_api
from annotation.models import Assignment, Participation, Rating
from tests.annotation.rater_fixtures import answer, onboard, rater_client, tiny_study

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
    assert Rating.objects.count() == 0
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
    shown, answered = Rating.objects.values_list("shown_at", "answered_at").first()
    assert (shown.isoformat(), answered.isoformat()) == (
        "2026-11-22T10:00:00+00:00",
        "2026-11-22T10:00:05+00:00",
    )


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
