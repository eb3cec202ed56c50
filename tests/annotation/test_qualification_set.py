"""The qualification test's items are drawn once per attempt, from enough ready videos."""

import pytest

from annotation.models import ExpertScore, Participation, Stimulus
from tests.annotation.rater_fixtures import (
    answer,
    consent_and_tutorial,
    qualification_ratings,
    rater_client,
    tiny_study,
)
from tests.factories import StimulusFactory, add_expert_scores

pytestmark = pytest.mark.django_db


def test_videos_added_during_an_attempt_do_not_change_it():
    # given: a rater who answered the first of the test's two videos
    tiny = tiny_study(qualification_size=2)
    client, user = rater_client()
    consent_and_tutorial(client, tiny)
    first = client.get(tiny.base + "next/").json()["item"]["id"]
    assert (
        client.post(tiny.base + "answers/", answer(first, 52.0), format="json").status_code == 201
    )
    shown = client.get(tiny.base + "next/").json()["item"]["id"]
    # when: the team adds three qualification videos
    for stimulus in StimulusFactory.create_batch(
        3, study=tiny.study, role=Stimulus.Role.QUALIFICATION
    ):
        add_expert_scores(stimulus, mean=50.0, sigma=10.0)
    # then: the rater still gets, and may answer, the video they were shown
    body = client.get(tiny.base + "next/").json()
    assert (body["item"]["id"], body["position"], body["length"]) == (shown, 1, 2)
    assert (
        client.post(tiny.base + "answers/", answer(shown, 52.0), format="json").status_code == 201
    )
    participation = Participation.objects.get(rater__user=user)
    assert participation.qualification_state == Participation.Qualification.PASSED
    answered = qualification_ratings().filter(answer__participation=participation)
    assert {str(a.stimulus.public_id) for a in answered} == {first, shown}


def test_the_test_waits_until_enough_of_its_videos_are_ready():
    # given: a test of two videos, one of them still being transcoded
    tiny = tiny_study(qualification_size=2)
    Stimulus.objects.filter(pk=tiny.qualification[1].pk).update(status=Stimulus.Status.PROCESSING)
    client, user = rater_client()
    consent_and_tutorial(client, tiny)
    # when / then: no shorter test of the one ready video
    body = client.get(tiny.base + "next/").json()
    assert (body["step"], body["item"], body["length"]) == ("qualification", None, 0)
    # and once it is ready, the whole test
    Stimulus.objects.filter(pk=tiny.qualification[1].pk).update(status=Stimulus.Status.READY)
    body = client.get(tiny.base + "next/").json()
    assert (body["step"], body["length"]) == ("qualification", 2)
    assert body["item"] is not None


def test_a_failed_video_does_not_hold_the_test_back():
    # given: a test of two videos of which one failed to transcode
    tiny = tiny_study(qualification_size=2)
    Stimulus.objects.filter(pk=tiny.qualification[1].pk).update(status=Stimulus.Status.FAILED)
    client, _ = rater_client()
    consent_and_tutorial(client, tiny)
    # when
    body = client.get(tiny.base + "next/").json()
    # then: the test is the one video there is
    assert (body["item"]["id"], body["length"]) == (str(tiny.qualification[0].public_id), 1)


def test_an_exact_answer_to_a_video_the_experts_agreed_on_is_within():
    # given: qualification videos whose experts all gave 50 (sigma 0)
    tiny = tiny_study(qualification_size=2)
    ExpertScore.objects.filter(stimulus__in=tiny.qualification).update(mean=50.0, sigma=0.0)
    client, user = rater_client()
    consent_and_tutorial(client, tiny)
    # when: the rater answers exactly that
    for _ in range(2):
        item = client.get(tiny.base + "next/").json()["item"]["id"]
        assert client.post(tiny.base + "answers/", answer(item, 50.0), format="json").status_code
    # then: every answer is within tolerance, in the detail as in the share
    participation = Participation.objects.get(rater__user=user)
    assert participation.qualification_state == Participation.Qualification.PASSED
    assert participation.qualification_share == 1.0
    assert [row["within"] for row in participation.qualification_detail] == [True] * 6
