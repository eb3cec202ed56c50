"""A video the rater's browser cannot play: the rater skips it (POST problems/), the item
leaves what they are asked, the team gets a record, and nothing answered is touched. An
item of the study that is not the rater's (another rater's, a session's they have not
taken or that has ended, a session's item while they are in the test) is answered as an
unknown item id, whatever the rater's state and whatever else the report holds: a rater
cannot probe which item ids exist or whose they are."""

import logging

import pytest

from annotation.models import Answer, Assignment, Item, Participation, Payment, PlaybackReport
from tests.annotation.rater_fixtures import (
    answer,
    consent_and_tutorial,
    onboard,
    rater_client,
    tiny_study,
)

pytestmark = pytest.mark.django_db


def report(client, tiny, item: str, detail: str = "MEDIA_ERR_DECODE (3)"):
    return client.post(tiny.base + "problems/", {"item": item, "detail": detail}, format="json")


def current(client, tiny) -> dict:
    return client.get(tiny.base + "next/").json()


def test_the_current_session_item_is_skipped_once_and_recorded():
    # given: a rater at the first item of their session
    tiny = tiny_study(rest_every=0)
    client, user = rater_client()
    onboard(client, tiny)
    body = current(client, tiny)
    first, length = body["item"]["id"], body["length"]
    # when
    skipped = report(client, tiny, first)
    # then: the session goes on without it, one item shorter
    assert skipped.status_code == 201, skipped.json()
    assert (skipped.json()["status"], skipped.json()["length"]) == ("skipped", length - 1)
    after = current(client, tiny)
    assert after["item"]["id"] != first and after["position"] == 0
    record = PlaybackReport.objects.get()
    assert (str(record.item.public_id), record.detail) == (first, "MEDIA_ERR_DECODE (3)")
    assert record.assignment == Assignment.objects.get(rater__user=user)
    # and a repeat (the page sent it twice) answers like the first, records nothing more
    again = report(client, tiny, first)
    assert (again.status_code, again.json()["status"]) == (200, "repeat")
    assert PlaybackReport.objects.count() == 1
    # and the rest of the session is answered as usual, to its end
    while item := current(client, tiny)["item"]:
        assert (
            client.post(tiny.base + "answers/", answer(item["id"]), format="json").status_code
            == 201
        )
    assignment = Assignment.objects.get(rater__user=user)
    assert assignment.state == "finished"
    assert Answer.objects.filter(assignment=assignment).count() == length - 1


def test_only_the_item_the_rater_is_at_can_be_skipped():
    tiny = tiny_study(rest_every=0)
    client, _ = rater_client()
    onboard(client, tiny)
    window = current(client, tiny)["window"]
    # a later item of the window: out of order, named
    ahead = report(client, tiny, window[1]["id"])
    assert ahead.status_code == 409 and ahead.json()["expected"] == window[0]["id"]
    # an answered one
    assert (
        client.post(tiny.base + "answers/", answer(window[0]["id"]), format="json").status_code
        == 201
    )
    assert report(client, tiny, window[0]["id"]).status_code == 409
    # no such item, a malformed report, a detail with a NUL
    assert report(client, tiny, "4b2c4a37-5f0c-4d5e-9a59-1b1c2d3e4f50").status_code == 404
    bad = client.post(tiny.base + "problems/", {"item": "x"}, format="json")
    assert bad.status_code == 400 and "'item' must be a UUID" in bad.json()["detail"]
    assert report(client, tiny, window[1]["id"], detail="a\x00b").status_code == 400
    assert not PlaybackReport.objects.exists()


def test_a_session_takes_only_a_few_skips():
    tiny = tiny_study(rest_every=0)
    client, _ = rater_client()
    onboard(client, tiny)
    for _ in range(3):
        assert report(client, tiny, current(client, tiny)["item"]["id"]).status_code == 201
    refused = report(client, tiny, current(client, tiny)["item"]["id"])
    assert refused.status_code == 409 and refused.json()["error"] == "too_many_skipped"
    assert PlaybackReport.objects.count() == 3


def test_skipping_the_last_item_ends_the_session():
    tiny = tiny_study(rest_every=0)
    client, user = rater_client()
    onboard(client, tiny)
    while (
        len((body := current(client, tiny))["window"]) > 1 or body["position"] + 1 < body["length"]
    ):
        item = body["item"]["id"]
        assert client.post(tiny.base + "answers/", answer(item), format="json").status_code == 201
    # when: the last item cannot be played
    assert report(client, tiny, body["item"]["id"]).status_code == 201
    # then: finished, its golden gate decided, the payment due
    assignment = Assignment.objects.get(rater__user=user)
    assert assignment.state == "finished" and assignment.eligible_for_next is not None
    assert Payment.objects.filter(assignment=assignment).exists()


def test_a_test_item_is_skipped_and_a_test_left_without_items_lets_the_rater_through():
    # given: a rater at the first of the two qualification items
    tiny = tiny_study(rest_every=0)
    client, user = rater_client()
    consent_and_tutorial(client, tiny)
    body = current(client, tiny)
    assert (body["step"], body["length"]) == ("qualification", 2)
    # when
    skipped = report(client, tiny, body["item"]["id"])
    # then: the test is one item long
    assert skipped.status_code == 201 and skipped.json()["length"] == 1
    record = PlaybackReport.objects.get()
    attempt = Participation.objects.get(rater__user=user).qualification_attempts
    assert (record.assignment, record.attempt) == (None, attempt)
    # when: the other cannot be played either
    assert report(client, tiny, current(client, tiny)["item"]["id"]).status_code == 201
    # then: no test is left: let through, as in a study without one
    participation = Participation.objects.get(rater__user=user)
    assert participation.qualification_state == "passed"
    assert current(client, tiny)["step"] == "rating"


def test_skipping_the_last_unanswered_test_item_scores_the_attempt():
    tiny = tiny_study(rest_every=0)
    client, user = rater_client()
    consent_and_tutorial(client, tiny)
    first = current(client, tiny)["item"]["id"]
    assert (
        client.post(tiny.base + "answers/", answer(first, 52.0), format="json").status_code == 201
    )
    # when
    assert report(client, tiny, current(client, tiny)["item"]["id"]).status_code == 201
    # then: scored on the answer given (within the experts' tolerance: passed)
    participation = Participation.objects.get(rater__user=user)
    assert participation.qualification_state == "passed"
    assert participation.qualification_share == 1.0


UNKNOWN = "4b2c4a37-5f0c-4d5e-9a59-1b1c2d3e4f50"
NO_SUCH_ITEM = {"error": "not_found", "detail": "no such item in this study"}


def assert_alike(client, tiny, foreign: str, detail: str = "MEDIA_ERR_DECODE (3)") -> None:
    """The foreign item is answered exactly as the unknown id, and nothing is recorded."""
    unknown = report(client, tiny, UNKNOWN, detail)
    refused = report(client, tiny, foreign, detail)
    assert (refused.status_code, refused.json()) == (404, NO_SUCH_ITEM)
    assert (refused.status_code, refused.content) == (unknown.status_code, unknown.content)
    assert not PlaybackReport.objects.exists()


def outside(assignment: Assignment) -> str:
    """The public id of a session item of the study that the assignment does not hold."""
    item = (
        Item.objects.filter(study=assignment.session.study, role=Item.Role.STIMULUS)
        .exclude(pk__in=assignment.order)
        .first()
    )
    return str(item.public_id)


def test_another_raters_item_is_answered_as_an_unknown_one(caplog):
    # given: two raters of a study of two sessions, each at the first item of their own
    # (no golden items, which every session shares)
    tiny = tiny_study(stimuli=12, golden_per_session=0, rest_every=0)
    owner, _ = rater_client()
    onboard(owner, tiny)
    theirs = current(owner, tiny)["item"]["id"]
    client, user = rater_client()
    onboard(client, tiny)
    current(client, tiny)  # their session starts
    mine = Assignment.objects.get(rater__user=user).order
    assert Item.objects.get(public_id=theirs).pk not in mine
    # when / then: the other rater's item, as the unknown id, even with a detail refused
    caplog.set_level(logging.WARNING, logger="annotation.services.rater_flow")
    assert_alike(client, tiny, theirs)
    assert_alike(client, tiny, theirs, detail="a\x00b")
    assert any("not theirs to skip" in r.getMessage() for r in caplog.records)
    # and the item is real: its rater skips it
    assert report(owner, tiny, theirs).status_code == 201


def test_an_item_outside_the_session_is_answered_alike_in_every_state():
    tiny = tiny_study(stimuli=12, rest_every=0)
    client, user = rater_client()
    onboard(client, tiny)
    at = current(client, tiny)
    assignment = Assignment.objects.get(rater__user=user)
    foreign = outside(assignment)
    # at an item of their session
    assert_alike(client, tiny, foreign)
    # their session paused: their own item says so, another is unknown
    Assignment.objects.filter(pk=assignment.pk).update(state=Assignment.State.PAUSED)
    assert report(client, tiny, at["item"]["id"]).status_code == 423
    assert_alike(client, tiny, foreign)
    Assignment.objects.filter(pk=assignment.pk).update(state=Assignment.State.ACTIVE)
    # their session ended: no session open, and its items are theirs no more
    while item := current(client, tiny)["item"]:
        sent = client.post(tiny.base + "answers/", answer(item["id"]), format="json")
        assert sent.status_code == 201
    assert Assignment.objects.get(pk=assignment.pk).state == Assignment.State.FINISHED
    assert_alike(client, tiny, foreign)
    assert_alike(client, tiny, at["item"]["id"])


def test_their_own_session_items_keep_their_answers():
    tiny = tiny_study(stimuli=12, rest_every=0)
    client, _ = rater_client()
    onboard(client, tiny)
    window = current(client, tiny)["window"]
    # an item ahead in their own session: out of order, naming the one they are at
    ahead = report(client, tiny, window[1]["id"])
    assert (ahead.status_code, ahead.json()["expected"]) == (409, window[0]["id"])
    # the one they are at: skipped; its repeat: "repeat"
    assert report(client, tiny, window[0]["id"]).status_code == 201
    again = report(client, tiny, window[0]["id"])
    assert (again.status_code, again.json()["status"]) == (200, "repeat")


def test_a_session_item_is_unknown_to_a_rater_in_the_test_or_before_it():
    tiny = tiny_study(rest_every=0)
    client, _ = rater_client()
    session_item = str(Item.objects.filter(study=tiny.study, role=Item.Role.STIMULUS)[0].public_id)
    # before consent: refused as the unknown id, not for the missing consent
    assert_alike(client, tiny, session_item)
    # in the qualification test
    consent_and_tutorial(client, tiny)
    own = current(client, tiny)
    assert own["step"] == "qualification"
    assert_alike(client, tiny, session_item)
    assert report(client, tiny, own["item"]["id"]).status_code == 201


def test_no_video_is_skipped_during_a_rest_break():
    # given: a rater whose third answer started a rest break
    tiny = tiny_study(rest_every=3, rest_seconds=60)
    client, user = rater_client()
    onboard(client, tiny)
    for _ in range(3):
        item = current(client, tiny)["item"]["id"]
        assert client.post(tiny.base + "answers/", answer(item), format="json").status_code == 201
    assignment = Assignment.objects.get(rater__user=user)
    upcoming = Item.objects.get(pk=assignment.order[assignment.position])
    # when: a skip of the item after the break (never shown: the page shows the break)
    refused = report(client, tiny, str(upcoming.public_id))
    # then: refused as an answer to it is, and the session keeps it
    assert refused.status_code == 423 and refused.json()["error"] == "on_break"
    assignment.refresh_from_db()
    assert upcoming.pk in assignment.order and not PlaybackReport.objects.exists()
