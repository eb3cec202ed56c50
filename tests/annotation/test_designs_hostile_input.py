"""Hostile input to the answer endpoint of the designs other than the slider (preference,
ranking, questionnaire with its audits, propose-then-verify): every bad answer is a 4xx
that names the problem, is logged, and changes nothing stored; a valid replay is
counted once. What test_rater_bad_input.py, test_journey.py and the test_*_design.py
files already check is not repeated here."""

from __future__ import annotations

import json
import logging
import uuid
from dataclasses import dataclass

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from annotation.designs.questionnaire_answers import CHECKS
from annotation.designs.questionnaire_study import questions_forget
from annotation.errors import ValidationFailed
from annotation.models import (
    Answer,
    Assignment,
    BatchAudit,
    Candidate,
    Item,
    LabelAnswer,
    LabelTag,
    Participation,
    Payment,
    PreferenceJudgment,
    Proposal,
    ProposalFlags,
    RankingPlacement,
    Stimulus,
    Verdict,
)
from annotation.selectors import item_payload
from annotation.services.audits import audit_decide, audit_open
from tests.annotation.design_fixtures import Answerer, tiny_of
from tests.annotation.rater_fixtures import TinyStudy, consent_and_tutorial, rater_client
from tests.annotation.test_journey import take_test_and_session

pytestmark = pytest.mark.django_db

DESIGNS = ("preference", "ranking", "questionnaire", "propose_verify")
NOUNS = {
    "preference": "pair",
    "ranking": "set of videos",
    "questionnaire": "video",
    "propose_verify": "segment",
}
STORED = (
    Answer,
    PreferenceJudgment,
    RankingPlacement,
    LabelAnswer,
    LabelTag,
    Proposal,
    ProposalFlags,
    Verdict,
)


def stored() -> dict:
    """Everything an answer writes: its rows, the sessions' positions, the tests' state."""
    return {
        **{model.__name__: model.objects.count() for model in STORED},
        "assignments": list(
            Assignment.objects.order_by("pk").values_list("pk", "state", "position")
        ),
        "participations": list(
            Participation.objects.order_by("pk").values_list(
                "pk", "qualification_state", "qualification_attempts"
            )
        ),
    }


@pytest.fixture
def api_log(caplog):
    caplog.set_level(logging.INFO, logger="mosaic.api")
    return caplog


def assert_refused(response, status: int, detail: str, before: dict, log) -> None:
    """A refusal in the API's shape, naming the problem, logged, nothing stored."""
    body = response.json()
    assert response.status_code == status, body
    assert detail in body["detail"], body
    assert stored() == before
    logged = [r.getMessage() for r in log.records if r.name == "mosaic.api"]
    assert any(detail in message for message in logged), logged


@dataclass
class Rating:
    """A qualified rater at the first item of their first session."""

    tiny: TinyStudy
    client: APIClient
    user: User
    answerer: Answerer
    item: dict

    def post(self, payload: object, **kwargs):
        if isinstance(payload, str):
            return self.client.post(
                self.tiny.base + "answers/", payload, content_type="application/json"
            )
        return self.client.post(self.tiny.base + "answers/", payload, format="json", **kwargs)

    def answer(self, **values) -> dict:
        return self.answerer.answer(self.item, **values)

    @property
    def assignment(self) -> Assignment:
        return Assignment.objects.get(rater__user=self.user)

    def later_item(self) -> dict:
        """The payload of the session's item after the current one."""
        assignment = self.assignment
        item = Item.objects.get(pk=assignment.order[assignment.position + 1])
        return item_payload(item, assignment.order_seed)


def qualify(tiny: TinyStudy, client: APIClient, answerer: Answerer) -> None:
    consent_and_tutorial(client, tiny)
    while (body := client.get(tiny.base + "next/").json())["step"] == "qualification":
        sent = client.post(tiny.base + "answers/", answerer.answer(body["item"]), format="json")
        assert sent.status_code == 201, sent.json()


def rating(design: str, *, tiny: TinyStudy | None = None, **settings) -> Rating:
    tiny = tiny or tiny_of(design, **{"rest_every": 0, **settings})
    client, user = rater_client()
    answerer = Answerer(design)
    qualify(tiny, client, answerer)
    body = client.get(tiny.base + "next/").json()
    assert body["step"] == "rating" and body["item"], body
    return Rating(tiny, client, user, answerer, body["item"])


# --- every design: the envelope, the session, replays -----------------------------------


@pytest.mark.parametrize("design", DESIGNS)
@pytest.mark.parametrize(
    ("change", "detail"),
    [
        (lambda a: {k: v for k, v in a.items() if k != "client_uuid"}, "'client_uuid' must be"),
        (lambda a: {**a, "client_uuid": 42}, "'client_uuid' must be a UUID"),
        (lambda a: {k: v for k, v in a.items() if k != "item"}, "'item' must be a UUID"),
        (lambda a: {**a, "item": {"id": a["item"]}}, "'item' must be a UUID"),
        (lambda a: [a], "the answer must be a JSON object"),
        (lambda a: {**a, "plays": "1"}, "'plays' must be a number between 0 and 10000"),
    ],
    ids=["no-uuid", "int-uuid", "no-item", "object-item", "list-body", "string-plays"],
)
def test_a_malformed_envelope_is_refused_for_every_design(design, change, detail, api_log):
    rater = rating(design)
    before = stored()
    response = rater.post(change(rater.answer()))
    assert_refused(response, 400, detail, before, api_log)


@pytest.mark.parametrize("design", DESIGNS)
@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ('{"client_uuid": ', "JSON parse error"),
        ("[NaN]", "JSON parse error"),
        ('{"choice": "left", "x": Infinity}', "JSON parse error"),
        ("null", "the answer must be a JSON object"),
        ('"left"', "the answer must be a JSON object"),
    ],
)
def test_a_body_that_is_not_a_strict_json_object_is_refused_for_every_design(
    design, body, detail, api_log
):
    rater = rating(design)
    before = stored()
    assert_refused(rater.post(body), 400, detail, before, api_log)


@pytest.mark.parametrize("design", DESIGNS)
def test_the_same_answer_again_under_a_new_id_is_not_counted_twice(design, api_log):
    # given: the current item answered
    rater = rating(design)
    first = rater.answer()
    assert rater.post(first).status_code == 201
    before = stored()
    # when: the page sends it again with a fresh id (a double click, a replayed request)
    response = rater.post({**first, "client_uuid": str(uuid.uuid4())})
    # then
    assert_refused(response, 409, f"this {NOUNS[design]} was already answered", before, api_log)
    assert Answer.objects.filter(item__public_id=rater.item["id"]).count() == 1


@pytest.mark.parametrize("design", DESIGNS)
def test_an_item_ahead_of_the_current_one_is_refused_and_named(design, api_log):
    rater = rating(design)
    before = stored()
    response = rater.post(rater.answerer.answer(rater.later_item()))
    assert_refused(response, 409, "answers are taken in order", before, api_log)
    assert response.json()["expected"] == rater.item["id"]


@pytest.mark.parametrize("design", DESIGNS)
def test_an_item_outside_the_raters_session_is_refused(design, api_log):
    # given: an item of the qualification test, and one of another study of the design
    rater = rating(design)
    test_item = Item.objects.filter(study=rater.tiny.study, role="qualification").first()
    other = tiny_of(design, rest_every=0)
    foreign = Item.objects.filter(study=other.study, role="stimulus").first()
    before = stored()
    for item in (test_item, foreign):
        # values that fit the item (any others are refused alike: test_answer_ownership.py)
        payload = rater.answerer.answer(item_payload(item, seed=1))
        response = rater.post(payload)
        assert_refused(
            response, 404, f"this {NOUNS[design]} is not part of your session", before, api_log
        )


@pytest.mark.parametrize("design", DESIGNS)
def test_an_answer_during_a_break_is_held_back_and_nothing_moves(design, api_log):
    # given: a break after every answer
    rater = rating(design, rest_every=1, rest_seconds=60)
    assert rater.post(rater.answer()).status_code == 201
    before = stored()
    # when: the page skips the break
    response = rater.post(rater.answerer.answer(item_payload_now(rater)))
    # then
    assert_refused(response, 423, "rest break", before, api_log)
    assert response.json()["error"] == "on_break"


def item_payload_now(rater: Rating) -> dict:
    assignment = rater.assignment
    item = Item.objects.get(pk=assignment.order[assignment.position])
    return item_payload(item, assignment.order_seed)


@pytest.mark.parametrize("design", DESIGNS)
def test_another_raters_answer_id_is_a_conflict_and_takes_nothing_from_them(design, api_log):
    # given: two raters of one study (room for both in its session)
    room = {"questionnaire": {"raters_per_video": 2}, "propose_verify": {"proposers": 2}}
    alice = rating(design, **room.get(design, {}))
    bob = rating(design, tiny=alice.tiny)
    sent = alice.answer()
    assert alice.post(sent).status_code == 201
    before = stored()
    # when: bob sends alice's answer (same id, same item, same values), then his own
    # answer under her id
    stolen = bob.post(sent)
    assert_refused(stolen, 409, "this answer id is already in use", before, api_log)
    own = bob.post({**bob.answer(), "client_uuid": sent["client_uuid"]})
    assert_refused(own, 409, "this answer id is already in use", before, api_log)
    # then: alice's answer is hers, once
    assert Answer.objects.get(client_uuid=sent["client_uuid"]).participation.rater.user == (
        alice.user
    )


@pytest.mark.parametrize("design", DESIGNS)
def test_after_the_session_a_late_repeat_is_a_repeat_and_a_new_answer_is_refused(design, api_log):
    # given: a finished session
    tiny = tiny_of(design, rest_every=0)
    client, user = rater_client()
    answerer = Answerer(design)
    seen = take_test_and_session(client, tiny, answerer, golden_right=True)
    assignment = Assignment.objects.get(rater__user=user)
    assert assignment.state == "finished"
    last = Answer.objects.filter(assignment=assignment).order_by("-pk").first()
    before = stored()
    # when: a new answer (new id) for an item of the session
    fresh = answerer.answer(seen[-1])
    response = client.post(tiny.base + "answers/", fresh, format="json")
    # then
    assert_refused(response, 409, "this session has ended", before, api_log)
    assert response.json()["error"] == "finished"
    # and the late repeat of the last answer (the page lost the response) is a repeat
    repeat = {**fresh, "client_uuid": str(last.client_uuid)}
    again = client.post(tiny.base + "answers/", repeat, format="json")
    assert (again.status_code, again.json()["status"]) == (200, "repeat"), again.json()
    assert stored() == before


# --- preference ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "choice",
    ["tie", "Left", "left ", "equally good", {"side": "left"}, True, 0.0],
    ids=["tie", "Left", "left-space", "words", "object", "true", "zero"],
)
def test_a_preference_choice_outside_the_three_is_refused(choice, api_log):
    rater = rating("preference")
    before = stored()
    response = rater.post(rater.answer(choice=choice))
    assert_refused(response, 400, "'choice' must be one of left, right, equal", before, api_log)


def test_a_preference_answer_without_a_choice_is_refused(api_log):
    rater = rating("preference")
    payload = rater.answer()
    del payload["choice"]
    before = stored()
    assert_refused(rater.post(payload), 400, "'choice' must be one of", before, api_log)


def test_a_bad_choice_in_the_qualification_test_is_refused_before_anything(api_log):
    # given: a rater at their first test pair
    tiny = tiny_of("preference", rest_every=0)
    client, _ = rater_client()
    consent_and_tutorial(client, tiny)
    item = client.get(tiny.base + "next/").json()["item"]
    before = stored()
    # when
    payload = {**Answerer("preference").answer(item), "choice": "both"}
    response = client.post(tiny.base + "answers/", payload, format="json")
    # then
    assert_refused(response, 400, "'choice' must be one of", before, api_log)


# --- ranking ------------------------------------------------------------------------------


def shown(rater: Rating) -> list[str]:
    return [media["id"] for media in rater.item["media"]]


def foreign_video(rater: Rating) -> str:
    """A video of the study that the current item does not show."""
    ids = set(shown(rater))
    other = Stimulus.objects.filter(study=rater.tiny.study).exclude(public_id__in=ids).first()
    return str(other.public_id)


@pytest.mark.parametrize(
    ("make", "detail"),
    [
        (lambda s, f: {"ranking": [*s, f]}, "'ranking' names a video that this item does not show"),
        (lambda s, f: {"ranking": [1, 2, 3]}, "'ranking' must list the places"),
        (lambda s, f: {"ranking": [{"id": v} for v in s]}, "'ranking' must list the places"),
        (lambda s, f: {"ranking": [[[s[0]]], s[1], s[2]]}, "'ranking' must list the places"),
        (lambda s, f: {"ranking": [None, *s]}, "'ranking' must list the places"),
        (lambda s, f: {"ranking": {"1": s[0], "2": s[1], "3": s[2]}}, "'ranking' must list"),
        (lambda s, f: {"ranking": None}, "'ranking' must list the places"),
        (lambda s, f: {"ranking": []}, "'ranking' must list the places"),
        (lambda s, f: {"ranking": ",".join(s)}, "'ranking' must list the places"),
        (lambda s, f: {"played": [*s, 7]}, "'played' must list the ids"),
        (lambda s, f: {"played": {v: True for v in s}}, "'played' must list the ids"),
        (lambda s, f: {"played": [*s, f]}, "'played' names a video that this item does not show"),
    ],
    ids=[
        "extra-foreign",
        "ints",
        "objects",
        "nested-list",
        "null-place",
        "dict",
        "null",
        "empty",
        "string",
        "played-int",
        "played-dict",
        "played-foreign",
    ],
)
def test_a_ranking_that_is_no_permutation_of_the_shown_videos_is_refused(make, detail, api_log):
    rater = rating("ranking")
    before = stored()
    s = shown(rater)
    payload = {**rater.answer(), "ranking": s, "played": s, **make(s, foreign_video(rater))}
    assert_refused(rater.post(payload), 400, detail, before, api_log)


def test_a_ranking_without_its_fields_is_refused(api_log):
    rater = rating("ranking")
    payload = {k: v for k, v in rater.answer().items() if k not in ("ranking", "played")}
    before = stored()
    assert_refused(rater.post(payload), 400, "'ranking' must list the places", before, api_log)


def test_a_tie_naming_one_video_twice_is_refused_where_ties_are_allowed(api_log):
    from annotation.designs.ranking import settings_of

    tiny = tiny_of("ranking", rest_every=0)
    chosen = settings_of(tiny.study)
    chosen.ties_allowed = True
    chosen.save()
    rater = rating("ranking", tiny=tiny)
    s = shown(rater)
    before = stored()
    payload = {**rater.answer(), "ranking": [[s[0], s[0]], s[1], s[2]], "played": s}
    assert_refused(rater.post(payload), 400, "places a video more than once", before, api_log)


def test_a_huge_ranking_is_refused_at_once(api_log):
    # given: a ranking of 50,000 distinct ids, each placed once (about 2 MB of JSON)
    rater = rating("ranking")
    huge = [f"{index:08d}-0000-0000-0000-000000000000" for index in range(50_000)]
    before = stored()
    # when
    payload = {**rater.answer(), "ranking": huge, "played": shown(rater)}
    response = rater.post(payload)
    # then: refused for its length, before any work that grows with it
    assert_refused(response, 400, "'ranking' places 50000 videos", before, api_log)


def test_a_ranking_replayed_with_a_tie_written_in_another_order_is_a_repeat():
    from annotation.designs.ranking import settings_of

    tiny = tiny_of("ranking", rest_every=0)
    chosen = settings_of(tiny.study)
    chosen.ties_allowed = True
    chosen.save()
    rater = rating("ranking", tiny=tiny)
    s = shown(rater)
    first = {**rater.answer(), "ranking": [[s[0], s[1]], s[2]], "played": s}
    assert rater.post(first).status_code == 201
    before = stored()
    again = rater.post({**first, "ranking": [[s[1], s[0]], s[2]], "played": s[::-1]})
    assert (again.status_code, again.json()["status"]) == (200, "repeat")
    assert stored() == before
    assert RankingPlacement.objects.filter(answer__client_uuid=first["client_uuid"]).count() == 3


# --- questionnaire ------------------------------------------------------------------------

VALID = {"overall": 5, "object_text": 2, "light": ["soft_light"]}


def questionnaire_rating(tiny: TinyStudy | None = None) -> Rating:
    """A questionnaire rater whose every video asks all four questions (the fixture's
    last regular video asks two, and the rater's first video is drawn by seed)."""
    tiny = tiny or tiny_of("questionnaire", rest_every=0)
    Stimulus.objects.filter(study=tiny.study).update(asked_questions=[])
    return rating("questionnaire", tiny=tiny)


@pytest.mark.parametrize(
    ("answers", "detail"),
    [
        ({**VALID, "overall": "7"}, "'overall' is not a number: '7'"),
        ({**VALID, "overall": None}, "'overall' is not a number: None"),
        ({**VALID, "overall": [7]}, "'overall' is not a number: [7]"),
        ({**VALID, "overall": -1}, "'overall' is -1, outside the scale [0, 10]"),
        ({**VALID, "overall": 10**30}, "'overall' is outside the scale [0, 10]"),
        ({**VALID, "object_text": "2"}, "'object_text' must be one of its levels [1, 2, 3]"),
        ({**VALID, "object_text": 2.5}, "'object_text' must be one of its levels"),
        ({**VALID, "object_text": "INVALID"}, "'object_text' must be one of its levels"),
        ({**VALID, "object_text": None}, "'object_text' must be one of its levels"),
        ({**VALID, "object_text": True}, "'object_text' must be one of its levels"),
        ({**VALID, "object_text": {"value": 2}}, "'object_text' must be one of its levels"),
        ({**VALID, "light": "soft_light"}, "'light' needs a list of tags"),
        ({**VALID, "light": {"soft_light": True}}, "'light' needs a list of tags"),
        ({**VALID, "light": None}, "'light' needs a list of tags"),
        ({**VALID, "light": [{"value": "soft_light"}]}, "'light' has no tag {'value'"),
        ({**VALID, "light": [["soft_light"]]}, "'light' has no tag ['soft_light']"),
        ({**VALID, "light": ["Soft Light"]}, "'light' has no tag 'Soft Light'"),
        ({**VALID, "comment": "x" * 2001}, "'comment' is longer than 2000 characters"),
        ({**VALID, "comment": ["fine"]}, "'comment' needs a text"),
        ({**VALID, "comment": "dark\x00"}, "'comment' holds a NUL character"),
        ({**VALID, "mood": 3}, "this study has no question 'mood'"),
        ({"overall": 5, "object_text": 2}, "question 'light' is not answered"),
        ({}, "question 'overall' is not answered"),
    ],
    ids=[
        "score-string",
        "score-null",
        "score-list",
        "score-below",
        "score-huge",
        "level-string",
        "level-between",
        "level-upper-invalid",
        "level-null",
        "level-bool",
        "level-object",
        "tags-string",
        "tags-object",
        "tags-null",
        "tags-nested-object",
        "tags-nested-list",
        "tags-label-not-value",
        "comment-too-long",
        "comment-list",
        "comment-nul",
        "unknown-question",
        "missing-tags",
        "empty",
    ],
)
def test_a_bad_questionnaire_answer_is_refused_over_the_api(answers, detail, api_log):
    rater = questionnaire_rating()
    before = stored()
    response = rater.post({**rater.answer(), "answers": answers})
    assert_refused(response, 400, detail, before, api_log)


@pytest.mark.parametrize(
    ("raw", "detail"),
    [("NaN", "JSON parse error"), ("-Infinity", "JSON parse error"),
     ("1e400", "'overall' is not a finite number")],
)  # fmt: skip
def test_a_questionnaire_score_that_is_no_finite_number_is_refused(raw, detail, api_log):
    rater = questionnaire_rating()
    payload = {**rater.answer(), "answers": {**VALID, "overall": "@@"}}
    before = stored()
    response = rater.post(json.dumps(payload).replace('"@@"', raw))
    assert_refused(response, 400, detail, before, api_log)


@pytest.mark.parametrize("answers", [["overall", 5], "overall=5", None])
def test_questionnaire_answers_that_are_no_mapping_are_refused(answers, api_log):
    rater = questionnaire_rating()
    before = stored()
    response = rater.post({**rater.answer(), "answers": answers})
    assert_refused(response, 400, "'answers' must map each question's key", before, api_log)


def test_a_question_the_video_is_not_asked_is_refused_over_the_api(api_log):
    # given: every video asks only the score and the tags
    tiny = tiny_of("questionnaire", rest_every=0)
    Stimulus.objects.filter(study=tiny.study).update(asked_questions=["overall", "light"])
    rater = rating("questionnaire", tiny=tiny)
    assert rater.item["questions"] == ["overall", "light"]
    before = stored()
    # when
    answers = {"overall": 5, "light": [], "object_text": 2}
    response = rater.post({**rater.answer(), "answers": answers})
    # then
    assert_refused(
        response, 400, "question 'object_text' does not apply to this video", before, api_log
    )


def test_invalid_is_refused_where_the_question_does_not_offer_it(api_log):
    tiny = tiny_of("questionnaire", rest_every=0)
    question = tiny.study.dimensions.get(key="object_text").question
    question.invalid_option = False
    question.save()
    questions_forget(tiny.study.pk)
    rater = questionnaire_rating(tiny)
    before = stored()
    response = rater.post({**rater.answer(), "answers": {**VALID, "object_text": "invalid"}})
    assert_refused(
        response, 400, "'object_text' has no \"Invalid question\" option", before, api_log
    )


def test_another_rater_cannot_answer_into_a_batch_that_is_not_theirs(api_log):
    # given: one rater per batch: alice has the only one, bob (who was through the
    # tutorial before she took it) qualified after her
    tiny = tiny_of("questionnaire", rest_every=0)
    client, user = rater_client()
    consent_and_tutorial(client, tiny)
    alice = questionnaire_rating(tiny)
    qualify(alice.tiny, client, Answerer("questionnaire"))
    before = stored()
    # when: bob answers alice's current video under a fresh id
    payload = Answerer("questionnaire").answer(alice.item)
    response = client.post(alice.tiny.base + "answers/", payload, format="json")
    # then
    assert_refused(response, 403, "you have no session open in this study", before, api_log)
    assert not Assignment.objects.filter(rater__user=user).exists()


def test_a_new_answer_into_a_rejected_batch_is_refused_and_the_batch_stays_whole(api_log):
    # given: a finished batch, rejected in its audit
    tiny = tiny_of("questionnaire", rest_every=0)
    client, user = rater_client()
    answerer = Answerer("questionnaire")
    seen = take_test_and_session(client, tiny, answerer, golden_right=True)
    batch = Assignment.objects.get(rater__user=user)
    audit = audit_open(assignment=batch, by=expert())
    findings = {str(item): {"wrong": True, "note": "no"} for item in audit.sample}
    audit_decide(audit=audit, findings=findings, reason="tags missing", by=expert("b"))
    batch.refresh_from_db()
    assert batch.state == "excluded"
    before = stored()
    # when: the rater's page sends a new answer for a video of that batch
    response = client.post(tiny.base + "answers/", answerer.answer(seen[0]), format="json")
    # then
    assert_refused(response, 403, "you have no session open in this study", before, api_log)
    assert Answer.objects.filter(assignment=batch).count() == len(batch.order)


# --- expert audits ------------------------------------------------------------------------


def expert(name: str = "expert") -> User:
    return User.objects.create_user(name, is_staff=True)


@pytest.fixture
def opened_audit():
    tiny = tiny_of("questionnaire", rest_every=0)
    client, user = rater_client()
    take_test_and_session(client, tiny, Answerer("questionnaire"), golden_right=True)
    batch = Assignment.objects.get(rater__user=user)
    return audit_open(assignment=batch, by=expert())


def fair(audit: BatchAudit, **entry) -> dict:
    return {str(item): {"wrong": False, "note": "", **entry} for item in audit.sample}


def audit_state(audit: BatchAudit) -> tuple:
    audit.refresh_from_db()
    batch = Assignment.objects.get(pk=audit.assignment_id)
    payment = Payment.objects.get(assignment=batch)
    return (audit.verdict, audit.findings, audit.reason, batch.state, payment.status)


@pytest.mark.parametrize(
    ("findings", "reason", "message"),
    [
        (lambda a: fair(a, note="see 0:03\x00"), "", "a note holds a NUL character"),
        (lambda a: fair(a, wrong=True), "blurry\x00", "the reason holds a NUL character"),
        (lambda a: fair(a, note="x" * 2001), "", "a note is a text of at most 2000 characters"),
        (lambda a: fair(a, note=["x"]), "", "a note is a text of at most 2000 characters"),
        (lambda a: fair(a, wrong="yes"), "", "every sampled video needs a verdict"),
        (lambda a: {**fair(a), "999999": {"wrong": True}}, "", "not in the audit's sample"),
        (lambda a: [fair(a)], "", "'findings' must give each sampled video's verdict"),
    ],
    ids=["nul-note", "nul-reason", "long-note", "list-note", "word-verdict", "foreign", "list"],
)
def test_a_bad_audit_decision_is_refused_and_decides_nothing(
    opened_audit, findings, reason, message
):
    before = audit_state(opened_audit)
    with pytest.raises(ValidationFailed) as refused:
        audit_decide(
            audit=opened_audit, findings=findings(opened_audit), reason=reason, by=expert("x")
        )
    assert message in refused.value.message
    assert audit_state(opened_audit) == before == ("", [], "", "finished", "pending")


# --- propose, then verify -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "detail"),
    [
        ({"labels": "12"}, "'labels' must list action ids"),
        ({"labels": [[12]]}, "'labels' must list action ids"),
        ({"labels": [True]}, "'labels' must list action ids"),
        ({"labels": [12.0]}, "'labels' must list action ids"),
        ({"labels": [{"id": 12}]}, "'labels' must list action ids"),
        ({"labels": [10**30]}, f"action {10**30} is not in this study's vocabulary"),
        ({"labels": [-12]}, "action -12 is not in this study's vocabulary"),
        ({"labels": [12], "flags": {"bad_box": "true"}}, "a flag is true or false"),
        ({"labels": [12], "flags": ["bad_box"]}, "'flags' may hold inappropriate, bad_box"),
        ({"labels": [12], "other_action": 5}, "'other_action' is a text of at most 200"),
        ({"labels": [12], "other_action": "juggle\x00"}, "'other_action' holds a NUL character"),
        ({"labels": []}, "choose one of 'Pose'"),
    ],
    ids=[
        "string",
        "nested",
        "bool",
        "float",
        "object",
        "huge",
        "negative",
        "flag-string",
        "flags-list",
        "other-number",
        "other-nul",
        "empty",
    ],
)
def test_a_bad_proposal_is_refused_over_the_api(values, detail, api_log):
    rater = rating("propose_verify")
    assert rater.item["stage"] == "propose"
    payload = {k: v for k, v in rater.answer().items() if k != "labels"}
    before = stored()
    assert_refused(rater.post({**payload, **values}), 400, detail, before, api_log)


def at_golden_verify_item() -> tuple[TinyStudy, APIClient, dict]:
    """A rater whose qualification test starts with a verify item (the test is drawn
    by seed; here it is set to a verify item, then a propose item)."""
    tiny = tiny_of("propose_verify", rest_every=0)
    client, user = rater_client()
    consent_and_tutorial(client, tiny)
    tests = Item.objects.filter(study=tiny.study, role="qualification")
    verify = tests.filter(dimension__key="verify").order_by("pk").first()
    propose = tests.filter(dimension__key="propose").order_by("pk").first()
    participation = Participation.objects.get(rater__user=user)
    Participation.objects.filter(pk=participation.pk).update(
        qualification_set={
            "attempt": participation.qualification_attempts,
            "items": [verify.pk, propose.pk],
        }
    )
    item = client.get(tiny.base + "next/").json()["item"]
    assert item["id"] == str(verify.public_id) and item["stage"] == "verify"
    return tiny, client, item


@pytest.mark.parametrize(
    ("make", "detail"),
    [
        (lambda v: {**v, "\u00b2": True}, "'verdicts' must map each candidate's action id"),
        (lambda v: {**v, "9" * 5000: True}, "'verdicts' must map each candidate's action id"),
        (lambda v: {**v, "\u0661\u0662": True}, "'verdicts' must map each candidate's action id"),
        (lambda v: {**v, "-12": True}, "'verdicts' must map each candidate's action id"),
        (lambda v: {**v, "": True}, "'verdicts' must map each candidate's action id"),
        (lambda v: {**v, f"0{next(iter(v))}": True}, "'verdicts' names an action twice"),
        (lambda v: {**v, next(iter(v)) + " ": True}, "'verdicts' must map"),
        (lambda v: {k: None for k in v}, "'verdicts' must map each candidate's action id"),
        (lambda v: {k: 1 for k in v}, "'verdicts' must map each candidate's action id"),
        (lambda v: list(v), "'verdicts' must map each candidate's action id"),
    ],
    ids=[
        "superscript",
        "5000-digits",
        "arabic-digits",
        "negative",
        "empty-key",
        "leading-zero-twice",
        "trailing-space",
        "null",
        "one",
        "list",
    ],
)
def test_a_bad_verify_answer_is_refused_over_the_api(make, detail, api_log):
    tiny, client, item = at_golden_verify_item()
    verdicts = {str(c["id"]): True for c in item["candidates"]}
    payload = {**Answerer("propose_verify").answer(item), "verdicts": make(verdicts)}
    before = stored()
    response = client.post(tiny.base + "answers/", payload, format="json")
    assert_refused(response, 400, detail, before, api_log)


def test_a_verify_answer_replayed_with_its_verdicts_in_another_order_is_a_repeat():
    tiny, client, item = at_golden_verify_item()
    verdicts = {str(c["id"]): c["id"] % 2 == 0 for c in item["candidates"]}
    first = {**Answerer("propose_verify").answer(item), "verdicts": verdicts}
    assert client.post(tiny.base + "answers/", first, format="json").status_code == 201
    before = stored()
    shuffled = dict(reversed(list(verdicts.items())))
    again = client.post(tiny.base + "answers/", {**first, "verdicts": shuffled}, format="json")
    assert (again.status_code, again.json()["status"]) == (200, "repeat")
    assert stored() == before
    assert Verdict.objects.count() == Candidate.objects.filter(item__public_id=item["id"]).count()


def test_verdicts_for_a_verify_item_outside_the_session_are_refused(api_log):
    # given: a proposer at their first segment; the golden verify items exist
    rater = rating("propose_verify")
    verify = Item.objects.filter(study=rater.tiny.study, dimension__key="verify").first()
    payload = Answerer("propose_verify").answer(item_payload(verify, seed=1))
    before = stored()
    # when: they send verdicts for a verify item of no session of theirs
    response = rater.post(payload)
    # then
    assert_refused(response, 404, "this segment is not part of your session", before, api_log)


# --- the consent every design's rater gives first ----------------------------------------


@pytest.mark.parametrize("design", DESIGNS)
def test_a_consent_whose_user_agent_holds_a_nul_is_refused_and_records_nothing(design, api_log):
    tiny = tiny_of(design, rest_every=0)
    client, user = rater_client()
    consent = {"accept": True, "viewport_width": 1280, "viewport_height": 800,
               "pixel_ratio": 1, "user_agent": "Mozilla/5.0\x00"}  # fmt: skip
    assert client.get(tiny.base + "state/").json()["step"] == "consent"
    before = stored()
    response = client.post(tiny.base + "consent/", consent, format="json")
    assert_refused(response, 400, "'user_agent' holds a NUL character", before, api_log)
    participation = Participation.objects.get(rater__user=user)
    assert (participation.consent_at, participation.viewing_check) == (None, {})


def test_a_tag_given_twice_in_one_answer_is_kept_once():
    # as in the answers CSV: a tags answer is a set
    tiny = tiny_of("questionnaire", rest_every=0)
    question = tiny.study.dimensions.get(key="light").question
    assert CHECKS["tags"](question, ["soft_light", "hard_light", "soft_light"]) == [
        "hard_light",
        "soft_light",
    ]
