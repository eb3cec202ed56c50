"""The fast path of next item and answer (annotation/api/fast.py): the same answers as the
DRF views, in one query (next) and two statements (answer), and exactly once under
concurrency."""

import threading
import time

import pytest
from django.db import connection, connections, transaction
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.api import rater as rater_api
from annotation.designs.slider import check_scores
from annotation.dimensions import dimensions_of
from annotation.models import Assignment, Item, Stimulus
from annotation.selectors import rating_position
from annotation.services.answers import check_envelope
from annotation.services.slider_fast_path import slider_submit_current
from tests.annotation.rater_fixtures import (
    answer,
    onboard,
    rater_client,
    session_ratings,
    tiny_study,
)

pytestmark = pytest.mark.django_db


def statements(queries: CaptureQueriesContext) -> list[str]:
    """The queries sent, without the savepoints the test transaction adds. Read it before
    the next request: the test client empties the query log at each request."""
    return [q["sql"] for q in queries.captured_queries if "SAVEPOINT" not in q["sql"]]


@pytest.fixture
def slow_path(monkeypatch):
    """Every request through the DRF views only, as before the fast path existed."""

    def use_slow_path():
        monkeypatch.setattr(rater_api, "fast_next", lambda request, slug: None)
        monkeypatch.setattr(rater_api, "fast_answer", lambda request, slug: None)

    return use_slow_path


def current_public_id(user) -> str:
    assignment = Assignment.objects.get(rater__user=user)
    return str(Item.objects.get(pk=assignment.order[assignment.position]).public_id)


def test_next_is_one_query_and_an_answer_two_statements():
    # given
    tiny = tiny_study(rest_every=0)
    client, _ = rater_client()
    onboard(client, tiny)
    client.get(tiny.base + "next/")  # starts the session
    # when
    with CaptureQueriesContext(connection) as next_queries:
        item = client.get(tiny.base + "next/").json()["item"]["id"]
    with CaptureQueriesContext(connection) as answer_queries:
        response = client.post(tiny.base + "answers/", answer(item), format="json")
    # then
    assert response.status_code == 201
    assert len(statements(next_queries)) == 1
    assert len(statements(answer_queries)) == 2
    assert session_ratings().count() == 3


def test_the_fast_path_answers_exactly_as_the_drf_views(slow_path):
    """Two raters in the same place of the same study, one served by the fast path and one
    by the DRF views, get the same answers, rest breaks included."""
    # given: rest after every 3 items, so the 3rd answer starts a break
    tiny = tiny_study(rest_every=3, rest_seconds=600, slider_step=0.5)
    fast, fast_user = rater_client()
    slow, slow_user = rater_client()
    onboard(fast, tiny)
    onboard(slow, tiny)

    def rate_three(client):
        """(next, answer status, answer body) three times, then what next/ says."""
        bodies = []
        for _ in range(3):
            item = client.get(tiny.base + "next/").json()
            sent = client.post(
                tiny.base + "answers/", answer(item["item"]["id"], 40.5), format="json"
            )
            bodies.append((item, sent.status_code, sent.json()))
        return bodies, client.get(tiny.base + "next/").json()

    fast_bodies, fast_break = rate_three(fast)
    # when
    slow_path()
    slow_bodies, slow_break = rate_three(slow)

    # then: the same bodies but for which videos (each rater has their own order)
    def without_items(bodies):
        return [
            (
                {
                    **body,
                    "item": set(body["item"]),
                    "preload": set(body["preload"]),
                    "window": [set(item) for item in body["window"]],
                },
                status,
                sent,
            )
            for body, status, sent in bodies
        ]

    assert without_items(fast_bodies) == without_items(slow_bodies)
    assert fast_bodies[-1][2] == {
        "status": "stored",
        "step": "break",
        "position": 3,
        "length": 8,
        "break_seconds_left": 600,
    }
    assert (
        fast_break
        == slow_break
        == {
            "step": "break",
            "position": 3,
            "length": 8,
            "break_seconds_left": 600,
            "item": None,
            "preload": None,
            "window": [],
            "window_ends": None,
            "rest_seconds": 600,
            "completion": None,
        }
    )
    fast_assignment = Assignment.objects.get(rater__user=fast_user)
    slow_assignment = Assignment.objects.get(rater__user=slow_user)
    fields = ("position", "breaks_taken", "stalls_total", "state", "flagged_line_clicker")
    assert [getattr(fast_assignment, f) for f in fields] == [
        getattr(slow_assignment, f) for f in fields
    ]
    assert fast_assignment.break_until is not None and slow_assignment.break_until is not None
    fast_rows = session_ratings().filter(answer__assignment=fast_assignment).order_by("id")
    slow_rows = session_ratings().filter(answer__assignment=slow_assignment).order_by("id")
    columns = (
        "dimension__key",
        "score",
        "answer__watch_time_ms",
        "answer__plays",
        "answer__stalls",
        "answer__shown_at",
        "answer__values_digest",
    )
    assert list(fast_rows.values_list(*columns)) == list(slow_rows.values_list(*columns))


def test_next_is_the_same_on_both_paths_to_the_byte(slow_path):
    # given: a prompt that JSON writers treat in different ways
    tiny = tiny_study(rest_every=0)
    Stimulus.objects.update(prompt='Ein Mädchen\u2028ordnet Gänseblümchen \u2014 "schön"')
    client, _ = rater_client()
    onboard(client, tiny)
    client.get(tiny.base + "next/")
    headers = ("Content-Type", "Allow", "Vary")
    # when
    fast = client.get(tiny.base + "next/")
    slow_path()
    slow = client.get(tiny.base + "next/")
    # then
    assert fast.content == slow.content
    assert [fast.headers[h] for h in headers] == [slow.headers[h] for h in headers]
    assert "\\u2028" in fast.content.decode()


def test_a_token_reaches_the_fast_path_and_a_wrong_one_is_refused():
    # given
    tiny = tiny_study(rest_every=0)
    onboarded, user = rater_client()
    onboard(onboarded, tiny)
    onboarded.get(tiny.base + "next/")  # starts the session
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    # when
    with CaptureQueriesContext(connection) as next_queries:
        item = client.get(tiny.base + "next/").json()["item"]["id"]
    next_statements = statements(next_queries)
    with CaptureQueriesContext(connection) as answer_queries:
        stored = client.post(tiny.base + "answers/", answer(item), format="json")
    answer_statements = statements(answer_queries)
    client.credentials(HTTP_AUTHORIZATION="Token " + "0" * 40)
    refused = client.post(tiny.base + "answers/", answer(current_public_id(user)), format="json")
    # then
    assert stored.status_code == 201 and stored.json()["position"] == 1
    assert (len(next_statements), len(answer_statements)) == (1, 2)
    assert (refused.status_code, refused.json()) == (
        403,
        {"error": "authentication_failed", "detail": "Invalid token."},
    )
    assert session_ratings().count() == 3


def test_a_session_needs_its_csrf_token_for_an_answer():
    # given: a rater signed in with a session, as the rater page is
    tiny = tiny_study(rest_every=0)
    onboarded, user = rater_client()
    onboard(onboarded, tiny)
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    item = client.get(tiny.base + "next/").json()["item"]["id"]
    # when
    refused = client.post(tiny.base + "answers/", answer(item), format="json")
    secret = "k" * 32
    client.cookies["csrftoken"] = secret
    stored = client.post(
        tiny.base + "answers/", answer(item), format="json", HTTP_X_CSRFTOKEN=secret
    )
    # then
    assert refused.status_code == 403
    assert refused.json()["detail"].startswith("CSRF Failed")
    assert stored.status_code == 201
    assert session_ratings().count() == 3


def test_no_answer_is_stored_for_a_session_paused_after_it_was_read():
    # given: the rater's position is read, then an admin pauses the session
    tiny, user, item = rater_at_first_item()
    position = rating_position(slug=tiny.study.slug, user_id=user.pk)
    Assignment.objects.update(state=Assignment.State.PAUSED)
    dimensions = dimensions_of(tiny.study.pk)
    # when
    data = answer(item)
    stored = slider_submit_current(
        position=position,
        envelope=check_envelope(data),
        scores=check_scores(data=data, scale=tiny.study, dimensions=dimensions).scores,
        dimensions=dimensions,
    )
    # then
    assert stored is None
    assert session_ratings().count() == 0
    assert Assignment.objects.get().position == 0


def test_the_last_answer_of_a_session_goes_through_the_golden_gate():
    # given: golden answers that agree with the experts (20 and 80)
    tiny = tiny_study(rest_every=0)
    golden = {str(tiny.golden[0].public_id): 20.0, str(tiny.golden[1].public_id): 80.0}
    client, _ = rater_client()
    onboard(client, tiny)
    # when
    for _ in range(8):
        item = client.get(tiny.base + "next/").json()["item"]["id"]
        response = client.post(
            tiny.base + "answers/", answer(item, golden.get(item, 45.0)), format="json"
        )
        assert response.status_code == 201
    # then
    assignment = Assignment.objects.get()
    assert assignment.state == "finished" and assignment.eligible_for_next is True
    assert assignment.golden_agreement == pytest.approx(1.0)
    assert response.json() == {
        "status": "stored",
        "step": "done",
        "position": 8,
        "length": 8,
        "break_seconds_left": 0,
    }


def wait_for_lock_waiters(count: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    with connections["default"].cursor() as cursor:
        while time.monotonic() < deadline:
            # Within a transaction PostgreSQL shows one snapshot of the activity until told.
            cursor.execute("SELECT pg_stat_clear_snapshot()")
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE wait_event_type = 'Lock' AND datname = current_database()"
            )
            if cursor.fetchone()[0] >= count:
                return
            time.sleep(0.02)
    raise AssertionError(f"{count} requests did not come to wait for the assignment's row")


def race(user, url: str, payloads: list[dict]) -> list:
    """Post the payloads at once (one client each) while the assignment's row is locked,
    then let go: every request has read the same position and meets the others at the
    conditional update."""
    results = [None] * len(payloads)

    def post(i: int) -> None:
        client = APIClient()
        client.force_authenticate(user)
        try:
            results[i] = client.post(url, payloads[i], format="json")
        finally:
            connection.close()

    threads = [threading.Thread(target=post, args=(i,)) for i in range(len(payloads))]
    with transaction.atomic():
        Assignment.objects.select_for_update().get()
        for thread in threads:
            thread.start()
        wait_for_lock_waiters(len(payloads))
    for thread in threads:
        thread.join(timeout=30)
    return results


def rater_at_first_item():
    """A rater of a study without breaks, onboarded, and the id of their first item."""
    tiny = tiny_study(rest_every=0)
    client, user = rater_client()
    onboard(client, tiny)
    return tiny, user, client.get(tiny.base + "next/").json()["item"]["id"]


@pytest.mark.django_db(transaction=True)
def test_two_answers_racing_for_one_item_store_exactly_one():
    # given: two tabs answer the same item with different answers
    tiny, user, item = rater_at_first_item()
    # when
    results = race(user, tiny.base + "answers/", [answer(item, 10.0), answer(item, 90.0)])
    # then
    assert sorted(r.status_code for r in results) == [201, 409]
    refused = next(r for r in results if r.status_code == 409)
    assert refused.json()["detail"] == "this video was already answered"
    assert session_ratings().count() == 3
    assert len(set(session_ratings().values_list("score", flat=True))) == 1
    assert Assignment.objects.get().position == 1


@pytest.mark.django_db(transaction=True)
def test_a_delivery_racing_its_own_repeat_is_stored_once():
    # given: the browser resends an answer whose first delivery is still under way
    tiny, user, item = rater_at_first_item()
    payload = answer(item, 33.0)
    # when
    results = race(user, tiny.base + "answers/", [payload, payload])
    # then
    assert sorted(r.status_code for r in results) == [200, 201]
    assert [r.json()["position"] for r in results] == [1, 1]
    assert {r.json()["status"] for r in results} == {"stored", "repeat"}
    assert session_ratings().filter(answer__client_uuid=payload["client_uuid"]).count() == 3
    assert Assignment.objects.get().position == 1


def test_an_answer_without_telemetry_is_stored_with_the_defaults():
    # given
    tiny = tiny_study(rest_every=0, slider_step=0.5)
    client, _ = rater_client()
    onboard(client, tiny)
    item = client.get(tiny.base + "next/").json()["item"]["id"]
    payload = {"client_uuid": answer(item)["client_uuid"], "item": item}
    payload["scores"] = {"subject": 1, "completeness": 2.5, "interaction": 100}
    # when
    response = client.post(tiny.base + "answers/", payload, format="json")
    # then
    assert response.status_code == 201
    rows = (
        session_ratings()
        .order_by("dimension__order")
        .values_list(
            "score",
            "answer__shown_at",
            "answer__answered_at",
            "answer__watch_time_ms",
            "answer__plays",
            "answer__stalls",
        )
    )
    assert list(rows) == [
        (1.0, None, None, 0, 0, 0),
        (2.5, None, None, 0, 0, 0),
        (100.0, None, None, 0, 0, 0),
    ]


@pytest.mark.parametrize("path", ["fast", "drf"])
def test_rest_breaks_count_answers_across_sessions(path, slow_path):
    """Sessions of 4 + 2 golden items, a rest every 4 answers: the 8th answer (the 2nd of
    the second session) starts one, and a break the 12th (a session's last) starts holds
    the third session until it is over."""
    # given
    tiny = tiny_study(stimuli=12, session_size=4, rest_every=4, rest_seconds=600)
    client, user = rater_client()
    onboard(client, tiny)
    if path == "drf":
        slow_path()
    golden = {str(s.public_id): v for s, v in zip(tiny.golden, (20.0, 80.0), strict=True)}
    breaks_at = []
    # when: 12 answers, ending each break as soon as it is seen
    answered = 0
    while answered < 12:
        body = client.get(tiny.base + "next/").json()
        if body["step"] == "break":
            breaks_at.append(answered)
            Assignment.objects.filter(rater__user=user).update(break_until=None)
            continue
        item = body["item"]["id"]
        response = client.post(
            tiny.base + "answers/", answer(item, golden.get(item, 45.0)), format="json"
        )
        assert response.status_code == 201, response.json()
        answered += 1
    # then
    assert breaks_at == [4, 8]
    held = client.get(tiny.base + "next/").json()
    assert (held["step"], held["item"], held["position"]) == ("break", None, 0)
    assert 599 <= held["break_seconds_left"] <= 600
    third = Assignment.objects.get(rater__user=user, position=0)
    first_item = str(Item.objects.get(pk=third.order[0]).public_id)
    response = client.post(tiny.base + "answers/", answer(first_item), format="json")
    assert (response.status_code, response.json()["error"]) == (423, "on_break")
    assert third.answered_before == 12
    assert session_ratings().filter(answer__assignment=third).count() == 0
