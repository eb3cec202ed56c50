"""A rater withdraws from a study (annotation.services.withdrawal): they stop at once,
whatever step they are at; what they answered is kept but no longer served to or taken
from them; the decision is final, and a repeat answers like the first."""

import pytest
from django.utils import timezone

from annotation.designs import DESIGNS
from annotation.errors import Conflict
from annotation.models import Assignment, Participation, Study
from annotation.services.admin_actions import assignment_reopen, participation_exclude
from tests.annotation.design_fixtures import Answerer, tiny_of, tiny_questionnaire_study
from tests.annotation.rater_fixtures import (
    answer,
    consent_and_tutorial,
    onboard,
    rater_client,
    session_ratings,
    tiny_study,
)
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

WITHDRAW = {"withdraw": True}


def rate(client, tiny, n: int) -> None:
    for _ in range(n):
        item = client.get(tiny.base + "next/").json()["item"]
        response = client.post(tiny.base + "answers/", answer(item["id"]), format="json")
        assert response.status_code == 201, response.json()


def test_withdrawing_mid_session_stops_it_and_keeps_what_was_answered():
    # given: a rater two videos into their session
    tiny = tiny_study()
    client, user = rater_client()
    onboard(client, tiny)
    rate(client, tiny, 2)
    kept = session_ratings().count()
    pending = client.get(tiny.base + "next/").json()["item"]["id"]
    # when
    response = client.post(tiny.base + "withdraw/", WITHDRAW, format="json")
    # then: the page is told it is over, with no completion code
    assert response.status_code == 200
    body = response.json()
    assert (body["step"], body["completion"]) == ("withdrawn", None)
    participation = Participation.objects.get(rater__user=user)
    assert participation.withdrawn_at is not None and participation.is_excluded
    assert participation.excluded_reason == "the rater withdrew from the study"
    assert participation.excluded_by is None
    assignment = Assignment.objects.get(rater__user=user)
    assert (assignment.state, assignment.admin_note, assignment.position) == (
        "excluded",
        "the rater withdrew from the study",
        2,
    )
    assert session_ratings().count() == kept == 2 * 3  # nothing deleted
    # and nothing more is served or taken, on the fast path too
    following = client.get(tiny.base + "next/").json()
    assert (following["step"], following["item"]) == ("withdrawn", None)
    refused = client.post(tiny.base + "answers/", answer(pending), format="json")
    assert refused.status_code == 403
    assert refused.json()["step"] == "withdrawn"
    assert session_ratings().count() == kept
    assert client.get(tiny.base + "state/").json()["step"] == "withdrawn"


@pytest.mark.parametrize("design", sorted(DESIGNS))
def test_every_design_stops_a_rater_who_withdraws_mid_session(design):
    # given: a rater qualified, one answer into their first session
    tiny = tiny_of(design, rest_every=0)
    answerer = Answerer(design)
    client, user = rater_client()
    consent_and_tutorial(client, tiny)
    while (body := client.get(tiny.base + "next/").json())["step"] == "qualification":
        client.post(tiny.base + "answers/", answerer.answer(body["item"]), format="json")
    assert body["step"] == "rating", body
    sent = client.post(tiny.base + "answers/", answerer.answer(body["item"]), format="json")
    assert sent.status_code == 201, sent.json()
    following = client.get(tiny.base + "next/").json()["item"]
    # when
    assert client.post(tiny.base + "withdraw/", WITHDRAW, format="json").status_code == 200
    # then: the session stopped with its answer kept, and nothing more is served or taken
    assignment = Assignment.objects.get(rater__user=user)
    assert (assignment.state, assignment.answers.count()) == ("excluded", 1)
    assert client.get(tiny.base + "next/").json()["step"] == "withdrawn"
    late = client.post(tiny.base + "answers/", answerer.answer(following), format="json")
    assert (late.status_code, late.json()["step"]) == (403, "withdrawn")
    assert assignment.answers.count() == 1


def test_a_repeated_withdrawal_answers_like_the_first():
    tiny = tiny_study()
    client, user = rater_client()
    onboard(client, tiny)
    first = client.post(tiny.base + "withdraw/", WITHDRAW, format="json")
    moment = Participation.objects.get(rater__user=user).withdrawn_at
    # when
    again = client.post(tiny.base + "withdraw/", WITHDRAW, format="json")
    # then
    assert again.status_code == first.status_code == 200
    assert again.json() == first.json()
    assert Participation.objects.get(rater__user=user).withdrawn_at == moment


@pytest.mark.parametrize("body", [{}, {"withdraw": "yes"}, {"withdraw": 1}, ["withdraw"]])
def test_withdrawing_asks_for_it_in_so_many_words(body):
    tiny = tiny_study()
    client, user = rater_client()
    onboard(client, tiny)
    # when
    response = client.post(tiny.base + "withdraw/", body, format="json")
    # then
    assert response.status_code == 400
    assert response.json()["detail"] == 'withdrawing needs {"withdraw": true}'
    participation = Participation.objects.get(rater__user=user)
    assert participation.withdrawn_at is None and not participation.is_excluded


def test_declining_the_consent_form_is_withdrawing_before_anything_was_answered():
    # given: a rater at the consent form
    tiny = tiny_study()
    client, user = rater_client()
    assert client.get(tiny.base + "state/").json()["step"] == "consent"
    # when
    body = client.post(tiny.base + "withdraw/", WITHDRAW, format="json").json()
    # then
    assert body["step"] == "withdrawn"
    participation = Participation.objects.get(rater__user=user)
    assert participation.consent_at is None and participation.withdrawn_at is not None
    consent = {"accept": True, "viewport_width": 1280, "viewport_height": 800}
    assert client.post(tiny.base + "consent/", consent, format="json").json()["step"] == (
        "withdrawn"
    )
    # and a consent and a tutorial sent after it (a second tab) record nothing: the
    # person who declined is not on record as having consented, nor starts the test
    assert client.post(tiny.base + "tutorial/done/").json()["step"] == "withdrawn"
    participation.refresh_from_db()
    assert (participation.consent_at, participation.viewing_check) == (None, {})
    assert participation.tutorial_done_at is None
    assert participation.qualification_state == Participation.Qualification.NOT_STARTED


def test_a_session_asked_for_as_the_rater_withdraws_is_not_started():
    # given: a rater past the test, whose request for the next item read their
    # participation before their withdrawal (in another request) committed
    from annotation.services.session_start import assignment_start_next
    from annotation.services.withdrawal import participation_withdraw

    tiny = tiny_study()
    client, user = rater_client()
    onboard(client, tiny)
    read_before = Participation.objects.get(rater__user=user)
    participation_withdraw(
        participation=Participation.objects.get(pk=read_before.pk), data=WITHDRAW
    )
    # when: that request goes on to start the rater's next session
    started = assignment_start_next(participation=read_before)
    # then: none is (before: an active session of a withdrawn rater, its videos served)
    assert started is None and not Assignment.objects.filter(rater__user=user).exists()


def test_a_rater_may_withdraw_while_the_study_is_paused_but_not_once_it_is_closed():
    tiny = tiny_study()
    client, user = rater_client()
    onboard(client, tiny)
    Study.objects.filter(pk=tiny.study.pk).update(state=Study.State.PAUSED)
    assert client.get(tiny.base + "next/").status_code == 423
    # when: paused
    assert client.post(tiny.base + "withdraw/", WITHDRAW, format="json").status_code == 200
    # then
    assert Participation.objects.get(rater__user=user).withdrawn_at is not None
    # and a closed study refuses it, as every rater request
    other, other_user = rater_client()
    Study.objects.filter(pk=tiny.study.pk).update(state=Study.State.RUNNING)
    onboard(other, tiny)
    Study.objects.filter(pk=tiny.study.pk).update(state=Study.State.CLOSED)
    assert other.post(tiny.base + "withdraw/", WITHDRAW, format="json").status_code == 403
    assert Participation.objects.get(rater__user=other_user).withdrawn_at is None


def test_the_place_of_a_withdrawn_raters_batch_goes_to_the_next_rater():
    # given: a questionnaire of one batch for one rater, taken by a rater one answer in
    tiny = tiny_questionnaire_study()
    answerer = Answerer("questionnaire")
    first, first_user = rater_client()
    consent_and_tutorial(first, tiny)
    while (body := first.get(tiny.base + "next/").json())["step"] == "qualification":
        first.post(tiny.base + "answers/", answerer.answer(body["item"]), format="json")
    sent = first.post(tiny.base + "answers/", answerer.answer(body["item"]), format="json")
    assert sent.status_code == 201
    second, _ = rater_client()
    assert second.get(tiny.base + "state/").json()["step"] == "full"
    # when
    first.post(tiny.base + "withdraw/", WITHDRAW, format="json")
    # then: the batch is free again, and the first rater's answer is kept, unused
    assert second.get(tiny.base + "state/").json()["step"] == "consent"
    batch = Assignment.objects.get(rater__user=first_user)
    assert (batch.state, batch.position, batch.answers.count()) == ("excluded", 1, 1)


def test_an_admin_cannot_reopen_the_session_of_a_rater_who_withdrew():
    tiny = tiny_study()
    client, user = rater_client()
    onboard(client, tiny)
    rate(client, tiny, 1)
    client.post(tiny.base + "withdraw/", WITHDRAW, format="json")
    assignment = Assignment.objects.get(rater__user=user)
    admin = UserFactory(is_staff=True)
    # when / then
    with pytest.raises(Conflict, match="withdrew from the study"):
        assignment_reopen(assignment=assignment, reason="by mistake?", by=admin)
    assert Assignment.objects.get(pk=assignment.pk).state == "excluded"
    assert Participation.objects.get(rater__user=user).withdrawn_at is not None


def test_an_admins_earlier_exclusion_keeps_its_record_when_the_rater_then_withdraws():
    tiny = tiny_study()
    client, user = rater_client()
    onboard(client, tiny)
    admin = UserFactory(is_staff=True)
    participation = Participation.objects.get(rater__user=user)
    participation_exclude(participation=participation, reason="copied answers", by=admin)
    # when
    client.post(tiny.base + "withdraw/", WITHDRAW, format="json")
    # then
    participation.refresh_from_db()
    assert (participation.excluded_reason, participation.excluded_by) == ("copied answers", admin)
    assert participation.excluded_at < participation.withdrawn_at <= timezone.now()


def test_the_home_page_no_longer_offers_a_study_the_rater_withdrew_from(client):
    tiny = tiny_study()
    api, user = rater_client()
    client.force_login(user)
    assert tiny.study.name in client.get("/").content.decode()
    # when
    api.post(tiny.base + "withdraw/", WITHDRAW, format="json")
    # then
    assert tiny.study.name not in client.get("/").content.decode()
