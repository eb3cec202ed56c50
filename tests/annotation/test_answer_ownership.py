"""An answer's values are checked only once its item is known to be the rater's: an item
that is not theirs (in their study, but in nobody's session of theirs, or not in their
test) is refused alike whatever the values, so the refusal tells nothing of what the item
holds (how many videos a ranking shows, a segment's candidates, the questions a video is
asked). The rater's own item with bad values is still refused saying what is wrong."""

from __future__ import annotations

import logging

import pytest

from annotation.models import Item
from annotation.selectors import item_payload
from tests.annotation.design_fixtures import Answerer, tiny_of
from tests.annotation.rater_fixtures import consent_and_tutorial, rater_client
from tests.annotation.test_designs_hostile_input import (
    DESIGNS,
    NOUNS,
    assert_refused,
    rating,
    stored,
)

pytestmark = pytest.mark.django_db

EVERY_DESIGN = ("slider", *DESIGNS)
NOUNS = {**NOUNS, "slider": "video"}


def malformed(payload: dict) -> dict:
    """The payload with values its item refuses, in a way that tells of the item where
    the design checks values against it: a ranking leaving two videos out, verdicts for
    none of a segment's candidates, none of a video's questions answered."""
    if "ranking" in payload:
        return {**payload, "ranking": payload["ranking"][:1], "played": payload["played"][:1]}
    if "verdicts" in payload:
        return {**payload, "verdicts": {}}
    if "labels" in payload:
        return {**payload, "labels": [11, 12]}  # two poses: the group takes one
    if "answers" in payload:
        return {**payload, "answers": {}}
    if "choice" in payload:
        return {**payload, "choice": "both"}
    return {**payload, "scores": {"subject": 50.0}}


# What the rater's own item is refused for, with the malformed values above.
OWN_REFUSAL = {
    "slider": "missing score(s) for: completeness, interaction",
    "preference": "'choice' must be one of left, right, equal",
    "ranking": "'ranking' leaves 2 video(s) out: place every one",
    "questionnaire": "question 'overall' is not answered",
    "propose_verify": "at most 1 of 'Pose'",
}


@pytest.fixture
def api_log(caplog):
    caplog.set_level(logging.INFO, logger="mosaic.api")
    return caplog


def not_in_session(design: str, study) -> Item:
    """An item of the rater's study that no session holds: a qualification item; for
    propose-then-verify a verify segment, whose values would name its candidates."""
    items = Item.objects.filter(study=study, role=Item.Role.QUALIFICATION).order_by("pk")
    if design == "propose_verify":
        items = items.filter(dimension__key="verify")
    return items.first()


@pytest.mark.parametrize("design", EVERY_DESIGN)
def test_an_item_outside_the_session_is_refused_alike_whatever_its_values(design, api_log):
    # given: a rater at the first item of their session, and an item of the study that is
    # not in it
    rater = rating(design)
    foreign = item_payload(not_in_session(design, rater.tiny.study), seed=1)
    fitting = rater.answerer.answer(foreign)
    before = stored()
    # when: they answer it with values that fit it, and with values it would refuse
    fits = rater.post(fitting)
    refused = rater.post(malformed(fitting))
    # then: one answer, naming nothing of the item
    detail = f"this {NOUNS[design]} is not part of your session"
    assert_refused(fits, 404, detail, before, api_log)
    assert_refused(refused, 404, detail, before, api_log)
    assert (refused.status_code, refused.content) == (fits.status_code, fits.content)
    assert refused.json() == {"error": "not_found", "detail": detail}


@pytest.mark.parametrize("design", EVERY_DESIGN)
def test_the_raters_own_item_with_bad_values_is_refused_saying_why(design, api_log):
    rater = rating(design)
    before = stored()
    response = rater.post(malformed(rater.answer()))
    assert_refused(response, 400, OWN_REFUSAL[design], before, api_log)


@pytest.mark.parametrize("design", EVERY_DESIGN)
def test_an_item_outside_the_qualification_test_is_refused_alike_whatever_its_values(
    design, api_log
):
    # given: a rater at the first item of their qualification test, and a session's item
    tiny = tiny_of(design, rest_every=0)
    client, _ = rater_client()
    consent_and_tutorial(client, tiny)
    own = client.get(tiny.base + "next/").json()["item"]
    session_item = Item.objects.filter(study=tiny.study, role=Item.Role.STIMULUS).first()
    answerer = Answerer(design)
    fitting = answerer.answer(item_payload(session_item, seed=1))
    before = stored()
    # when
    fits = client.post(tiny.base + "answers/", fitting, format="json")
    refused = client.post(tiny.base + "answers/", malformed(fitting), format="json")
    bad_own = client.post(tiny.base + "answers/", malformed(answerer.answer(own)), format="json")
    # then: the session's item is refused alike; the rater's own test item says why
    detail = f"this {NOUNS[design]} is not part of your qualification test"
    assert_refused(fits, 404, detail, before, api_log)
    assert (refused.status_code, refused.content) == (fits.status_code, fits.content)
    assert bad_own.status_code == 400, bad_own.json()
    assert bad_own.json()["error"] == "invalid"


@pytest.mark.parametrize("design", ("ranking", "propose_verify"))
def test_a_reused_answer_id_is_refused_alike_for_an_item_not_the_raters(design, api_log):
    # given: the rater's first answer stored
    rater = rating(design)
    first = rater.answer()
    assert rater.post(first).status_code == 201
    foreign = item_payload(not_in_session(design, rater.tiny.study), seed=1)
    fitting = {**rater.answerer.answer(foreign), "client_uuid": first["client_uuid"]}
    before = stored()
    # when: its id comes again, for an item not theirs, with values that fit it or not
    fits = rater.post(fitting)
    refused = rater.post(malformed(fitting))
    # then
    detail = f"this answer id was already used for another {NOUNS[design]}"
    assert_refused(fits, 409, detail, before, api_log)
    assert (refused.status_code, refused.content) == (fits.status_code, fits.content)
