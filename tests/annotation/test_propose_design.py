"""Propose, then verify (AVA): what a proposal and a verdict may hold, the verify queue
that fills itself once per segment (under concurrent proposals too), a proposer never
verifying their own segment, the golden figures, and segment manifests."""

import csv
import threading
from pathlib import Path

import pytest
from django.db import connection

from annotation.designs import DESIGNS
from annotation.designs.propose_study import settings_of
from annotation.errors import ImportFailed, ValidationFailed
from annotation.models import (
    Answer,
    Assignment,
    Candidate,
    ExpertLabel,
    Item,
    Participation,
    Proposal,
    ProposalFlags,
    Session,
    StageLink,
    Stimulus,
)
from annotation.services.study_import import study_import_manifest
from annotation.services.verify_queue import verify_queues_sweep
from media_pipeline.ffmpeg.synth import make_clip
from media_pipeline.services.transcode_jobs import stimuli_enqueue_processing
from tests.annotation.design_fixtures import EXPERT_ACTIONS, Answerer, tiny_propose_study
from tests.annotation.rater_fixtures import consent_and_tutorial, rater_client
from tests.annotation.test_journey import take_test_and_session
from tests.videos import write_video

pytestmark = pytest.mark.django_db
DESIGN = DESIGNS["propose_verify"]


def propose_item(tiny, index: int = 0) -> Item:
    return Item.objects.filter(
        study=tiny.study, role="stimulus", dimension__key="propose"
    ).order_by("pk")[index]


def check(tiny, data: dict, item: Item | None = None):
    return DESIGN.check_values(data=data, item=item or propose_item(tiny), study=tiny.study)


# --- what a proposal and a verdict may hold ---------------------------------------------


def test_a_proposal_keeps_labels_other_action_and_flags():
    tiny = tiny_propose_study()
    values = check(tiny, {"labels": [17, 12, 79], "other_action": " juggle ", "flags": {}})
    assert values.canonical() == {
        "labels": [12, 17, 79],
        "other_action": "juggle",
        "flags": {"inappropriate": False, "bad_box": False},
    }


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"labels": [17]}, "choose one of 'Pose'"),
        ({"labels": [11, 12]}, "at most 1 of 'Pose'"),
        ({"labels": [12, 99]}, "action 99 is not in this study's vocabulary"),
        ({"labels": [12, 12]}, "names an action twice"),
        ({"labels": ["12"]}, "must list action ids"),
        ({"labels": [12], "flags": {"blurry": True}}, "'flags' may hold"),
        ({"labels": [12], "other_action": "x" * 201}, "at most 200 characters"),
    ],
)
def test_a_bad_proposal_is_refused_with_a_clear_reason(data, message):
    tiny = tiny_propose_study()
    with pytest.raises(ValidationFailed) as refused:
        check(tiny, data)
    assert message in refused.value.message


def test_a_flagged_segment_may_have_no_pose_and_the_label_cap_holds():
    tiny = tiny_propose_study()
    assert check(tiny, {"labels": [], "flags": {"bad_box": True}}).labels == ()
    chosen = settings_of(tiny.study)
    chosen.max_labels = 2
    chosen.save()
    with pytest.raises(ValidationFailed, match="at most 2 labels per segment"):
        check(tiny, {"labels": [12, 17, 48]})


def golden_verify_item(tiny) -> Item:
    return Item.objects.filter(study=tiny.study, role="golden", dimension__key="verify").first()


def test_golden_verify_items_show_the_experts_labels_among_distractors():
    tiny = tiny_propose_study()
    item = golden_verify_item(tiny)
    candidates = set(
        Candidate.objects.filter(item=item).values_list("action__action_id", flat=True)
    )
    assert set(EXPERT_ACTIONS) < candidates
    assert len(candidates) == len(EXPERT_ACTIONS) + 3
    payload = DESIGN.item_payload(item=item, layout=[item.members.get().stimulus])
    assert {c["id"] for c in payload["candidates"]} == candidates
    assert payload["stage"] == "verify" and payload["box"] == [0.1, 0.2, 0.5, 0.9]
    assert "expected" not in str(payload) and "expert" not in str(payload)


def test_every_candidate_needs_exactly_one_verdict():
    tiny = tiny_propose_study()
    item = golden_verify_item(tiny)
    ids = list(Candidate.objects.filter(item=item).values_list("action__action_id", flat=True))
    with pytest.raises(ValidationFailed, match="1 candidate\\(s\\) without a verdict"):
        check(tiny, {"verdicts": {str(i): True for i in ids[1:]}}, item)
    with pytest.raises(ValidationFailed, match="not a candidate here"):
        outside = next(a for a in (11, 12, 14, 17, 48, 79, 80) if a not in ids)
        check(tiny, {"verdicts": {**{str(i): True for i in ids}, str(outside): False}}, item)
    with pytest.raises(ValidationFailed, match="true or false"):
        check(tiny, {"verdicts": {str(i): "yes" for i in ids}}, item)


# --- the verify queue --------------------------------------------------------------------


def proposer(tiny, *, right: bool = True):
    client, user = rater_client()
    take_test_and_session(client, tiny, Answerer("propose_verify"), golden_right=right)
    return client, user


@pytest.mark.django_db(transaction=True)
def test_the_proposals_of_a_segment_become_one_verify_item_with_their_union():
    # given: two proposers per segment
    tiny = tiny_propose_study(proposers=2, verifiers=1)
    item = propose_item(tiny)
    first, _ = proposer(tiny)
    assert not StageLink.objects.filter(propose_item=item).exists()  # one proposal: waits
    # when: the second proposer (who also gives a person-object label) finishes
    client, user = rater_client()
    consent_and_tutorial(client, tiny)
    answerer = Answerer("propose_verify")
    while (body := client.get(tiny.base + "next/").json())["step"] == "qualification":
        client.post(tiny.base + "answers/", answerer.answer(body["item"]), format="json")
    while (body := client.get(tiny.base + "next/").json())["item"] is not None:
        values = answerer.values(body["item"])
        if body["item"]["stage"] == "propose" and body["item"]["id"] == str(item.public_id):
            values = {"labels": [12, 48]}
        sent = client.post(
            tiny.base + "answers/", answerer.answer(body["item"], **values), format="json"
        )
        assert sent.status_code == 201, sent.json()
        if sent.json()["position"] >= sent.json()["length"]:
            break
    # then: one verify item, its candidates the union (stand, read), nothing on who
    link = StageLink.objects.get(propose_item=item)
    candidates = Candidate.objects.filter(item=link.verify_item)
    assert sorted(candidates.values_list("action__action_id", flat=True)) == [12, 48]
    # and the verify items went into verify sessions of their own
    verify_sessions = Session.objects.filter(study=tiny.study, items__item__dimension__key="verify",
                                             items__is_golden=False).distinct()  # fmt: skip
    assert verify_sessions.count() == 1
    regular = verify_sessions.get().items.filter(is_golden=False)
    assert regular.count() == 3
    golden = verify_sessions.get().items.filter(is_golden=True)
    assert set(golden.values_list("item__dimension__key", flat=True)) == {"verify"}


@pytest.mark.django_db(transaction=True)
def test_a_segment_flagged_by_a_majority_is_set_aside_with_its_flags():
    tiny = tiny_propose_study()
    item = propose_item(tiny)
    client, user = rater_client()
    consent_and_tutorial(client, tiny)
    answerer = Answerer("propose_verify")
    while (body := client.get(tiny.base + "next/").json())["step"] == "qualification":
        client.post(tiny.base + "answers/", answerer.answer(body["item"]), format="json")
    while (body := client.get(tiny.base + "next/").json())["item"] is not None:
        values = answerer.values(body["item"])
        if body["item"]["id"] == str(item.public_id):
            values = {"labels": [], "flags": {"bad_box": True}}
        sent = client.post(
            tiny.base + "answers/", answerer.answer(body["item"], **values), format="json"
        )
        if sent.json()["position"] >= sent.json()["length"]:
            break
    link = StageLink.objects.get(propose_item=item)
    assert (link.set_aside, link.verify_item, link.flags["bad_box"]) == (True, None, 1)
    assert ProposalFlags.objects.filter(answer__item=item, bad_box=True).count() == 1


def test_a_stage_with_fewer_raters_per_segment_stops_at_its_own_number():
    # given: one proposer and two verifiers a segment; the propose session has its one
    tiny = tiny_propose_study(proposers=1, verifiers=2)
    proposer(tiny)

    def session_of(stage: str) -> Session:
        sessions = Session.objects.filter(study=tiny.study, items__is_golden=False,
                                          items__item__dimension__key=stage)  # fmt: skip
        return sessions.distinct().get()

    propose_session = session_of("propose")
    verify_queues_sweep()  # the on-commit task does not run here: its verify session
    verify_session = session_of("verify")
    # when: two more raters come
    for _ in range(2):
        proposer(tiny)
    # then: nobody proposed twice for a segment; both verify
    assert Assignment.objects.filter(session=propose_session).count() == 1
    assert Assignment.objects.filter(session=verify_session).count() == 2


def test_the_sweep_fills_what_lost_tasks_left_and_makes_the_verify_sessions():
    # given: proposals in, but the on-commit task never ran (no transaction here)
    tiny = tiny_propose_study()
    proposer(tiny)
    links = StageLink.objects.filter(propose_item__study=tiny.study, propose_item__role="stimulus")
    assert not links.exists()
    # when: the periodic sweep runs, twice
    made = verify_queues_sweep()
    again = verify_queues_sweep()
    # then: one verify item per segment, all in a verify session, nothing twice
    assert (made, again) == (3, 0)
    verify = Item.objects.filter(study=tiny.study, role="stimulus", dimension__key="verify")
    assert verify.count() == 3
    assert all(item.session_items.exists() for item in verify)


@pytest.mark.django_db(transaction=True)
def test_a_proposer_never_verifies_their_own_segments():
    # given: one proposer did every segment; their verify session exists
    tiny = tiny_propose_study()
    client, user = proposer(tiny)
    links = StageLink.objects.filter(propose_item__study=tiny.study, propose_item__role="stimulus")
    assert links.filter(verify_item__isnull=False).count() == 3
    # when: they ask for more
    body = client.get(tiny.base + "next/").json()
    # then: no session for them; another rater gets the verify session
    assert body["item"] is None and body["step"] == "done"
    other_client, other = rater_client()
    seen = take_test_and_session(other_client, tiny, Answerer("propose_verify"), golden_right=True)
    assert {item["stage"] for item in seen} == {"verify"}
    proposed = Answer.objects.filter(
        participation__rater__user=user, item__dimension__key="propose", item__role="stimulus"
    )
    verified_by_proposer = Answer.objects.filter(
        participation__rater__user=user,
        item__propose_link__propose_item__in=proposed.values("item_id"),
    )
    assert not verified_by_proposer.exists()


@pytest.mark.django_db(transaction=True)
def test_the_golden_gate_is_the_proposers_recall_of_the_experts_labels():
    tiny = tiny_propose_study()
    client, user = rater_client()
    take_test_and_session(client, tiny, Answerer("propose_verify"), golden_right=False)
    assignment = Assignment.objects.get(rater__user=user)
    assert (assignment.golden_agreement, assignment.eligible_for_next) == (0.0, False)
    client, user = rater_client()
    # (the one session is full: a second tiny study for the right answers)
    tiny = tiny_propose_study()
    client, user = rater_client()
    take_test_and_session(client, tiny, Answerer("propose_verify"), golden_right=True)
    assignment = Assignment.objects.get(rater__user=user)
    assert (assignment.golden_agreement, assignment.eligible_for_next) == (1.0, True)


@pytest.mark.django_db(transaction=True)
def test_concurrent_proposals_fill_the_verify_queue_once_per_segment():
    # given: the last two proposals of every segment arrive at once (two proposers per
    # segment, each answering the same session in two threads)
    tiny = tiny_propose_study(proposers=2)
    clients = []
    for _ in range(2):
        client, user = rater_client()
        consent_and_tutorial(client, tiny)
        answerer = Answerer("propose_verify")
        while (body := client.get(tiny.base + "next/").json())["step"] == "qualification":
            client.post(tiny.base + "answers/", answerer.answer(body["item"]), format="json")
        clients.append(client)
    start = threading.Barrier(2)

    def rate(client) -> None:
        try:
            start.wait()
            answerer = Answerer("propose_verify")
            while (body := client.get(tiny.base + "next/").json())["item"] is not None:
                if body["item"]["stage"] != "propose":
                    break
                client.post(tiny.base + "answers/", answerer.answer(body["item"]), format="json")
        finally:
            connection.close()

    threads = [threading.Thread(target=rate, args=(client,)) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    # then: every segment has exactly one verify item, in exactly one session
    regular = Item.objects.filter(study=tiny.study, role="stimulus", dimension__key="propose")
    assert StageLink.objects.filter(propose_item__in=regular).count() == regular.count() == 3
    verify_items = Item.objects.filter(study=tiny.study, role="stimulus", dimension__key="verify")
    assert verify_items.count() == 3
    for item in verify_items:
        assert item.session_items.count() == 1
    assert Proposal.objects.filter(answer__item__in=regular).count() == 6


# --- segment manifests and their cut -----------------------------------------------------


def write_rows(folder: Path, rows: list[dict], *, extra_columns: list[str] = ()) -> Path:
    manifest = folder / "manifest.csv"
    columns = ["path", "role", "video_id", "keyframe", "x1", "y1", "x2", "y2", "person_id",
               "expert_actions", *extra_columns]  # fmt: skip
    with open(manifest, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    return manifest


def box(**row) -> dict:
    return {"x1": "0.1", "y1": "0.2", "x2": "0.5", "y2": "0.9", **row}


def test_segments_of_one_film_are_stored_once_cut_around_their_keyframes(
    tmp_path, django_capture_on_commit_callbacks
):
    # given: a 6 s film with two people at 2.0 s and one at 4.0 s
    tiny = tiny_propose_study(stimuli=0)
    make_clip(path=tmp_path / "film.mp4", width=160, height=120, fps=10, seconds=6.0)
    manifest = write_rows(
        tmp_path,
        [
            box(path="film.mp4", role="stimulus", keyframe="2", person_id="0"),
            box(path="film.mp4", role="stimulus", keyframe="2", person_id="1", x1="0.6", x2="0.9"),
            box(
                path="film.mp4", role="golden", keyframe="4", person_id="0", expert_actions="12|17"
            ),
        ],
    )
    # when
    with django_capture_on_commit_callbacks(execute=True):
        report = study_import_manifest(
            study=tiny.study, manifest=manifest, on_commit=stimuli_enqueue_processing
        )
    # then: three stimuli, one stored file, each a 3 s segment with its box
    made = Stimulus.objects.filter(pk__in=report.created).order_by("pk")
    assert len({s.source_file.name for s in made}) == 1
    assert [s.segment["keyframe"] for s in made] == [2.0, 2.0, 4.0]
    assert made[1].segment["box"] == [0.6, 0.2, 0.9, 0.9]
    assert made[0].segment["video_id"] == "film"
    for stimulus in made:
        assert stimulus.status == "ready", stimulus.processing_error
        assert stimulus.duration_s == pytest.approx(3.0, abs=0.15)
    assert ExpertLabel.objects.get(stimulus=made[2]).value == [12, 17]


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"keyframe": ""}, "needs its keyframe"),
        ({"x1": "1.5"}, "x1 must lie in [0, 1]"),
        ({"x1": "0.6", "x2": "0.5"}, "x1 < x2"),
        ({"role": "golden"}, "needs the experts' labels: expert_actions"),
        ({"role": "golden", "expert_actions": "12|999"}, "names 999, not in the study's"),
        ({"expert_actions": "12"}, "a stimulus row takes no expert_actions"),
        # labels no proposer could give all of: a golden or qualification segment that
        # every proposer would fail
        (
            {"role": "qualification", "expert_actions": "11|12|14"},
            "gives 3 of Pose (11, 12, 14): a proposer may give at most 1",
        ),
        ({"role": "tutorial", "expert_actions": "17|80"}, "gives none of Pose, which is required"),
    ],
)
def test_a_bad_segment_row_is_refused_with_its_line(tmp_path, row, message):
    tiny = tiny_propose_study(stimuli=0)
    write_video(tmp_path / "film.mp4", "film bytes")
    fields = {"path": "film.mp4", "role": "stimulus", "keyframe": "2", **row}
    manifest = write_rows(tmp_path, [box(**fields)])
    with pytest.raises(ImportFailed) as refused:
        study_import_manifest(study=tiny.study, manifest=manifest)
    assert any(line == 2 and message in text for line, text in refused.value.errors), (
        refused.value.errors
    )


def test_a_proposers_participation_is_unaffected_by_verify_items():
    tiny = tiny_propose_study()
    client, user = proposer(tiny)
    participation = Participation.objects.get(rater__user=user)
    assert participation.qualification_state == "passed"


def test_settings_that_could_keep_no_label_are_refused():
    from django.core.exceptions import ValidationError

    tiny = tiny_propose_study()
    chosen = settings_of(tiny.study)
    chosen.keep_at_least, chosen.verifiers_per_item, chosen.max_labels = 3, 2, 0
    with pytest.raises(ValidationError) as refused:
        chosen.full_clean()
    assert set(refused.value.message_dict) == {"keep_at_least", "max_labels"}


@pytest.mark.django_db(transaction=True)
def test_two_raters_starting_at_once_never_both_take_a_one_proposer_session():
    # given: one proposer, two verifiers a segment; two qualified raters
    from django.utils import timezone

    from annotation.services.session_start import assignment_start_next
    from tests.factories import RaterFactory

    tiny = tiny_propose_study(proposers=1, verifiers=2)
    raters = [
        Participation.objects.create(
            rater=RaterFactory(), study=tiny.study, consent_at=timezone.now(),
            tutorial_done_at=timezone.now(),
            qualification_state=Participation.Qualification.PASSED,
        )
        for _ in range(2)
    ]  # fmt: skip
    barrier = threading.Barrier(2)
    errors = []

    def start(participation):
        try:
            barrier.wait()
            assignment_start_next(participation=participation)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    # when: both start at once
    threads = [threading.Thread(target=start, args=(p,)) for p in raters]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # then: the propose session went to one of them only
    assert errors == []
    propose = Session.objects.filter(
        study=tiny.study, items__item__dimension__key="propose", items__is_golden=False
    ).distinct()
    assert Assignment.objects.filter(session__in=propose).count() == 1


def test_experts_labels_before_any_vocabulary_say_to_import_one():
    from tests.annotation.design_fixtures import running_study

    study = running_study(design="propose_verify")
    row = {"keyframe": "2", "x1": "0.1", "y1": "0.1", "x2": "0.5", "y2": "0.9",
           "expert_actions": "12"}  # fmt: skip
    with pytest.raises(ValueError, match="no vocabulary yet: import one"):
        DESIGN.check_manifest_extra(study=study, role="golden", extra={"columns": row})
    # a row without the experts' labels is told that first, vocabulary or not
    row["expert_actions"] = ""
    with pytest.raises(ValueError, match="a golden row needs the experts' labels"):
        DESIGN.check_manifest_extra(study=study, role="golden", extra={"columns": row})


def test_segments_differing_past_six_digits_have_their_own_identity():
    from annotation.designs.propose_manifest import check_manifest_extra

    # given: a study and rows as a manifest gives them
    tiny = tiny_propose_study(stimuli=0)

    def identity(**columns) -> str:
        row = {"keyframe": "902", **box(), "person_id": "0", **columns}
        extra = {"columns": row, "answers": {}}
        return check_manifest_extra(study=tiny.study, role="stimulus", extra=extra)["identity"]

    # then: short where exact, as before (a manifest imported again names the same
    # segments), in full where six digits would merge two segments
    assert identity() == "902:0.1,0.2,0.5,0.9:0"
    assert identity(keyframe="12345.61") != identity(keyframe="12345.64")
    assert identity(keyframe="12345.61").startswith("12345.61:")
    assert identity(x1="0.1234561") != identity(x1="0.1234564")
    # and: a person id is a number, whatever its zeros
    assert identity(person_id="007") == identity(person_id="7")
