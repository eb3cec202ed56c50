"""An answer id (client_uuid) names one answer, whichever kind: a rating that reuses the id
of a qualification answer, or the other way round, is a conflict on the fast path and the
DRF path alike, and nothing is stored."""

import pytest

from annotation.api import rater as rater_api
from annotation.models import Assignment
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


def use_path(path: str, monkeypatch) -> None:
    if path == "drf":
        monkeypatch.setattr(rater_api, "fast_answer", lambda request, slug: None)


def pass_qualification(client, tiny) -> dict:
    """Consent, tutorial and a passing qualification; the last qualification answer."""
    consent_and_tutorial(client, tiny)
    for _ in range(2):
        item = client.get(tiny.base + "next/").json()["item"]["id"]
        last = answer(item, 52.0)
        assert client.post(tiny.base + "answers/", last, format="json").status_code == 201
    return last


@pytest.mark.parametrize("path", ["fast", "drf"])
def test_a_rating_that_reuses_a_qualification_answers_id_is_a_conflict(path, monkeypatch):
    # given: a rater who passed the test, at the first item of their session
    tiny = tiny_study(rest_every=0)
    client, _ = rater_client()
    qualification_answer = pass_qualification(client, tiny)
    item = client.get(tiny.base + "next/").json()["item"]["id"]
    use_path(path, monkeypatch)
    # when: the rating for it comes with the id of the last qualification answer
    reused = answer(item, 30.0, client_uuid=qualification_answer["client_uuid"])
    response = client.post(tiny.base + "answers/", reused, format="json")
    # then
    assert (response.status_code, response.json()) == (
        409,
        {"error": "conflict", "detail": "this answer id was already used for another video"},
    )
    assert session_ratings().count() == 0
    assert Assignment.objects.get().position == 0
    assert qualification_ratings().filter(answer__client_uuid=reused["client_uuid"]).count() == 3


@pytest.mark.parametrize("path", ["fast", "drf"])
def test_a_rating_that_reuses_another_raters_qualification_answer_id_is_a_conflict(
    path, monkeypatch
):
    # given: Alice passed the test; Bob is at the first item of his session
    tiny = tiny_study(rest_every=0)
    alice, _ = rater_client()
    alices_answer = pass_qualification(alice, tiny)
    bob, _ = rater_client()
    onboard(bob, tiny)
    item = bob.get(tiny.base + "next/").json()["item"]["id"]
    use_path(path, monkeypatch)
    # when
    reused = answer(item, 30.0, client_uuid=alices_answer["client_uuid"])
    response = bob.post(tiny.base + "answers/", reused, format="json")
    # then
    assert (response.status_code, response.json()) == (
        409,
        {"error": "conflict", "detail": "this answer id is already in use"},
    )
    assert session_ratings().count() == 0
    assert Assignment.objects.get().position == 0


@pytest.mark.parametrize("path", ["fast", "drf"])
def test_a_qualification_answer_that_reuses_a_ratings_id_is_a_conflict(path, monkeypatch):
    # given: a rater who rated an item of one study, and is taking another study's test
    rated = tiny_study(rest_every=0)
    client, user = rater_client()
    onboard(client, rated)
    item = client.get(rated.base + "next/").json()["item"]["id"]
    rating = answer(item, 30.0)
    assert client.post(rated.base + "answers/", rating, format="json").status_code == 201
    other = tiny_study(rest_every=0)
    consent_and_tutorial(client, other)
    test_item = client.get(other.base + "next/").json()["item"]["id"]
    use_path(path, monkeypatch)
    # when: the qualification answer comes with the rating's id
    reused = answer(test_item, 52.0, client_uuid=rating["client_uuid"])
    response = client.post(other.base + "answers/", reused, format="json")
    # then
    assert (response.status_code, response.json()) == (
        409,
        {"error": "conflict", "detail": "this answer id was already used for another video"},
    )
    assert qualification_ratings().filter(answer__participation__rater__user=user).count() == 6
    assert qualification_ratings().filter(answer__client_uuid=rating["client_uuid"]).count() == 0


@pytest.mark.parametrize("path", ["fast", "drf"])
def test_a_qualification_answer_that_reuses_another_raters_rating_id_is_a_conflict(
    path, monkeypatch
):
    # given: Alice rated an item; Bob is taking the test
    tiny = tiny_study(rest_every=0)
    alice, _ = rater_client()
    onboard(alice, tiny)
    item = alice.get(tiny.base + "next/").json()["item"]["id"]
    rating = answer(item, 30.0)
    assert alice.post(tiny.base + "answers/", rating, format="json").status_code == 201
    bob, bob_user = rater_client()
    consent_and_tutorial(bob, tiny)
    test_item = bob.get(tiny.base + "next/").json()["item"]["id"]
    use_path(path, monkeypatch)
    # when
    reused = answer(test_item, 52.0, client_uuid=rating["client_uuid"])
    response = bob.post(tiny.base + "answers/", reused, format="json")
    # then
    assert (response.status_code, response.json()) == (
        409,
        {"error": "conflict", "detail": "this answer id is already in use"},
    )
    assert qualification_ratings().filter(answer__participation__rater__user=bob_user).count() == 0
