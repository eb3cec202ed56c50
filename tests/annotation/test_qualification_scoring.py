"""Scoring a qualification attempt: each answer is flagged within tolerance or not, and
the share that passes or fails the rater is the share of those flags."""

import pytest

from annotation.designs import slider
from annotation.models import Answer, ExpertScore, Participation
from quality.stats.agreement import within_tolerance
from tests.annotation.rater_fixtures import answer, consent_and_tutorial, rater_client, tiny_study

pytestmark = pytest.mark.django_db

# Experts: mean 50, sigma 10 for every test video and dimension (tiny_study), so 1.5 sigma
# is 15 points: 65 lies on the boundary (within), 66 past it.
SCORES = {"subject": 65, "completeness": 66, "interaction": 50}


def take_the_test(client, tiny) -> Participation:
    consent_and_tutorial(client, tiny)
    for _ in range(2):
        item = client.get(tiny.base + "next/").json()["item"]["id"]
        response = client.post(tiny.base + "answers/", answer(item, SCORES), format="json")
        assert response.status_code == 201
    return Participation.objects.get()


def test_the_share_is_the_share_of_answers_flagged_within_tolerance():
    # given
    tiny = tiny_study()
    client, _ = rater_client()
    # when
    participation = take_the_test(client, tiny)
    # then: 4 of 6 within, under the 0.75 to pass
    flags = [(row["dimension"], row["within"]) for row in participation.qualification_detail]
    assert flags == [
        ("subject", True),
        ("completeness", False),
        ("interaction", True),
        ("subject", True),
        ("completeness", False),
        ("interaction", True),
    ]
    assert participation.qualification_share == 4 / 6
    assert participation.qualification_state == Participation.Qualification.FAILED


def test_the_share_follows_the_flags_whatever_the_rule(monkeypatch):
    """The tolerance rule is applied once: changed there, flags and share change together."""
    # given: a rule of a third of the study's tolerance (0.5 sigma: 5 points)
    monkeypatch.setattr(
        slider,
        "within_tolerance",
        lambda *, tolerance_sigma, **data: within_tolerance(
            tolerance_sigma=tolerance_sigma / 3, **data
        ),
    )
    tiny = tiny_study()
    client, _ = rater_client()
    # when
    participation = take_the_test(client, tiny)
    # then: only the answers of 50 are within, 2 of 6
    within = [row["within"] for row in participation.qualification_detail]
    assert within == [False, False, True, False, False, True]
    assert participation.qualification_share == 2 / 6
    assert participation.qualification_state == Participation.Qualification.FAILED


def test_an_answer_on_a_video_without_expert_scores_is_left_out_and_logged(caplog):
    # given: an admin added one test video without the experts' scores
    tiny = tiny_study()
    unscored = tiny.qualification[0]
    ExpertScore.objects.filter(stimulus=unscored).delete()
    client, _ = rater_client()
    # when: the rater answers both (no error on the last answer)
    participation = take_the_test(client, tiny)
    # then: the share is that of the scored video's answers (2 of 3 within), the
    # unscored one is named to the team, and every answer is stored
    assert {row["stimulus"] for row in participation.qualification_detail} == {
        tiny.qualification[1].pk
    }
    assert participation.qualification_share == 2 / 3
    assert f"videos [{unscored.pk}] have no expert score" in caplog.text
    assert Answer.objects.filter(assignment__isnull=True).count() == 2


def test_a_test_with_no_scored_answer_passes_with_no_share():
    # given: no test video has the experts' scores
    tiny = tiny_study()
    ExpertScore.objects.filter(stimulus__in=tiny.qualification).delete()
    client, _ = rater_client()
    # when
    participation = take_the_test(client, tiny)
    # then: nothing to judge by, as a session without golden answers
    assert participation.qualification_share is None
    assert participation.qualification_state == Participation.Qualification.PASSED
