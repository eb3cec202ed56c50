from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.models import Assignment, Item, Participation, Payment
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


def end_break(user) -> None:
    Assignment.objects.filter(rater__user=user).update(break_until=timezone.now() - timedelta(1))


def rate_session(client, tiny, user, *, golden_scores=(20.0, 80.0)) -> list[dict]:
    """Answer every item of a session; golden items get the given scores."""
    golden = {str(s.public_id): v for s, v in zip(tiny.golden, golden_scores, strict=True)}
    bodies = []
    while True:
        body = client.get(tiny.base + "next/").json()
        if body["step"] == "break":
            end_break(user)
            continue
        if body["item"] is None:
            return bodies
        value = golden.get(body["item"]["id"], 40.0 + len(bodies))
        response = client.post(
            tiny.base + "answers/", answer(body["item"]["id"], value), format="json"
        )
        assert response.status_code == 201, response.json()
        bodies.append(response.json())


def test_the_whole_journey_from_consent_to_payment():
    # given
    tiny = tiny_study()
    client, user = rater_client()
    assert client.get(tiny.base + "state/").json()["step"] == "consent"
    # when
    onboard(client, tiny)
    # then: qualified (both items within 1.5 sigma of 50)
    participation = Participation.objects.get(rater__user=user)
    assert participation.qualification_state == "passed"
    assert participation.qualification_share == 1.0
    assert len(participation.qualification_detail) == 6
    # when: rating the whole session (6 stimuli + 2 golden, break after 3 and 6)
    bodies = rate_session(client, tiny, user)
    # then
    assert [b["position"] for b in bodies] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert [b["step"] for b in bodies][:4] == ["rating", "rating", "break", "rating"]
    assignment = Assignment.objects.get(rater__user=user)
    assert assignment.state == "finished" and assignment.breaks_taken == 2
    assert session_ratings().filter(answer__assignment=assignment).count() == 8 * 3
    assert assignment.golden_agreement == pytest.approx(1.0)
    assert assignment.eligible_for_next is True
    payment = Payment.objects.get(assignment=assignment)
    assert (str(payment.amount), payment.currency, payment.status) == ("12.00", "USD", "pending")
    state = client.get(tiny.base + "state/").json()
    assert state["step"] == "done"
    assert state["completion"]["redirect_url"] == "https://market.example/done"


def test_order_is_shuffled_per_rater_and_golden_is_hidden():
    tiny = tiny_study()
    orders = []
    for _ in range(2):
        client, _ = rater_client()
        onboard(client, tiny)
        body = client.get(tiny.base + "next/").json()
        assert set(body["item"]) == {
            "id",
            "media",
            "video_url",
            "poster_url",
            "prompt",
            "action",
            "width",
            "height",
        }
        orders.append(Assignment.objects.order_by("-pk").first().order)
    assert sorted(orders[0]) == sorted(orders[1]) and len(orders[0]) == 8
    assert orders[0] != orders[1]  # 8! orders: equal by chance with p = 1/40320


def test_a_repeated_answer_is_stored_once_and_answers_like_the_first():
    tiny = tiny_study()
    client, user = rater_client()
    onboard(client, tiny)
    item = client.get(tiny.base + "next/").json()["item"]["id"]
    payload = answer(item, 61.0)
    first = client.post(tiny.base + "answers/", payload, format="json")
    again = client.post(tiny.base + "answers/", payload, format="json")
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["position"] == first.json()["position"] == 1
    assert session_ratings().filter(answer__client_uuid=payload["client_uuid"]).count() == 3
    # the same id with other scores is a conflict and changes nothing
    changed = {**payload, "scores": {"subject": 1, "completeness": 1, "interaction": 1}}
    response = client.post(tiny.base + "answers/", changed, format="json")
    assert response.status_code == 409
    assert response.json()["detail"] == "this answer id was already used with different scores"
    assert set(
        session_ratings()
        .filter(answer__client_uuid=payload["client_uuid"])
        .values_list("score", flat=True)
    ) == {61.0}


@pytest.mark.parametrize(
    ("scores", "status", "detail"),
    [
        (
            {"subject": 101, "completeness": 5, "interaction": 5},
            400,
            "score for 'subject' is 101, outside the scale [0, 100]",
        ),
        (
            {"subject": -0.5, "completeness": 5, "interaction": 5},
            400,
            "score for 'subject' is -0.5, outside the scale [0, 100]",
        ),
        (
            {"subject": "50", "completeness": 5, "interaction": 5},
            400,
            "score for 'subject' is not a number: '50'",
        ),
        (
            {"subject": True, "completeness": 5, "interaction": 5},
            400,
            "score for 'subject' is not a number: True",
        ),
        (
            {"subject": 5, "completeness": 5, "interaction": 5, "beauty": 3},
            400,
            "unknown dimension(s): beauty",
        ),
        ({"subject": 5, "completeness": 5}, 400, "missing score(s) for: interaction"),
    ],
)
def test_bad_scores_are_refused_and_nothing_is_stored(scores, status, detail):
    tiny = tiny_study()
    client, _ = rater_client()
    onboard(client, tiny)
    item = client.get(tiny.base + "next/").json()["item"]["id"]
    response = client.post(tiny.base + "answers/", answer(item, scores), format="json")
    assert (response.status_code, response.json()["detail"]) == (status, detail)
    assert session_ratings().count() == 0


def test_nan_is_refused():
    tiny = tiny_study()
    client, _ = rater_client()
    onboard(client, tiny)
    item = client.get(tiny.base + "next/").json()["item"]["id"]
    body = answer(item)
    raw = (
        f'{{"client_uuid": "{body["client_uuid"]}", "item": "{item}", '
        '"scores": {"subject": NaN, "completeness": 5, "interaction": 5}}'
    )
    response = client.post(tiny.base + "answers/", raw, content_type="application/json")
    assert response.status_code == 400
    assert session_ratings().count() == 0


def test_items_outside_the_assignment_are_refused():
    tiny = tiny_study()
    client, _ = rater_client()
    onboard(client, tiny)
    current = client.get(tiny.base + "next/").json()["item"]["id"]
    qualification_item = str(tiny.qualification[0].public_id)
    response = client.post(tiny.base + "answers/", answer(qualification_item), format="json")
    assert response.status_code == 404
    assert response.json()["detail"] == "this video is not part of your session"
    # another item of the session than the one to rate now
    assignment = Assignment.objects.get()

    later = str(Item.objects.get(pk=assignment.order[3]).public_id)
    assert later != current
    response = client.post(tiny.base + "answers/", answer(later), format="json")
    assert response.status_code == 409
    assert session_ratings().count() == 0


def test_another_raters_answer_id_cannot_be_touched():
    tiny = tiny_study()
    alice, _ = rater_client()
    bob, _ = rater_client()
    onboard(alice, tiny)
    onboard(bob, tiny)
    item = alice.get(tiny.base + "next/").json()["item"]["id"]
    payload = answer(item, 30.0)
    assert alice.post(tiny.base + "answers/", payload, format="json").status_code == 201
    response = bob.post(tiny.base + "answers/", payload, format="json")
    assert response.status_code == 409
    assert session_ratings().filter(answer__assignment__rater__user__isnull=False).count() == 3


def test_the_break_is_enforced_by_the_server():
    tiny = tiny_study()
    client, user = rater_client()
    onboard(client, tiny)
    for _ in range(3):
        item = client.get(tiny.base + "next/").json()["item"]["id"]
        client.post(tiny.base + "answers/", answer(item), format="json")
    body = client.get(tiny.base + "next/").json()
    assert body["step"] == "break" and body["item"] is None
    assert 1 <= body["break_seconds_left"] <= 2
    # when: the client skips the break and posts the next item anyway
    assignment = Assignment.objects.get()

    next_item = str(Item.objects.get(pk=assignment.order[3]).public_id)
    response = client.post(tiny.base + "answers/", answer(next_item), format="json")
    # then
    assert response.status_code == 423
    assert response.json()["error"] == "on_break"
    assert session_ratings().count() == 9
    end_break(user)
    assert client.post(tiny.base + "answers/", answer(next_item), format="json").status_code == 201


def test_ratings_are_refused_before_qualification_and_after_the_session():
    tiny = tiny_study()
    client, user = rater_client()
    item = str(tiny.golden[0].public_id)
    response = client.post(tiny.base + "answers/", answer(item), format="json")
    assert (response.status_code, response.json()["detail"]) == (
        403,
        "please accept the consent form first",
    )
    onboard(client, tiny)
    rate_session(client, tiny, user)
    response = client.post(tiny.base + "answers/", answer(item), format="json")
    # no session is left for this rater: the study is done for them
    assert response.status_code in (403, 409)
    assert session_ratings().count() == 24


def test_failing_the_qualification_screens_the_rater_out():
    tiny = tiny_study()
    client, _ = rater_client()
    client.post(
        tiny.base + "consent/",
        {"accept": True, "viewport_width": 800, "viewport_height": 600},
        format="json",
    )
    client.post(tiny.base + "tutorial/done/")
    for value in (90.0, 52.0):  # 90 is 4 sigma off: 3 of 6 answers within -> 0.5 < 0.75
        item = client.get(tiny.base + "next/").json()["item"]["id"]
        client.post(tiny.base + "answers/", answer(item, value), format="json")
    participation = Participation.objects.get()
    assert participation.qualification_state == "failed"
    assert participation.qualification_share == 0.5
    state = client.get(tiny.base + "state/").json()
    assert state["step"] == "screened_out"
    assert state["completion"]["redirect_url"] == "https://market.example/screenout"
    response = client.get(tiny.base + "next/").json()
    assert response["item"] is None
    assert qualification_ratings().count() == 6


def test_a_retry_gives_a_new_attempt_when_configured():
    tiny = tiny_study(qualification_retries=1)
    client, _ = rater_client()
    client.post(
        tiny.base + "consent/",
        {"accept": True, "viewport_width": 800, "viewport_height": 600},
        format="json",
    )
    client.post(tiny.base + "tutorial/done/")
    for value in (90.0, 90.0):
        item = client.get(tiny.base + "next/").json()["item"]["id"]
        client.post(tiny.base + "answers/", answer(item, value), format="json")
    participation = Participation.objects.get()
    assert (participation.qualification_state, participation.qualification_attempts) == (
        "in_progress",
        2,
    )
    assert client.get(tiny.base + "next/").json()["position"] == 0


def test_the_golden_gate_stops_a_rater_who_disagrees_with_the_experts():
    tiny = tiny_study()
    client, user = rater_client()
    onboard(client, tiny)
    rate_session(client, tiny, user, golden_scores=(90.0, 10.0))  # experts: 20, 80
    assignment = Assignment.objects.get()
    assert assignment.golden_agreement == pytest.approx(-1.0)
    assert assignment.eligible_for_next is False
    assert client.get(tiny.base + "state/").json()["step"] == "not_eligible"


def test_a_small_screen_is_turned_away():
    tiny = tiny_study(min_viewport_width=1024, min_viewport_height=700)
    client, _ = rater_client()
    response = client.post(
        tiny.base + "consent/",
        {"accept": True, "viewport_width": 800, "viewport_height": 600},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["reason"] == "viewport_too_small"
    assert Participation.objects.get().consent_at is None


def test_a_line_clicker_is_flagged_for_the_admin():
    from annotation.services.line_click import LINE_CLICK_WINDOW

    tiny = tiny_study(stimuli=40, session_size=40, rest_every=0)
    client, user = rater_client()
    onboard(client, tiny)
    for _ in range(LINE_CLICK_WINDOW):
        body = client.get(tiny.base + "next/").json()
        client.post(tiny.base + "answers/", answer(body["item"]["id"], 50.0), format="json")
    assignment = Assignment.objects.get()
    assert assignment.flagged_line_clicker is True
    assert assignment.flag_reason == "100% identical scores in the last 90 ratings"


def test_next_and_submit_run_a_constant_number_of_queries():
    tiny = tiny_study(rest_every=0)
    client, _ = rater_client()
    onboard(client, tiny)
    client.get(tiny.base + "next/")  # starts the session
    counts = []
    for _ in range(5):
        with CaptureQueriesContext(connection) as next_queries:
            item = client.get(tiny.base + "next/").json()["item"]["id"]
        with CaptureQueriesContext(connection) as submit_queries:
            client.post(tiny.base + "answers/", answer(item), format="json")
        counts.append((len(next_queries), len(submit_queries)))
    assert len(set(counts)) == 1, counts
    assert counts[0][0] <= 12 and counts[0][1] <= 20, counts


def test_a_study_without_qualification_items_needs_no_test():
    tiny = tiny_study(qualification_size=0)
    client, _ = rater_client()
    client.post(
        tiny.base + "consent/",
        {"accept": True, "viewport_width": 800, "viewport_height": 600},
        format="json",
    )
    state = client.post(tiny.base + "tutorial/done/").json()
    assert state["step"] == "rating"
    assert client.get(tiny.base + "next/").json()["item"] is not None


@pytest.mark.parametrize("session_started", [False, True])
def test_the_repeat_of_the_answer_that_passed_the_qualification_answers_200(session_started):
    # given: the last qualification answer passed the rater, but its reply was lost
    tiny = tiny_study()
    client, _ = rater_client()
    consent_and_tutorial(client, tiny)
    for _ in range(2):
        item = client.get(tiny.base + "next/").json()["item"]["id"]
        last = answer(item, 52.0)
        first = client.post(tiny.base + "answers/", last, format="json")
    assert (first.status_code, first.json()["step"]) == (201, "rating")
    if session_started:
        client.get(tiny.base + "next/")
    # when: the browser sends it again
    again = client.post(tiny.base + "answers/", last, format="json")
    # then: a repeat, nothing stored twice, no rating
    assert (again.status_code, again.json()["status"], again.json()["step"]) == (
        200,
        "repeat",
        "rating",
    )
    assert qualification_ratings().filter(answer__client_uuid=last["client_uuid"]).count() == 3
    assert session_ratings().count() == 0
    # the same id with other scores is still a conflict
    changed = {**last, "scores": {"subject": 1, "completeness": 1, "interaction": 1}}
    response = client.post(tiny.base + "answers/", changed, format="json")
    assert (response.status_code, response.json()["error"]) == (409, "conflict")
