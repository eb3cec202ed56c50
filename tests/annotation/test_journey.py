"""The journey is design-blind (DESIGNS.md): enter, consent, tutorial, qualify, answer a
session with its golden items, gate, finish, for every design, through the rater API."""

import pytest

from annotation.designs import DESIGNS
from annotation.models import Answer, Assignment, Participation, Payment
from tests.annotation.design_fixtures import Answerer, tiny_of
from tests.annotation.rater_fixtures import consent_and_tutorial, rater_client

pytestmark = pytest.mark.django_db

# Values other than an answer's own, per design.
OTHER_VALUES = {
    "slider": lambda answer: {"scores": {k: v + 1 for k, v in answer["scores"].items()}},
    "preference": lambda answer: {"choice": "right" if answer["choice"] != "right" else "left"},
    "ranking": lambda answer: {"ranking": answer["ranking"][::-1]},
    "questionnaire": lambda answer: {"answers": {**answer["answers"], "overall": 5}},
    "propose_verify": lambda answer: (
        {"labels": [11]}
        if "labels" in answer
        else {"verdicts": {k: not v for k, v in answer["verdicts"].items()}}
    ),
}


def take_test_and_session(client, tiny, answerer, *, golden_right: bool) -> list[dict]:
    """Qualify (rightly), then answer every item of the first session; the golden ones
    rightly or not. Returns the session's items as the rater saw them."""
    consent_and_tutorial(client, tiny)
    while (body := client.get(tiny.base + "next/").json())["step"] == "qualification":
        sent = client.post(tiny.base + "answers/", answerer.answer(body["item"]), format="json")
        assert sent.status_code == 201, sent.json()
    seen = []
    while (body := client.get(tiny.base + "next/").json())["step"] == "rating":
        if body["item"] is None:
            break
        item = body["item"]
        seen.append(item)
        payload = answerer.answer(item, right=golden_right)
        sent = client.post(tiny.base + "answers/", payload, format="json")
        assert sent.status_code == 201, sent.json()
        if sent.json()["position"] >= sent.json()["length"]:
            break
    return seen


@pytest.mark.parametrize("design", sorted(DESIGNS))
@pytest.mark.parametrize("golden_right", [True, False], ids=["agrees", "disagrees"])
def test_the_journey_serves_every_design(design, golden_right):
    # given
    tiny = tiny_of(design, rest_every=0)
    client, user = rater_client()
    answerer = Answerer(design)
    # when
    seen = take_test_and_session(client, tiny, answerer, golden_right=golden_right)
    # then: passed the test, answered every item once, the gate decided, paid
    participation = Participation.objects.get(rater__user=user)
    assert participation.qualification_state == "passed"
    assignment = Assignment.objects.get(rater__user=user)
    assert (assignment.state, assignment.position) == ("finished", len(assignment.order))
    assert len(seen) == len(assignment.order) == len({item["id"] for item in seen})
    answers = Answer.objects.filter(assignment=assignment)
    assert answers.count() == len(seen)
    assert all(answer.layout and answer.values_digest for answer in answers)
    assert assignment.eligible_for_next is golden_right
    assert Payment.objects.filter(assignment=assignment).exists()
    state = client.get(tiny.base + "state/").json()
    assert state["step"] == ("done" if golden_right else "not_eligible")
    assert state["design"] == design


@pytest.mark.parametrize("design", sorted(DESIGNS))
def test_a_repeat_is_stored_once_and_other_values_are_a_conflict(design):
    # given: a rater at the first item of their session
    tiny = tiny_of(design, rest_every=0)
    client, _ = rater_client()
    answerer = Answerer(design)
    consent_and_tutorial(client, tiny)
    while (body := client.get(tiny.base + "next/").json())["step"] == "qualification":
        client.post(tiny.base + "answers/", answerer.answer(body["item"]), format="json")
    item = client.get(tiny.base + "next/").json()["item"]
    first = answerer.answer(item)
    assert client.post(tiny.base + "answers/", first, format="json").status_code == 201
    # when: the same answer again, then its id with other values
    repeat = client.post(tiny.base + "answers/", first, format="json")
    other = {**first, **OTHER_VALUES[design](first)}
    changed = client.post(tiny.base + "answers/", other, format="json")
    # then
    assert (repeat.status_code, repeat.json()["status"]) == (200, "repeat")
    assert changed.status_code == 409
    noun = DESIGNS[design].values_noun
    assert changed.json()["detail"] == f"this answer id was already used with different {noun}"
    assert Answer.objects.filter(client_uuid=first["client_uuid"]).count() == 1
