"""The questionnaire design (VGA-Bench): what an answer may hold, how it is stored, the
exemplar agreement behind the gate, k raters per batch, the manifest's own columns, and
the expert audits with their re-queue, under concurrency too."""

import threading
import time
import uuid

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction

from annotation.designs import DESIGNS
from annotation.designs.questionnaire_answers import parse_answer_text
from annotation.designs.questionnaire_study import settings_of
from annotation.errors import Conflict, ValidationFailed
from annotation.models import (
    Answer,
    Assignment,
    BatchAudit,
    ExpertLabel,
    Item,
    LabelAnswer,
    Participation,
    Payment,
    Question,
    Stimulus,
)
from annotation.monitor import study_monitor, study_progress
from annotation.services.audits import audit_decide, audit_open, audit_queue, plan_characteristic
from annotation.services.study_import import study_import_manifest
from quality.stats.labels.exemplars import (
    INVALID,
    Tolerances,
    agreeing,
    answer_agrees,
    jaccard,
)
from tests.annotation.design_fixtures import (
    EXPERT_ANSWERS,
    Answerer,
    tiny_questionnaire_study,
)
from tests.annotation.rater_fixtures import consent_and_tutorial, rater_client
from tests.annotation.test_journey import take_test_and_session
from tests.annotation.test_study_import import write_manifest

pytestmark = pytest.mark.django_db
DESIGN = DESIGNS["questionnaire"]


def first_item(tiny, *, restricted: bool = False) -> Item:
    videos = Stimulus.objects.filter(study=tiny.study, role="stimulus").order_by("pk")
    video = videos.last() if restricted else videos.first()
    return Item.objects.get(public_id=video.public_id)


def check(tiny, answers: dict, *, restricted: bool = False):
    item = first_item(tiny, restricted=restricted)
    return DESIGN.check_values(data={"answers": answers}, item=item, study=tiny.study)


# --- what an answer may hold -------------------------------------------------------------


def test_an_answer_of_every_kind_is_checked_and_stored_as_its_kind():
    # given
    tiny = tiny_questionnaire_study()
    item = first_item(tiny)
    values = check(
        tiny,
        {"overall": 7.0, "object_text": "invalid", "light": ["soft_light", "hard_light"],
         "comment": "  too dark  "},
    )  # fmt: skip
    client, user = rater_client()
    participation = Participation.objects.create(rater=user.rater, study=tiny.study)
    answer = Answer.objects.create(item=item, participation=participation, attempt=1)
    # when
    DESIGN.store_values(
        answer=answer, item=item, layout=[item.members.get().stimulus], values=values
    )
    # then: an abstention is a flag, never the number -1; tags in the question's order
    rows = {row.dimension.key: row for row in LabelAnswer.objects.filter(answer=answer)}
    assert rows["overall"].number == 7.0
    assert (rows["object_text"].invalid, rows["object_text"].number) == (True, None)
    assert sorted(tag.tag for tag in rows["light"].tags.all()) == ["hard_light", "soft_light"]
    assert rows["comment"].text == "too dark"


def test_a_repeat_with_a_level_written_as_a_float_has_the_same_digest():
    tiny = tiny_questionnaire_study()
    as_int = check(tiny, {"overall": 7, "object_text": 2, "light": []})
    as_float = check(tiny, {"overall": 7.0, "object_text": 2.0, "light": []})
    assert as_int.canonical() == as_float.canonical()


@pytest.mark.parametrize(
    ("answers", "message"),
    [
        (
            {"overall": 11, "object_text": 2, "light": []},
            "'overall' is 11, outside the scale [0, 10]",
        ),
        (
            {"overall": 2.5, "object_text": 2, "light": []},
            "'overall' is 2.5, not on the scale's steps: 0 to 10 in steps of 1",
        ),
        ({"overall": True, "object_text": 2, "light": []}, "'overall' is not a number: True"),
        ({"overall": 5, "object_text": 4, "light": []}, "'object_text' must be one of its levels"),
        ({"overall": 5, "object_text": -1, "light": []}, "'object_text' must be one of its levels"),
        (
            {"overall": 5, "object_text": 2, "light": ["neon"]},
            "'light' has no tag 'neon'; its tags: hard_light, soft_light, diffused_light",
        ),
        (
            {"overall": 5, "object_text": 2, "light": ["soft light"]},
            "'light' has no tag 'soft light' (that is the label of 'soft_light')",
        ),
        ({"overall": 5, "object_text": 2, "light": "soft_light"}, "'light' needs a list of tags"),
        ({"overall": 5, "light": []}, "question 'object_text' is not answered"),
        ({"overall": 5, "object_text": 2, "light": [], "mood": 3}, "no question 'mood'"),
        ({"overall": 5, "object_text": 2, "light": [], "comment": 5}, "'comment' needs a text"),
    ],
)
def test_a_bad_answer_is_refused_with_a_clear_reason(answers, message):
    tiny = tiny_questionnaire_study()
    with pytest.raises(ValidationFailed) as refused:
        check(tiny, answers)
    assert message in refused.value.message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "Fully consistent",
            "'object_text' must be one of its levels [1, 2, 3] or \"invalid\" (that is the "
            "label of 3)",
        ),
        ("fully", "'object_text' must be one of its levels [1, 2, 3] or \"invalid\""),
    ],
)
def test_a_level_written_as_its_label_in_a_manifest_or_csv_is_refused_naming_the_values(
    text, message
):
    # an experts' answer is written as the CLI writes it: the level's value, not its label
    tiny = tiny_questionnaire_study()
    question = Question.objects.get(dimension__study=tiny.study, dimension__key="object_text")
    with pytest.raises(ValidationFailed) as refused:
        parse_answer_text(question, text)
    assert refused.value.message.startswith(message)
    assert parse_answer_text(question, " 3 ") == 3


def test_a_video_is_asked_only_the_questions_its_prompt_names():
    # given: the last regular video is asked only the score and the tags
    tiny = tiny_questionnaire_study()
    item = first_item(tiny, restricted=True)
    # when
    payload = DESIGN.item_payload(item=item, layout=[item.members.get().stimulus])
    # then
    assert payload["questions"] == ["overall", "light"]
    assert check(tiny, {"overall": 3, "light": []}, restricted=True).answers == {
        "overall": 3.0,
        "light": [],
    }
    with pytest.raises(ValidationFailed, match="'object_text' does not apply to this video"):
        check(tiny, {"overall": 3, "light": [], "object_text": 2}, restricted=True)


def test_a_single_choice_tag_group_takes_one_tag():
    tiny = tiny_questionnaire_study()
    question = tiny.study.dimensions.get(key="light").question
    question.multiple = False
    question.save()
    from annotation.designs.questionnaire_study import questions_forget

    questions_forget(tiny.study.pk)
    with pytest.raises(ValidationFailed, match="'light' takes one tag"):
        check(tiny, {"overall": 5, "object_text": 2, "light": ["soft_light", "hard_light"]})


# --- exemplar agreement ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "answer", "expert", "tolerances", "agrees"),
    [
        ("score", 6, 7, Tolerances(score_tolerance=1), True),
        ("score", 5, 7, Tolerances(score_tolerance=1), False),
        ("ordinal", 2, 3, Tolerances(adjacent=True), True),
        ("ordinal", 2, 3, Tolerances(adjacent=False), False),
        ("ordinal", 1, 3, Tolerances(adjacent=True), False),
        ("ordinal", "invalid", 3, Tolerances(), False),
        ("ordinal", "invalid", "invalid", Tolerances(), True),
        ("tags", ["a", "b"], ["a"], Tolerances(tags_jaccard=0.5), True),
        ("tags", ["a", "b", "c"], ["a"], Tolerances(tags_jaccard=0.5), False),
        ("tags", [], [], Tolerances(tags_jaccard=1.0), True),
    ],
)
def test_exemplar_agreement_per_kind(kind, answer, expert, tolerances, agrees):
    levels = (1.0, 2.0, 3.0) if kind == "ordinal" else ()
    assert (
        answer_agrees(kind=kind, answer=answer, expert=expert, levels=levels, tolerances=tolerances)
        is agrees
    )


@pytest.mark.parametrize(
    "tolerances",
    [Tolerances(), Tolerances(score_tolerance=0.5, adjacent=False, tags_jaccard=1.0)],
)
def test_the_agreeing_answers_stated_as_data_are_those_answer_agrees_accepts(tolerances):
    # given: every answer a small question of each kind can take
    levels = (1.0, 2.0, 3.0, 4.0)
    tags = [[], ["a"], ["b"], ["a", "b"], ["a", "c"], ["a", "b", "c"]]
    scores = [x / 2 for x in range(21)]
    cases = [("score", scores, scores), ("ordinal", [*levels, INVALID], [*levels, INVALID])]
    cases.append(("tags", tags, tags))
    for kind, experts, answers in cases:
        for expert in experts:
            # when
            rule = agreeing(kind=kind, expert=expert, levels=levels, tolerances=tolerances)
            # then: an answer is within the stated rule exactly when it agrees
            for answer in answers:
                if kind == "score":
                    within = rule["low"] - 1e-9 <= answer <= rule["high"] + 1e-9
                elif kind == "ordinal":
                    within = answer in rule["levels"]
                else:
                    within = jaccard(answer, expert) >= rule["jaccard"] - 1e-12
                agrees = answer_agrees(
                    kind=kind, answer=answer, expert=expert, levels=levels, tolerances=tolerances
                )
                assert within is agrees, (kind, expert, answer)


def test_the_agreeing_levels_are_in_the_questions_order():
    rule = agreeing(kind="ordinal", expert=1, levels=(3, 1, 2), tolerances=Tolerances())
    assert rule == {"levels": [3.0, 1.0, 2.0]}
    assert agreeing(kind="ordinal", expert=2, levels=(3, 1, 2))["levels"] == [1.0, 2.0]


def test_jaccard_is_intersection_over_union():
    assert jaccard(["a", "b", "c"], ["b", "c", "d"]) == 2 / 4


@pytest.mark.parametrize("right", [True, False])
def test_the_qualification_compares_with_the_experts_answers(right):
    # given
    tiny = tiny_questionnaire_study()
    client, user = rater_client()
    answerer = Answerer("questionnaire")
    from tests.annotation.rater_fixtures import consent_and_tutorial

    consent_and_tutorial(client, tiny)
    # when
    while (body := client.get(tiny.base + "next/").json())["step"] == "qualification":
        client.post(
            tiny.base + "answers/", answerer.answer(body["item"], right=right), format="json"
        )
    # then: the share is over (video x compared question): 2 videos x 3 questions
    participation = Participation.objects.get(rater__user=user)
    assert participation.qualification_state == ("passed" if right else "failed")
    assert participation.qualification_share == (1.0 if right else 0.0)
    assert len(participation.qualification_detail) == 6


def tutorial_of(tiny) -> dict:
    client, _ = rater_client()
    consent = {"accept": True, "viewport_width": 1280, "viewport_height": 800, "pixel_ratio": 1}
    client.post(tiny.base + "consent/", consent, format="json")
    return client.get(tiny.base + "tutorial/").json()


def test_the_tutorial_shows_the_exemplars_with_the_experts_answers_and_why():
    tiny = tiny_questionnaire_study()
    body = tutorial_of(tiny)
    assert body["pairs"] == []
    assert len(body["exemplars"]) == 2
    first = body["exemplars"][0]
    assert {a["question"]: a["value"] for a in first["answers"]} == EXPERT_ANSWERS
    assert first["answers"][0]["note"] == "why"
    assert first["video_url"]


def test_each_exemplar_answer_says_which_answers_the_test_counts_as_agreeing():
    # given: a study stricter than the defaults
    tiny = tiny_questionnaire_study()
    chosen = settings_of(tiny.study)
    chosen.score_tolerance, chosen.ordinal_adjacent, chosen.tags_jaccard = 2.0, False, 1.0
    chosen.save()
    # when
    body = tutorial_of(tiny)
    # then: the study's tolerances around the experts' answers (7, level 3, soft light)
    agrees = {a["question"]: a["agrees"] for a in body["exemplars"][0]["answers"]}
    assert agrees == {
        "overall": {"low": 5.0, "high": 9.0},
        "object_text": {"levels": [3.0]},
        "light": {"jaccard": 1.0},
    }


# --- k raters per batch, audits, re-queue ------------------------------------------------


def finished_batch(tiny, *, right: bool = True):
    client, user = rater_client()
    take_test_and_session(client, tiny, Answerer("questionnaire"), golden_right=right)
    return Assignment.objects.get(rater__user=user), client


def expert(name: str = "expert") -> User:
    return User.objects.create_user(name, is_staff=True)


def verdicts(audit: BatchAudit, wrong: int) -> dict:
    return {
        str(item): {"wrong": index < wrong, "note": "mislabelled" if index < wrong else ""}
        for index, item in enumerate(audit.sample)
    }


def test_a_session_is_handed_out_to_k_raters_only():
    # given: one session, one rater per video, finished by a rater while a second one
    # was at the tutorial
    tiny = tiny_questionnaire_study()
    client, user = rater_client()
    consent_and_tutorial(client, tiny)
    batch, _ = finished_batch(tiny)
    # when: the second rater qualifies
    take_test_and_session(client, tiny, Answerer("questionnaire"), golden_right=True)
    # then: no session is left for them
    assert not Assignment.objects.filter(rater__user=user).exists()
    assert client.get(tiny.base + "state/").json()["step"] == "done"
    assert batch.state == "finished"


def test_a_rater_arriving_at_a_full_study_is_told_before_consent_and_given_no_code():
    # given: one session, one rater per video, taken
    tiny = tiny_questionnaire_study()
    finished_batch(tiny)
    # when: a new rater opens the study
    client, _ = rater_client()
    state = client.get(tiny.base + "state/").json()
    # then: no place, said at once: no consent, test and code for a study with no work
    assert state["step"] == "full" and state["completion"] is None
    # and when a rejected batch reopens the session, the next rater may begin
    Assignment.objects.filter(session__study=tiny.study).update(state="excluded")
    assert client.get(tiny.base + "state/").json()["step"] == "consent"


def test_the_audit_sample_is_drawn_once_and_the_plan_decides():
    # given: a finished batch of 4 videos, plan n=3, c=1
    tiny = tiny_questionnaire_study()
    plan = settings_of(tiny.study)
    plan.audit_sample_size, plan.audit_acceptance_number = 3, 1
    plan.save()
    batch, _ = finished_batch(tiny)
    # when: two experts open it
    first = audit_open(assignment=batch, by=expert("a"))
    second = audit_open(assignment=batch, by=expert("b"))
    # then: the same sample of regular videos
    assert first.pk == second.pk and len(first.sample) == 3
    regular = set(
        Item.objects.filter(study=tiny.study, role="stimulus").values_list("pk", flat=True)
    )
    assert set(first.sample) <= regular
    assert audit_queue(study=tiny.study) == [batch]
    decided = audit_decide(audit=first, findings=verdicts(first, wrong=1), by=expert("c"))
    assert (decided.verdict, decided.wrong) == ("accepted", 1)
    assert audit_queue(study=tiny.study) == []
    batch.refresh_from_db()
    assert batch.state == "finished"


def test_a_rejected_batch_is_excluded_unpaid_and_its_session_goes_to_another_rater():
    # given
    tiny = tiny_questionnaire_study()
    batch, _ = finished_batch(tiny)
    answers = Answer.objects.filter(assignment=batch).count()
    audit = audit_open(assignment=batch, by=expert())
    # when
    audit_decide(
        audit=audit, findings=verdicts(audit, wrong=3), reason="tags missing", by=expert("x")
    )
    # then: answers kept, marked excluded with the reason; payment rejected with it
    batch.refresh_from_db()
    assert batch.state == "excluded"
    assert batch.admin_note == "batch rejected in its audit: tags missing"
    assert Answer.objects.filter(assignment=batch).count() == answers
    payment = Payment.objects.get(assignment=batch)
    assert (payment.status, payment.note) == ("rejected", batch.admin_note)
    # and another rater gets the same session, once
    other, _ = finished_batch(tiny)
    assert other.session_id == batch.session_id
    third_client, third = rater_client()
    take_test_and_session(third_client, tiny, Answerer("questionnaire"), golden_right=True)
    assert not Assignment.objects.filter(rater__user=third).exists()


def test_the_monitors_progress_counts_against_raters_per_video_and_leaves_rejected_batches_out():
    # given: one rater per video; a batch rejected in its audit, its session retaken
    tiny = tiny_questionnaire_study()
    batch, _ = finished_batch(tiny)
    audit = audit_open(assignment=batch, by=expert())
    audit_decide(audit=audit, findings=verdicts(audit, wrong=3), by=expert("x"))
    other, _ = finished_batch(tiny)
    # when
    progress = study_progress(study=tiny.study)
    monitor = study_monitor(study=tiny.study)["progress"]
    # then: the study's own target, and only the retaken batch's answers: it is done
    regular = Answer.objects.filter(assignment=other, item__role="stimulus").count()
    assert regular == progress["stimuli"] > 0
    assert settings_of(tiny.study).raters_per_video == progress["target_per_stimulus"] == 1
    assert (progress["answers"], progress["answers_per_stimulus"]) == (regular, 1.0)
    assert progress["expected_finish"] is None
    assert monitor == progress


def test_a_batch_an_admin_excluded_meanwhile_keeps_the_admins_reason():
    # given: an audit opened, then an admin excludes the batch for their own reason
    from annotation.services.admin_actions import assignment_exclude

    tiny = tiny_questionnaire_study()
    batch, _ = finished_batch(tiny)
    audit = audit_open(assignment=batch, by=expert())
    assignment_exclude(assignment=batch, reason="rater used a script", by=expert("admin"))
    # when / then: the rejection is refused, saying why; the admin's record stays
    with pytest.raises(Conflict, match="excluded now: rater used a script"):
        audit_decide(audit=audit, findings=verdicts(audit, wrong=3), by=expert("x"))
    batch.refresh_from_db()
    assert (batch.admin_note, batch.excluded_by.username) == ("rater used a script", "admin")
    audit.refresh_from_db()
    assert audit.verdict == ""


def test_an_audit_without_every_verdict_is_refused_and_nothing_changes():
    tiny = tiny_questionnaire_study()
    batch, _ = finished_batch(tiny)
    audit = audit_open(assignment=batch, by=expert())
    findings = verdicts(audit, wrong=0)
    findings.pop(next(iter(findings)))
    with pytest.raises(ValidationFailed, match="every sampled video needs a verdict"):
        audit_decide(audit=audit, findings=findings, by=expert("y"))
    audit.refresh_from_db()
    assert audit.verdict == ""


def test_an_unfinished_batch_cannot_be_audited():
    tiny = tiny_questionnaire_study()
    client, user = rater_client()
    take_test_and_session(client, tiny, Answerer("questionnaire"), golden_right=True)
    batch = Assignment.objects.get(rater__user=user)
    Assignment.objects.filter(pk=batch.pk).update(state="active")
    with pytest.raises(Conflict, match="only a finished batch"):
        audit_open(assignment=batch, by=expert())


def test_the_operating_characteristic_is_the_binomial_cdf():
    from scipy.stats import binom

    rows = plan_characteristic(sample_size=13, acceptance_number=1)
    for row in rows:
        assert row["accept"] == pytest.approx(binom.cdf(1, 13, row["defects"]), abs=1e-12)


# --- concurrency ------------------------------------------------------------------------


def run_at_once(*calls) -> list:
    """Run the calls in threads that start together; each result or exception."""
    results: list = [None] * len(calls)
    start = threading.Barrier(len(calls))

    def run(index: int) -> None:
        start.wait()
        try:
            results[index] = calls[index]()
        except Exception as exc:  # noqa: BLE001 - the test looks at it
            results[index] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return results


@pytest.mark.django_db(transaction=True)
def test_two_experts_deciding_one_batch_at_once_leave_exactly_one_decision():
    # given
    tiny = tiny_questionnaire_study()
    batch, _ = finished_batch(tiny)
    audit = audit_open(assignment=batch, by=expert())
    first, second = expert("one"), expert("two")
    # when: one accepts, one rejects, at once
    results = run_at_once(
        lambda: audit_decide(audit=audit, findings=verdicts(audit, wrong=0), by=first),
        lambda: audit_decide(audit=audit, findings=verdicts(audit, wrong=3), by=second),
    )
    # then
    conflicts = [r for r in results if isinstance(r, Conflict)]
    decided = [r for r in results if isinstance(r, BatchAudit)]
    assert (len(conflicts), len(decided)) == (1, 1), results
    assert "already audited" in conflicts[0].message
    audit.refresh_from_db()
    batch.refresh_from_db()
    assert audit.verdict == decided[0].verdict
    assert batch.state == ("excluded" if audit.verdict == "rejected" else "finished")


@pytest.mark.django_db(transaction=True)
def test_a_rejection_racing_the_raters_late_answer_loses_nothing_and_counts_nothing_twice():
    # given: a finished batch whose last answer the rater's page sends again, late
    tiny = tiny_questionnaire_study()
    batch, client = finished_batch(tiny)
    last = Answer.objects.filter(assignment=batch).order_by("-pk").first()
    labels = {row.dimension.key: row for row in last.labels.select_related("dimension")}
    values = {}
    for key, row in labels.items():
        tags = sorted(tag.tag for tag in row.tags.all())
        values[key] = tags if key == "light" else ("invalid" if row.invalid else row.number)
    late = {
        "client_uuid": str(last.client_uuid),
        "item": str(last.item.public_id),
        "answers": values,
        "shown_at": "2026-11-22T10:00:00Z",
        "answered_at": "2026-11-22T10:00:05Z",
    }
    audit = audit_open(assignment=batch, by=expert())
    user = batch.rater.user
    from rest_framework.test import APIClient

    def resend():
        again = APIClient()
        again.force_authenticate(user)
        return again.post(tiny.base + "answers/", late, format="json")

    # when: the lock is held while both wait, then let go
    with transaction.atomic():
        Assignment.objects.select_for_update().get(pk=batch.pk)
        results = []
        thread = threading.Thread(
            target=lambda: results.extend(
                run_at_once(
                    resend,
                    lambda: audit_decide(
                        audit=audit, findings=verdicts(audit, wrong=3), by=expert("z")
                    ),
                )
            )
        )
        thread.start()
        time.sleep(0.3)
    thread.join(timeout=30)
    # then: the repeat is a repeat, the batch rejected, every answer there once
    response, decided = results
    assert response.status_code == 200 and response.json()["status"] == "repeat"
    assert isinstance(decided, BatchAudit) and decided.verdict == "rejected"
    assert Answer.objects.filter(assignment=batch).count() == len(batch.order)
    assert Answer.objects.filter(client_uuid=last.client_uuid).count() == 1
    batch.refresh_from_db()
    assert batch.state == "excluded"


@pytest.mark.django_db(transaction=True)
def test_two_raters_starting_at_once_never_both_take_the_last_place():
    # given: a session with room for one rater, two qualified raters
    tiny = tiny_questionnaire_study()
    users = []
    for _ in range(2):
        client, user = rater_client()
        from tests.annotation.rater_fixtures import consent_and_tutorial

        consent_and_tutorial(client, tiny)
        while (body := client.get(tiny.base + "next/").json())["step"] == "qualification":
            client.post(
                tiny.base + "answers/",
                Answerer("questionnaire").answer(body["item"]),
                format="json",
            )
        users.append(user)
    from annotation.services.session_start import assignment_start_next

    participations = [Participation.objects.get(rater__user=u) for u in users]
    # when
    results = run_at_once(
        *(lambda p=p: assignment_start_next(participation=p) for p in participations)
    )
    # then
    started = [r for r in results if isinstance(r, Assignment)]
    assert len(started) == 1, results
    assert Assignment.objects.filter(session__study=tiny.study).count() == 1


# --- the manifest's own columns ----------------------------------------------------------


def test_the_manifest_gives_applicable_questions_exemplars_and_expert_answers(tmp_path):
    # given
    tiny = tiny_questionnaire_study(stimuli=0)
    manifest = write_manifest(
        tmp_path,
        [
            {"path": "a.mp4", "role": "stimulus", "questions": "overall|light"},
            {"path": "b.mp4", "role": "tutorial", "overall_expert": "8",
             "object_text_expert": "invalid", "light_expert": "soft_light|hard_light",
             "note": "soft key light, no object named"},
        ],
    )  # fmt: skip
    # when
    report = study_import_manifest(study=tiny.study, manifest=manifest)
    # then
    plain, exemplar = Stimulus.objects.filter(pk__in=report.created).order_by("pk")
    assert plain.asked_questions == ["overall", "light"]
    answers = {
        e.dimension.key: (e.value, e.note) for e in ExpertLabel.objects.filter(stimulus=exemplar)
    }
    assert answers == {
        "overall": (8.0, "soft key light, no object named"),
        "object_text": ("invalid", "soft key light, no object named"),
        "light": (["hard_light", "soft_light"], "soft key light, no object named"),
    }


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"questions": "overall|mood"}, "questions names 'mood', not a question of this study"),
        ({"role": "golden", "overall_expert": "8"}, "needs the experts' answer to 'object_text'"),
        ({"role": "golden", "overall_expert": "12", "object_text_expert": "2", "light_expert": ""},
         "overall_expert: 'overall' is 12.0, outside the scale [0, 10]"),
        ({"overall_expert": "8"}, "a stimulus row takes no experts' answers"),
    ],
)  # fmt: skip
def test_a_bad_questionnaire_manifest_row_is_refused_with_its_line(tmp_path, row, message):
    from annotation.errors import ImportFailed

    tiny = tiny_questionnaire_study(stimuli=0)
    manifest = write_manifest(tmp_path, [{"path": "a.mp4", "role": "stimulus", **row}])
    with pytest.raises(ImportFailed) as refused:
        study_import_manifest(study=tiny.study, manifest=manifest)
    assert any(line == 2 and message in text for line, text in refused.value.errors), (
        refused.value.errors
    )
    assert not Stimulus.objects.filter(study=tiny.study, role="stimulus").exists()


def test_a_slider_manifest_refuses_questionnaire_columns(tmp_path):
    from annotation.errors import ImportFailed
    from tests.factories import make_study

    study = make_study()
    manifest = write_manifest(tmp_path, [{"path": "a.mp4", "role": "stimulus", "note": "x"}])
    with pytest.raises(ImportFailed) as refused:
        study_import_manifest(study=study, manifest=manifest)
    assert "unknown column 'note'" in str(refused.value.errors)


def test_uuid_public_ids_of_items_are_their_videos():
    tiny = tiny_questionnaire_study()
    for item in Item.objects.filter(study=tiny.study):
        assert item.public_id == item.members.get().stimulus.public_id
    assert uuid.UUID(str(item.public_id))
