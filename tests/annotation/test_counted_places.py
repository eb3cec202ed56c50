"""Where a design takes a set number of raters per session (questionnaire batches,
propose-then-verify segments), only sessions whose answers may still count hold a place
(annotation.counting): a rater excluded from the study, or a session that failed its
golden gate, frees it for another rater, as a batch rejected in its audit does."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.counting import counts_q
from annotation.designs.propose_study import settings_of as propose_settings
from annotation.models import Answer, Assignment, Participation, StageLink
from annotation.monitor import study_monitor, study_progress
from annotation.services.admin_actions import participation_exclude
from annotation.services.verify_queue import verify_queues_sweep
from tests.annotation.design_fixtures import (
    Answerer,
    tiny_propose_study,
    tiny_questionnaire_study,
)
from tests.annotation.rater_fixtures import consent_and_tutorial, rater_client
from tests.annotation.test_journey import take_test_and_session
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def finished_batch(tiny, *, golden_right: bool = True):
    client, user = rater_client()
    take_test_and_session(client, tiny, Answerer(tiny.study.design), golden_right=golden_right)
    return Assignment.objects.get(rater__user=user)


def exclude_rater(assignment: Assignment) -> None:
    participation = Participation.objects.get(
        rater_id=assignment.rater_id, study_id=assignment.session.study_id
    )
    participation_exclude(participation=participation, reason="spam", by=UserFactory(is_staff=True))


def step_of_a_new_rater(tiny) -> str:
    client, _ = rater_client()
    return client.get(tiny.base + "state/").json()["step"]


def test_the_finished_batch_of_a_rater_excluded_from_the_study_goes_to_another_rater():
    # given: one batch, one rater per video, finished
    tiny = tiny_questionnaire_study()
    batch = finished_batch(tiny)
    assert step_of_a_new_rater(tiny) == "full"
    # when: an admin excludes its rater from the study
    exclude_rater(batch)
    # then: the batch is free again; the excluded rater's record and answers stay
    assert step_of_a_new_rater(tiny) == "consent"
    retaken = finished_batch(tiny)
    assert retaken.session_id == batch.session_id
    batch.refresh_from_db()
    assert batch.state == "finished" and Answer.objects.filter(assignment=batch).exists()
    assert step_of_a_new_rater(tiny) == "full"


def test_a_rater_whose_page_finished_the_tutorial_once_the_study_was_full_takes_no_test():
    # given: a rater who consented while the only batch was free, then it was taken
    tiny = tiny_questionnaire_study()
    client, user = rater_client()
    consent = {"accept": True, "viewport_width": 1280, "viewport_height": 800}
    assert client.post(tiny.base + "consent/", consent, format="json").json()["step"] == "tutorial"
    finished_batch(tiny)
    # when: their page says the tutorial is done
    state = client.post(tiny.base + "tutorial/done/").json()
    # then: they are told the study is full, and no test starts (before: a test leading
    # nowhere, and on passing it a completion code for nothing rated)
    assert state["step"] == "full" and state["completion"] is None
    participation = Participation.objects.get(rater__user=user)
    assert participation.tutorial_done_at is None
    assert participation.qualification_state == Participation.Qualification.NOT_STARTED
    assert client.get(tiny.base + "next/").json()["item"] is None


@pytest.mark.parametrize("keep", [False, True], ids=["dropped", "kept"])
def test_a_batch_that_failed_its_golden_gate_frees_its_place_unless_the_study_keeps_them(keep):
    # given: a study that drops (or keeps) failed-gate sessions
    tiny = tiny_questionnaire_study(keep_failed_gate_sessions=keep)
    # when: the only batch fails its golden gate
    batch = finished_batch(tiny, golden_right=False)
    # then: a dropped batch's place goes to another rater; a kept one holds it
    assert batch.eligible_for_next is False
    assert step_of_a_new_rater(tiny) == ("full" if keep else "consent")


def test_the_monitors_progress_counts_only_the_answers_that_count():
    # given: a finished batch, its answers counted
    tiny = tiny_questionnaire_study()
    batch = finished_batch(tiny)
    regular = Answer.objects.filter(assignment=batch, item__role="stimulus").count()
    assert study_progress(study=tiny.study)["answers"] == regular > 0
    # when: its rater is excluded from the study
    exclude_rater(batch)
    # then: neither the monitor nor the progress counts them; the monitor's row stays
    monitor = study_monitor(study=tiny.study)
    assert study_progress(study=tiny.study)["answers"] == monitor["progress"]["answers"] == 0
    assert [row["rater_excluded"] for row in monitor["assignments"]] == [True]


def test_an_excluded_proposers_proposals_make_no_verify_item_and_a_new_proposer_takes_the_place():
    # given: two proposers per segment; the first proposes on every segment
    tiny = tiny_propose_study(proposers=2)
    first = finished_batch(tiny)
    # when: they are excluded from the study, and the second proposer proposes
    exclude_rater(first)
    second = finished_batch(tiny)
    verify_queues_sweep()  # what the on-commit task does after each proposal
    # then: one proposal per segment counts, so no segment has its verify item yet
    assert second.session_id == first.session_id
    assert not StageLink.objects.filter(
        propose_item__study=tiny.study, propose_item__role="stimulus"
    ).exists()
    # and a third proposer takes the freed place; the verify items are made from the
    # second and third proposers' proposals only
    third = finished_batch(tiny)
    verify_queues_sweep()
    assert third.session_id == first.session_id
    links = StageLink.objects.filter(propose_item__study=tiny.study, propose_item__role="stimulus")
    assert (
        links.count() == tiny.study.items.filter(role="stimulus", dimension__key="propose").count()
    )
    counted = set(
        Answer.objects.filter(assignment__in=[second, third]).values_list("pk", flat=True)
    )
    assert all(set(link.proposals) <= counted for link in links)
    assert propose_settings(tiny.study).proposers_per_item == 2


def test_the_rule_matches_what_each_kind_of_session_holds():
    # given: a finished batch, a failed-gate batch, an excluded rater's batch, a rejected one
    tiny = tiny_questionnaire_study(raters_per_video=4)
    passed = finished_batch(tiny)
    failed = finished_batch(tiny, golden_right=False)
    excluded_rater = finished_batch(tiny)
    exclude_rater(excluded_rater)
    rejected = finished_batch(tiny)
    Assignment.objects.filter(pk=rejected.pk).update(state="excluded")
    # when
    counting = set(
        Assignment.objects.filter(counts_q(tiny.study), session__study=tiny.study).values_list(
            "pk", flat=True
        )
    )
    # then
    assert failed.eligible_for_next is False
    assert counting == {passed.pk}


# --- idle sessions ------------------------------------------------------------------------


def started_batch(tiny, *, answered: int = 1):
    """A rater who passed the test and answered `answered` items of their batch."""
    client, user = rater_client()
    answerer = Answerer(tiny.study.design)
    consent_and_tutorial(client, tiny)
    while (body := client.get(tiny.base + "next/").json())["step"] == "qualification":
        client.post(tiny.base + "answers/", answerer.answer(body["item"]), format="json")
    for _ in range(answered):
        item = client.get(tiny.base + "next/").json()["item"]
        sent = client.post(tiny.base + "answers/", answerer.answer(item), format="json")
        assert sent.status_code == 201
    return Assignment.objects.get(rater__user=user), client


def idle_for(assignment: Assignment, hours: float) -> None:
    Assignment.objects.filter(pk=assignment.pk).update(
        last_activity_at=timezone.now() - timedelta(hours=hours)
    )


@pytest.mark.parametrize(
    ("idle_place_hours", "idle_hours", "released"),
    [(6, 7, True), (6, 5, False), (0, 500, False)],
    ids=["idle-past-the-limit", "within-the-limit", "never-released"],
)
def test_an_idle_batch_gives_its_place_to_another_rater(idle_place_hours, idle_hours, released):
    # given: one batch for one rater, begun and left
    tiny = tiny_questionnaire_study(idle_place_hours=idle_place_hours)
    batch, _ = started_batch(tiny)
    # when: it has had no answer for a while
    idle_for(batch, idle_hours)
    # then: past the study's limit, a new rater may take the batch
    assert step_of_a_new_rater(tiny) == ("consent" if released else "full")
    rows = study_monitor(study=tiny.study)["assignments"]
    assert [row["place_released"] for row in rows] == [released]


def test_a_rater_whose_place_went_free_may_still_finish_and_nothing_is_lost():
    # given: an idle batch, retaken and finished by another rater
    tiny = tiny_questionnaire_study()
    batch, client = started_batch(tiny)
    idle_for(batch, 7)
    retaken = finished_batch(tiny)
    assert retaken.session_id == batch.session_id
    # when: the first rater comes back and answers the rest
    answerer = Answerer("questionnaire")
    while (item := client.get(tiny.base + "next/").json()["item"]) is not None:
        sent = client.post(tiny.base + "answers/", answerer.answer(item), format="json")
        assert sent.status_code == 201
        if sent.json()["position"] >= sent.json()["length"]:
            break
    # then: both batches are finished and hold their answers; nobody else gets a place
    batch.refresh_from_db()
    assert batch.state == retaken.state == "finished"
    assert Answer.objects.filter(assignment=batch).count() == batch.length
    assert step_of_a_new_rater(tiny) == "full"


def test_an_idle_proposers_segments_go_to_another_proposer():
    # given: one proposer per segment, who begins and leaves
    tiny = tiny_propose_study()
    left, _ = started_batch(tiny)
    idle_for(left, 7)
    # when: another proposer comes
    other = finished_batch(tiny)
    verify_queues_sweep()
    # then: they take the same session, and every segment has its verify item
    assert other.session_id == left.session_id
    links = StageLink.objects.filter(propose_item__study=tiny.study, propose_item__role="stimulus")
    assert links.count() == 3
