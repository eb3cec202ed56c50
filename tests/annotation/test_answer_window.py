"""The offline window (docs/rater-api.md, "The window"): next/ hands out the items a page
may answer without asking again, never past a rest break or the end of a session or
test; answers are taken once, in order; a rest runs from when the rater answered, so
answers that arrive late neither skip a rest nor make the rater rest twice."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Assignment, Participation
from annotation.selectors import window_span
from annotation.services.rest_breaks import answered_moment
from tests.annotation.rater_fixtures import (
    answer,
    consent_and_tutorial,
    onboard,
    rater_client,
    session_ratings,
    tiny_study,
)

pytestmark = pytest.mark.django_db


def rater_in(**settings):
    tiny = tiny_study(**settings)
    client, user = rater_client()
    onboard(client, tiny)
    return tiny, client, user


def order_ids(user) -> list[str]:
    from annotation.models import Item

    assignment = Assignment.objects.get(rater__user=user)
    public = dict(Item.objects.filter(pk__in=assignment.order).values_list("pk", "public_id"))
    return [str(public[pk]) for pk in assignment.order]


def moment(seconds_ago: float) -> str:
    return (timezone.now() - timedelta(seconds=seconds_ago)).isoformat()


def started_minutes_ago(user, minutes: int) -> None:
    """The session began a while ago (the rater has been rating, offline)."""
    earlier = timezone.now() - timedelta(minutes=minutes)
    Assignment.objects.filter(rater__user=user).update(started_at=earlier)


# ---------------------------------------------------------------- where a window ends


@pytest.mark.parametrize(
    ("position", "length", "size", "answered_before", "rest_every", "expected"),
    [
        (0, 8, 5, 0, 0, (5, "more")),  # the window's size
        (5, 8, 5, 0, 0, (8, "end")),  # the session's end
        (3, 8, 5, 0, 0, (8, "end")),  # exactly at the end
        (0, 8, 5, 0, 3, (3, "break")),  # the 3rd answer starts a rest
        (3, 8, 5, 0, 3, (6, "break")),
        (1, 8, 5, 4, 3, (2, "break")),  # 4 earlier answers: the 6th in the study rests
        (0, 8, 1, 0, 3, (1, "more")),  # no look-ahead
        (7, 8, 5, 0, 4, (8, "break")),  # a rest at the session's last answer
        (0, 8, 0, 0, 0, (1, "more")),  # never less than the current item
    ],
)
def test_the_window_stops_at_its_size_a_rest_or_the_end(
    position, length, size, answered_before, rest_every, expected
):
    span = window_span(
        position=position,
        length=length,
        size=size,
        answered_before=answered_before,
        rest_every=rest_every,
    )
    assert span == expected


def test_an_answer_counts_from_the_raters_time_within_the_previous_answer_and_now():
    now = timezone.now()
    previous = now - timedelta(minutes=10)
    five_ago = now - timedelta(minutes=5)
    assert answered_moment(five_ago, previous=previous, now=now) == five_ago
    assert answered_moment(now - timedelta(hours=1), previous=previous, now=now) == previous
    assert answered_moment(now + timedelta(hours=1), previous=previous, now=now) == now
    assert answered_moment(None, previous=previous, now=now) == now


# ---------------------------------------------------------------- next/


def test_next_hands_out_the_window_in_the_servers_order(path):
    tiny, client, user = rater_in(rest_every=0, window_size=4)
    # when
    body = client.get(tiny.base + "next/").json()
    # then
    order = order_ids(user)
    assert [item["id"] for item in body["window"]] == order[:4]
    assert body["item"]["id"] == order[0] and body["preload"]["id"] == order[1]
    assert body["window_ends"] == "more"
    assert body["rest_seconds"] == tiny.study.rest_seconds
    # nothing in an item tells a golden one apart
    assert all(set(item) == set(body["item"]) for item in body["window"])


def test_the_window_stops_at_the_rest_break(path):
    tiny, client, user = rater_in(rest_every=3, rest_seconds=60)
    # when
    body = client.get(tiny.base + "next/").json()
    # then
    assert [item["id"] for item in body["window"]] == order_ids(user)[:3]
    assert (body["window_ends"], body["rest_seconds"]) == ("break", 60)


def test_the_window_stops_at_the_end_of_the_session(path):
    tiny, client, user = rater_in(rest_every=0, window_size=50)
    body = client.get(tiny.base + "next/").json()
    assert [item["id"] for item in body["window"]] == order_ids(user)
    assert body["window_ends"] == "end"


def test_a_window_of_one_still_names_the_next_item_to_preload(path):
    tiny, client, user = rater_in(rest_every=0, window_size=1)
    body = client.get(tiny.base + "next/").json()
    order = order_ids(user)
    assert [item["id"] for item in body["window"]] == order[:1]
    assert body["preload"]["id"] == order[1]


def test_the_qualification_window_ends_with_the_test():
    tiny = tiny_study(rest_every=0, window_size=5)
    client, user = rater_client()
    consent_and_tutorial(client, tiny)
    # when
    body = client.get(tiny.base + "next/").json()
    # then: both items of the test, and the verdict is the server's
    participation = Participation.objects.get(rater__user=user)
    from annotation.models import Item

    drawn = participation.qualification_set["items"]
    public = dict(Item.objects.filter(pk__in=drawn).values_list("pk", "public_id"))
    assert [item["id"] for item in body["window"]] == [str(public[pk]) for pk in drawn]
    assert (body["step"], body["window_ends"]) == ("qualification", "end")


# ---------------------------------------------------------------- answers, in order


def test_answers_from_the_window_are_stored_once_in_order(path):
    tiny, client, user = rater_in(rest_every=0)
    window = [item["id"] for item in client.get(tiny.base + "next/").json()["window"]]
    answers = [answer(item, 40.0 + index) for index, item in enumerate(window)]
    # when: the whole window at once, as a page back online sends it, and again
    first = [client.post(tiny.base + "answers/", a, format="json") for a in answers]
    again = [client.post(tiny.base + "answers/", a, format="json") for a in answers]
    # then
    assert [r.status_code for r in first] == [201] * len(window)
    assert [r.status_code for r in again] == [200] * len(window)
    stored = session_ratings().filter(dimension__key="subject").order_by("answer__id")
    assert [str(r.stimulus.public_id) for r in stored] == window
    assert [r.score for r in stored] == [40.0 + i for i in range(len(window))]
    assert Assignment.objects.get(rater__user=user).position == len(window)


def test_an_answer_that_skips_ahead_is_refused_naming_the_item_awaited(path):
    tiny, client, user = rater_in(rest_every=0)
    window = [item["id"] for item in client.get(tiny.base + "next/").json()["window"]]
    # when: the second item's answer comes before the first's
    skipped = client.post(tiny.base + "answers/", answer(window[1]), format="json")
    # then
    assert skipped.status_code == 409
    body = skipped.json()
    assert body["error"] == "out_of_order"
    assert (body["expected"], body["position"]) == (window[0], 0)
    assert "in order" in body["detail"]
    assert not session_ratings().exists()
    # and once the first is in, the second is taken
    assert client.post(tiny.base + "answers/", answer(window[0]), format="json").status_code == 201
    assert client.post(tiny.base + "answers/", answer(window[1]), format="json").status_code == 201


def test_the_qualification_takes_its_answers_in_order():
    tiny = tiny_study(rest_every=0)
    client, _ = rater_client()
    consent_and_tutorial(client, tiny)
    window = [item["id"] for item in client.get(tiny.base + "next/").json()["window"]]
    # when
    skipped = client.post(tiny.base + "answers/", answer(window[1], 52.0), format="json")
    # then
    assert skipped.status_code == 409
    assert (skipped.json()["error"], skipped.json()["expected"]) == ("out_of_order", window[0])


# ---------------------------------------------------------------- rest breaks


def test_a_rater_who_rested_offline_does_not_rest_again(path):
    """Three answers given offline 70 s ago, the third starting a 60 s rest, arrive now:
    the rest is over, and the next window is handed out at once."""
    tiny, client, user = rater_in(rest_every=3, rest_seconds=60)
    window = [item["id"] for item in client.get(tiny.base + "next/").json()["window"]]
    started_minutes_ago(user, 5)
    for index, item in enumerate(window):
        late = answer(item, answered_at=moment(90 - 10 * index))  # 90, 80, 70 s ago
        assert client.post(tiny.base + "answers/", late, format="json").status_code == 201
    # when
    body = client.get(tiny.base + "next/").json()
    # then
    assert body["step"] == "rating" and body["break_seconds_left"] == 0
    assert body["item"]["id"] == order_ids(user)[3]


def test_a_rest_runs_from_the_answer_that_started_it(path):
    tiny, client, user = rater_in(rest_every=3, rest_seconds=60)
    window = [item["id"] for item in client.get(tiny.base + "next/").json()["window"]]
    started_minutes_ago(user, 5)
    for item in window[:2]:
        client.post(tiny.base + "answers/", answer(item, answered_at=moment(40)), format="json")
    # when: the third, answered 20 s ago, arrives now
    stored = client.post(
        tiny.base + "answers/", answer(window[2], answered_at=moment(20)), format="json"
    )
    # then: 40 s of rest are left, not 60
    assert stored.json()["step"] == "break"
    assert 38 <= stored.json()["break_seconds_left"] <= 41
    upcoming = client.get(tiny.base + "next/").json()
    assert (upcoming["step"], upcoming["window"]) == ("break", [])


def test_an_answer_dated_back_cannot_shorten_the_rest(path):
    """A page whose clock is an hour behind (or a rater holding answers back and dating
    them early) moves the rest back at most to the answer before: here, now."""
    tiny, client, user = rater_in(rest_every=3, rest_seconds=60)
    window = [item["id"] for item in client.get(tiny.base + "next/").json()["window"]]
    for item in window:
        early = answer(item, answered_at=moment(3600))
        assert client.post(tiny.base + "answers/", early, format="json").status_code == 201
    # then: the session started moments ago, so the whole rest is ahead
    assignment = Assignment.objects.get(rater__user=user)
    assert assignment.last_answered_at >= assignment.started_at
    upcoming = client.get(tiny.base + "next/").json()
    assert upcoming["step"] == "break" and upcoming["break_seconds_left"] >= 59
    refused = client.post(tiny.base + "answers/", answer(order_ids(user)[3]), format="json")
    assert (refused.status_code, refused.json()["error"]) == (423, "on_break")


def test_an_answer_dated_ahead_counts_from_its_arrival(path):
    tiny, client, user = rater_in(rest_every=3, rest_seconds=60)
    window = [item["id"] for item in client.get(tiny.base + "next/").json()["window"]]
    for item in window:
        ahead = answer(item, answered_at=(timezone.now() + timedelta(hours=1)).isoformat())
        client.post(tiny.base + "answers/", ahead, format="json")
    assignment = Assignment.objects.get(rater__user=user)
    assert assignment.last_answered_at <= timezone.now()
    assert 58 <= (assignment.break_until - timezone.now()).total_seconds() <= 60
