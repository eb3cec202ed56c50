"""When there is nothing to rate for now: a session paused by the study's team, a study
not running, videos not ready yet. The rater waits (no item), is never let through nor
stuck for good, and an answer sent meanwhile is held back (423), not refused."""

import pytest
from django.db import transaction

from annotation.models import Assignment, Participation, Session, Stimulus, Study
from annotation.services.admin_actions import assignment_pause, assignment_reopen
from annotation.services.studies import study_build_sessions
from tests.annotation.rater_fixtures import (
    answer,
    consent_and_tutorial,
    onboard,
    rater_client,
    session_ratings,
    tiny_study,
)
from tests.annotation.test_rater_flow import rate_session
from tests.factories import StimulusFactory, UserFactory

pytestmark = pytest.mark.django_db


def rated_one(**settings):
    """A rater of the tiny study who rated the first item; the second is on screen."""
    tiny = tiny_study(rest_every=0, **settings)
    client, user = rater_client()
    onboard(client, tiny)
    first = client.get(tiny.base + "next/").json()["item"]["id"]
    assert client.post(tiny.base + "answers/", answer(first), format="json").status_code == 201
    second = client.get(tiny.base + "next/").json()["item"]["id"]
    return tiny, client, user, second


def test_a_paused_session_shows_no_item_and_holds_answers_back(path):
    # given: the team pauses the session while the rater looks at the second item
    tiny, client, user, second = rated_one()
    admin = UserFactory(is_staff=True)
    assignment = Assignment.objects.get(rater__user=user)
    assignment_pause(assignment=assignment, reason="checking this rater", by=admin)
    payload = answer(second)
    # when
    upcoming = client.get(tiny.base + "next/").json()
    state = client.get(tiny.base + "state/").json()
    held = client.post(tiny.base + "answers/", payload, format="json")
    # then
    assert upcoming == {
        "step": "paused",
        "position": 1,
        "length": 8,
        "break_seconds_left": 0,
        "item": None,
        "preload": None,
        "window": [],
        "window_ends": None,
        "rest_seconds": tiny.study.rest_seconds,
        "completion": None,
    }
    assert (state["step"], state["assignment"]["state"], state["completion"]) == (
        "paused",
        "paused",
        None,
    )
    assert (held.status_code, held.json()) == (
        423,
        {"error": "paused", "detail": "your session was paused by the study's team"},
    )
    assert session_ratings().count() == 3
    # when: the team reopens it, and the held answer comes again
    assignment_reopen(assignment=assignment, reason="all fine", by=admin)
    stored = client.post(tiny.base + "answers/", payload, format="json")
    # then
    assert (stored.status_code, stored.json()["position"]) == (201, 2)
    assert session_ratings().filter(answer__client_uuid=payload["client_uuid"]).count() == 3


@pytest.mark.parametrize(
    ("state", "status", "refusal"),
    [
        # paused: held back (the page keeps the answer and sends it again later)
        (
            Study.State.PAUSED,
            423,
            {"error": "study_not_running", "detail": "this study is not running at the moment"},
        ),
        # closed: a final refusal (the page drops what it holds), not "come back later"
        (Study.State.CLOSED, 403, {"error": "forbidden", "detail": "this study is closed"}),
    ],
    ids=["paused", "closed"],
)
def test_a_study_not_running_refuses_answers(path, state, status, refusal):
    # given: the study stops running while the rater looks at the second item
    tiny, client, _, second = rated_one()
    Study.objects.filter(pk=tiny.study.pk).update(state=state)
    # when
    upcoming = client.get(tiny.base + "next/")
    refused = client.post(tiny.base + "answers/", answer(second), format="json")
    # then
    assert (upcoming.status_code, upcoming.json()) == (status, refusal)
    assert (refused.status_code, refused.json()) == (status, refusal)
    assert session_ratings().count() == 3


def test_the_qualification_test_waits_for_its_videos():
    # given: the qualification videos are still being processed
    tiny = tiny_study()
    Stimulus.objects.filter(role=Stimulus.Role.QUALIFICATION).update(
        status=Stimulus.Status.PROCESSING
    )
    client, user = rater_client()
    # when
    state = consent_and_tutorial(client, tiny)
    waiting = client.get(tiny.base + "next/").json()
    # then: no pass, no item
    assert Participation.objects.get(rater__user=user).qualification_state == "in_progress"
    assert state["step"] == "qualification"
    assert (waiting["step"], waiting["item"], waiting["position"], waiting["length"]) == (
        "qualification",
        None,
        0,
        0,
    )
    assert not Assignment.objects.exists()
    # when: the videos are ready
    Stimulus.objects.filter(role=Stimulus.Role.QUALIFICATION).update(status=Stimulus.Status.READY)
    upcoming = client.get(tiny.base + "next/").json()
    # then
    assert (upcoming["step"], upcoming["position"], upcoming["length"]) == ("qualification", 0, 2)
    assert upcoming["item"]["id"] in {str(s.public_id) for s in tiny.qualification}


def test_a_study_without_any_qualification_video_needs_no_test():
    # given
    tiny = tiny_study()
    Stimulus.objects.filter(role=Stimulus.Role.QUALIFICATION).delete()
    client, user = rater_client()
    # when
    state = consent_and_tutorial(client, tiny)
    # then
    assert state["step"] == "rating"
    assert Participation.objects.get(rater__user=user).qualification_state == "passed"


def test_no_session_starts_before_its_videos_are_ready():
    # given: every video to rate is still being processed (the golden ones are ready)
    tiny = tiny_study()
    client, user = rater_client()
    onboard(client, tiny)
    to_rate = Stimulus.objects.filter(role=Stimulus.Role.STIMULUS)
    to_rate.update(status=Stimulus.Status.PROCESSING)
    # when
    waiting = [client.get(tiny.base + "next/").json() for _ in range(2)]
    # then: no empty (or golden-only) session is started, so none is stuck
    assert (
        waiting[0]
        == waiting[1]
        == {
            "step": "rating",
            "position": 0,
            "length": 0,
            "break_seconds_left": 0,
            "item": None,
            "preload": None,
            "window": [],
            "window_ends": None,
            "rest_seconds": tiny.study.rest_seconds,
            "completion": None,
        }
    )
    assert not Assignment.objects.exists()
    # when: the videos are ready
    to_rate.update(status=Stimulus.Status.READY)
    upcoming = client.get(tiny.base + "next/").json()
    # then
    assert (upcoming["step"], upcoming["position"], upcoming["length"]) == ("rating", 0, 8)
    assert upcoming["item"] is not None


def test_the_next_session_is_one_with_videos_ready():
    # given: two sessions; the first one's videos are still being processed
    tiny = tiny_study(stimuli=12)
    first, second = Session.objects.filter(study=tiny.study).order_by("index")
    Stimulus.objects.filter(
        memberships__item__session_items__session=first, role=Stimulus.Role.STIMULUS
    ).update(status=Stimulus.Status.PROCESSING)
    client, user = rater_client()
    onboard(client, tiny)
    # when
    upcoming = client.get(tiny.base + "next/").json()
    # then
    assert (upcoming["step"], upcoming["length"]) == ("rating", 8)
    assert Assignment.objects.get(rater__user=user).session == second


def test_a_test_whose_videos_all_failed_is_no_test():
    # given: every qualification video failed to transcode
    tiny = tiny_study()
    Stimulus.objects.filter(role=Stimulus.Role.QUALIFICATION).update(status=Stimulus.Status.FAILED)
    client, user = rater_client()
    # when
    state = consent_and_tutorial(client, tiny)
    # then: the rater is not kept waiting for a test that cannot come
    assert Participation.objects.get(rater__user=user).qualification_state == "passed"
    assert state["step"] == "rating"


def test_a_test_whose_videos_fail_after_the_rater_began_lets_the_rater_through():
    # given: a rater at the start of the test, then every test video fails to transcode
    # (a retried job that gave up)
    tiny = tiny_study()
    client, user = rater_client()
    assert consent_and_tutorial(client, tiny)["step"] == "qualification"
    Stimulus.objects.filter(role=Stimulus.Role.QUALIFICATION).update(status=Stimulus.Status.FAILED)
    # when: the page asks for the next item, and (waiting) asks again
    client.get(tiny.base + "next/")
    again = client.get(tiny.base + "next/").json()
    # then: let through, as in a study without a test, not kept waiting
    assert Participation.objects.get(rater__user=user).qualification_state == "passed"
    assert again["step"] == "rating" and again["item"] is not None


def test_a_test_whose_pairs_each_lost_a_half_is_no_test():
    # given: a preference study whose qualification pairs each have a video that failed
    # to transcode (the other halves are ready, but no pair can be shown)
    from tests.annotation.design_fixtures import tiny_of

    tiny = tiny_of("preference")
    for pair in range(0, len(tiny.qualification), 2):
        Stimulus.objects.filter(pk=tiny.qualification[pair].pk).update(
            status=Stimulus.Status.FAILED
        )
    assert Stimulus.objects.filter(role="qualification", status="ready").exists()
    client, user = rater_client()
    # when
    state = consent_and_tutorial(client, tiny)
    # then: not kept waiting for a test that cannot come
    assert Participation.objects.get(rater__user=user).qualification_state == "passed"
    assert state["step"] == "rating"


def test_a_session_of_failed_videos_does_not_keep_the_rater_from_finishing(path):
    # given: a second session made of one video that failed to transcode
    tiny = tiny_study(rest_every=0)
    StimulusFactory(study=tiny.study, status=Stimulus.Status.FAILED)
    with transaction.atomic():
        assert len(study_build_sessions(study=tiny.study)) == 1
    client, user = rater_client()
    onboard(client, tiny)
    # when: the rater finishes the one session there is to rate
    rate_session(client, tiny, user)
    # then: done, with the completion code
    body = client.get(tiny.base + "next/").json()
    assert body["step"] == "done" and body["completion"]["code"]
    assert Assignment.objects.filter(rater__user=user).count() == 1
