import html
import io
import re
from datetime import datetime, timedelta

import pytest
from django.contrib.auth.models import Group
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management.base import CommandError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.designs import design_of
from annotation.models import Answer, Assignment, Item, Participation, Payment, Stimulus, Study
from annotation.roles import RESEARCHERS_GROUP
from annotation.services.admin_actions import assignment_reopen, participation_exclude
from tests.annotation.rater_fixtures import answer, onboard, rater_client, tiny_study
from tests.factories import StimulusFactory, UserFactory, make_study

pytestmark = pytest.mark.django_db


def client_for(role: str):
    client = APIClient()
    if role == "anonymous":
        return client
    if role == "rater":
        client, _ = rater_client()
        return client
    user = UserFactory(is_staff=(role == "admin"))
    if role == "researcher":
        user.groups.add(Group.objects.get_or_create(name=RESEARCHERS_GROUP)[0])
    client.force_authenticate(user)
    return client


def started(tiny, answers: int = 2):
    client, user = rater_client()
    onboard(client, tiny)
    for _ in range(answers):
        item = client.get(tiny.base + "next/").json()["item"]["id"]
        client.post(tiny.base + "answers/", answer(item, 40.0), format="json")
    return client, Assignment.objects.get(rater__user=user)


def test_monitor_shows_each_assignment_live():
    tiny = tiny_study()
    _, assignment = started(tiny, answers=3)
    body = client_for("admin").get(f"/api/studies/{tiny.study.slug}/monitor/").json()
    row = body["assignments"][0]
    assert (row["id"], row["position"], row["length"], row["state"]) == (
        assignment.pk,
        3,
        8,
        "on_break",
    )
    assert row["rater"] == assignment.rater.pseudonym and 1 <= row["break_seconds_left"] <= 2
    assert body["progress"]["stimuli"] == 6
    assert body["progress"]["target_per_stimulus"] == 35


def test_progress_counts_only_the_items_raters_can_be_served():
    # given: 6 videos in a session, one of which then failed to transcode (an earlier
    # import's copy), and a video uploaded but not split into a session yet
    tiny = tiny_study()
    failed = Stimulus.objects.filter(study=tiny.study, role="stimulus").first()
    Stimulus.objects.filter(pk=failed.pk).update(status="failed")
    StimulusFactory(study=tiny.study)
    design_of(tiny.study).build_items(study=tiny.study)  # its item, in no session yet
    # when
    progress = client_for("admin").get(f"/api/studies/{tiny.study.slug}/progress/").json()
    # then: 5 videos can be served, not 7
    assert Item.objects.filter(study=tiny.study, role="stimulus").count() == 7
    assert progress["stimuli"] == 5


def test_pause_and_reopen_an_assignment():
    tiny = tiny_study(rest_every=0)
    rater, assignment = started(tiny)
    admin = client_for("admin")
    response = admin.post(f"/api/assignments/{assignment.pk}/pause/", {"reason": "odd timing"})
    assert response.json() == {"id": assignment.pk, "state": "paused"}
    paused = rater.get(tiny.base + "next/").json()
    assert (paused["step"], paused["item"]) == ("paused", None)
    current = Item.objects.get(pk=assignment.order[assignment.position])
    held = rater.post(tiny.base + "answers/", answer(str(current.public_id)), format="json")
    assert (held.status_code, held.json()["error"]) == (423, "paused")
    assert (
        admin.post(f"/api/assignments/{assignment.pk}/reopen/", {"reason": "ok"}).json()["state"]
        == "active"
    )
    item = rater.get(tiny.base + "next/").json()["item"]["id"]
    assert rater.post(tiny.base + "answers/", answer(item), format="json").status_code == 201


def test_a_reason_is_required():
    tiny = tiny_study()
    _, assignment = started(tiny)
    response = client_for("admin").post(f"/api/assignments/{assignment.pk}/pause/", {})
    assert response.status_code == 400
    assert Assignment.objects.get().state == "active"


def test_exclude_a_rater():
    tiny = tiny_study(rest_every=0)
    rater, assignment = started(tiny)
    client_for("admin").post(
        f"/api/assignments/{assignment.pk}/exclude-rater/", {"reason": "line clicking"}
    )
    assert Assignment.objects.get().state == "excluded"
    assert rater.get(tiny.base + "state/").json()["step"] == "not_eligible"


def test_exclude_one_session_stops_it_and_records_who_and_why():
    # given: a rater rating
    tiny = tiny_study(rest_every=0)
    rater, assignment = started(tiny)
    admin = client_for("admin")
    # when
    response = admin.post(f"/api/assignments/{assignment.pk}/exclude/", {"reason": "asleep"})
    # then: the session stops, the rater is not excluded from the study
    assert response.json() == {"id": assignment.pk, "state": "excluded"}
    excluded = Assignment.objects.get()
    assert (excluded.state, excluded.admin_note, excluded.excluded_by_id) == (
        "excluded",
        "asleep",
        admin.handler._force_user.pk,
    )
    assert Participation.objects.get().is_excluded is False
    item = str(Item.objects.get(pk=assignment.order[assignment.position]).public_id)
    refused = rater.post(tiny.base + "answers/", answer(item), format="json")
    assert refused.status_code == 403
    # and a second exclusion is a conflict, nothing changed
    again = admin.post(f"/api/assignments/{assignment.pk}/exclude/", {"reason": "twice"})
    assert again.status_code == 409
    assert Assignment.objects.get().admin_note == "asleep"


def test_reopening_an_excluded_assignment_lifts_the_exclusion(caplog):
    # given: a rater excluded in the middle of their session
    tiny = tiny_study(rest_every=0)
    rater, assignment = started(tiny)
    admin = client_for("admin")
    admin.post(f"/api/assignments/{assignment.pk}/exclude-rater/", {"reason": "line clicking"})
    # when: the admin reopens it
    response = admin.post(f"/api/assignments/{assignment.pk}/reopen/", {"reason": "my mistake"})
    # then: the rater continues, and the monitor and the log say so
    assert response.json() == {"id": assignment.pk, "state": "active"}
    participation = Participation.objects.get()
    assert (participation.is_excluded, participation.excluded_reason) == (False, "")
    assert rater.get(tiny.base + "state/").json()["step"] == "rating"
    item = rater.get(tiny.base + "next/").json()["item"]["id"]
    assert rater.post(tiny.base + "answers/", answer(item), format="json").status_code == 201
    row = admin.get(f"/api/studies/{tiny.study.slug}/monitor/").json()["assignments"][0]
    assert (row["state"], row["rater_excluded"], row["rater_excluded_reason"]) == (
        "active",
        False,
        "",
    )
    assert "lifted the exclusion" in caplog.text and "line clicking" in caplog.text


def test_an_excluded_session_is_not_reopened_beside_the_one_the_rater_moved_on_to(caplog):
    # given: a session excluded, and the rater on to their next one, an item on their page
    tiny = tiny_study(stimuli=12, rest_every=0)
    rater, first = started(tiny, answers=2)
    admin = client_for("admin")
    admin.post(f"/api/assignments/{first.pk}/exclude/", {"reason": "odd"}, format="json")
    item = rater.get(tiny.base + "next/").json()["item"]["id"]
    assert rater.post(tiny.base + "answers/", answer(item), format="json").status_code == 201
    held = rater.get(tiny.base + "next/").json()["item"]["id"]
    # when: the admin reopens the excluded one
    response = admin.post(f"/api/assignments/{first.pk}/reopen/", {"reason": "mistake"})
    # then: refused (before, two sessions were active, and the rater was switched back
    # to the first mid-session, the held answer refused); the rater goes on
    assert response.status_code == 409
    assert "moved on to session" in response.json()["detail"]
    assert Assignment.objects.get(pk=first.pk).state == "excluded"
    assert Assignment.objects.filter(state="active").count() == 1
    assert rater.post(tiny.base + "answers/", answer(held), format="json").status_code == 201
    assert "tried to reopen" in caplog.text


def locked_tables(queries: CaptureQueriesContext) -> list[str]:
    """The tables whose rows the queries lock (SELECT ... FOR UPDATE, UPDATE), each named
    once, in the order of their first lock."""
    tables = []
    for query in queries.captured_queries:
        sql = query["sql"]
        if sql.startswith("UPDATE "):
            table = re.match(r'UPDATE "(\w+)"', sql)[1]
        elif " FOR UPDATE" in sql:
            table = re.search(r'\bFROM "(\w+)"', sql)[1]
        else:
            continue
        if table not in tables:
            tables.append(table)
    return tables


def test_exclusion_and_reopening_lock_the_participation_before_the_assignment():
    """Taken in opposite orders, an exclusion and a reopen of one rater at the same moment
    could each hold the row the other waits for (a deadlock)."""
    # given: a rater in the middle of their session
    tiny = tiny_study(rest_every=0)
    _, assignment = started(tiny)
    participation = Participation.objects.get()
    admin = UserFactory(is_staff=True)
    # when
    with CaptureQueriesContext(connection) as exclusion:
        participation_exclude(participation=participation, reason="line clicking", by=admin)
    with CaptureQueriesContext(connection) as reopening:
        assignment_reopen(assignment=assignment, reason="my mistake", by=admin)
    # then
    order = ["annotation_participation", "annotation_assignment"]
    assert (locked_tables(exclusion), locked_tables(reopening)) == (order, order)
    assert (Participation.objects.get().is_excluded, Assignment.objects.get().state) == (
        False,
        "active",
    )


def test_the_monitor_shows_that_a_finished_rater_was_excluded():
    # given: a rater who finished their session
    tiny = tiny_study(rest_every=0)
    _, assignment = started(tiny, answers=8)
    assert Assignment.objects.get().state == "finished"
    admin = client_for("admin")
    # when: they are excluded afterwards
    admin.post(f"/api/assignments/{assignment.pk}/exclude-rater/", {"reason": "cheat"})
    # then: the finished row carries the exclusion
    row = admin.get(f"/api/studies/{tiny.study.slug}/monitor/").json()["assignments"][0]
    assert (row["state"], row["rater_excluded"], row["rater_excluded_reason"]) == (
        "finished",
        True,
        "cheat",
    )


def test_the_monitor_takes_a_fixed_number_of_queries(django_assert_num_queries):
    tiny = tiny_study(rest_every=0)
    for _ in range(3):
        started(tiny)
    admin = client_for("admin")
    for assignment in Assignment.objects.all()[:2]:
        admin.post(f"/api/assignments/{assignment.pk}/exclude-rater/", {"reason": "x"})
    with django_assert_num_queries(6):
        body = admin.get(f"/api/studies/{tiny.study.slug}/monitor/").json()
    assert sorted(row["rater_excluded"] for row in body["assignments"]) == [False, True, True]


def test_the_monitor_counts_progress_in_regular_answers_and_times_each_session():
    # given: three raters who answered 4 items each (hidden golden ones among them), the
    # first of them two hours ago, 30 s apart
    tiny = tiny_study(rest_every=0)
    for _ in range(3):
        started(tiny, answers=4)
    first = Assignment.objects.order_by("pk").first()
    two_hours_ago = timezone.now() - timedelta(hours=2)
    answered = Answer.objects.filter(assignment=first).order_by("pk").values_list("pk", flat=True)
    for k, pk in enumerate(answered):
        Answer.objects.filter(pk=pk).update(received_at=two_hours_ago + timedelta(seconds=30 * k))
    regular = Answer.objects.filter(item__role="stimulus", assignment__isnull=False)
    admin = client_for("admin")
    # when
    monitor = admin.get(f"/api/studies/{tiny.study.slug}/monitor/").json()
    progress = admin.get(f"/api/studies/{tiny.study.slug}/progress/").json()
    # then: progress counts the regular answers, the last hour's apart
    without_now = {k: v for k, v in progress.items() if k != "expected_finish"}
    assert without_now == {k: monitor["progress"][k] for k in without_now}
    answers, recent = regular.count(), regular.exclude(assignment=first).count()
    assert Answer.objects.count() > answers > recent > 0
    stimuli = Item.objects.filter(study=tiny.study, role="stimulus").count()
    target = tiny.study.target_raters_per_stimulus
    assert (progress["answers"], progress["answers_last_hour"]) == (answers, recent)
    assert progress["stimuli"] == stimuli
    assert progress["answers_per_stimulus"] == round(answers / stimuli, 2)
    finish = datetime.fromisoformat(progress["expected_finish"])
    expected = timezone.now() + timedelta(hours=(stimuli * target - answers) / recent)
    assert abs((finish - expected).total_seconds()) < 60
    # and each session's pace: the span of its answers over the items answered
    paces = {row["id"]: row["seconds_per_stimulus"] for row in monitor["assignments"]}
    assert paces[first.pk] == 30.0


@pytest.mark.parametrize(("field", "limit"), [("action_class", 60), ("source_model", 120)])
def test_an_upload_with_a_label_too_long_for_its_field_is_refused(field, limit):
    # given
    study = make_study()
    video = SimpleUploadedFile("clip.mp4", b"not probed: the labels are checked first")
    # when
    response = client_for("admin").post(
        f"/api/studies/{study.slug}/stimuli/",
        {"file": video, field: "y" * (limit + 1)},
        format="multipart",
    )
    # then: a 400 naming the field, not a database error
    assert response.status_code == 400
    refusal = f"Ensure this field has no more than {limit} characters."
    assert response.json() == {
        "error": "invalid",
        "detail": f"{field}: {refusal}",
        "fields": {field: [refusal]},
    }
    assert Stimulus.objects.count() == 0


def test_approve_a_payment_once():
    tiny = tiny_study(rest_every=0)
    _, assignment = started(tiny, answers=8)
    payment = Payment.objects.get(assignment=assignment)
    admin = client_for("admin")
    first = admin.post(f"/api/payments/{payment.pk}/decision/", {"approve": True})
    second = admin.post(f"/api/payments/{payment.pk}/decision/", {"approve": False})
    assert first.json() == {"id": payment.pk, "status": "approved"}
    assert second.status_code == 409
    assert Payment.objects.get().status == "approved"


@pytest.mark.parametrize("fmt", ["multipart", "json"])
@pytest.mark.parametrize("body", [{"note": "looks fine"}, {"aprove": "true"}])
def test_a_decision_without_approve_is_refused_in_a_form_body_too(fmt, body):
    # given: a pending payment (before, a form body without approve rejected it, for good)
    tiny = tiny_study(rest_every=0)
    _, assignment = started(tiny, answers=8)
    payment = Payment.objects.get(assignment=assignment)
    admin = client_for("admin")
    # when
    response = admin.post(f"/api/payments/{payment.pk}/decision/", body, format=fmt)
    # then: a 400 naming approve, and the payment still pending, to be decided
    assert response.status_code == 400
    assert response.json()["fields"] == {"approve": ["This field is required."]}
    assert Payment.objects.get().status == "pending"
    decided = admin.post(f"/api/payments/{payment.pk}/decision/", {"approve": "true"})
    assert decided.json() == {"id": payment.pk, "status": "approved"}


STAFF_ENDPOINTS = [
    ("get", "/api/studies/", {"anonymous": 403, "rater": 403, "researcher": 200, "admin": 200}),
    (
        "get",
        "/api/studies/{slug}/progress/",
        {"anonymous": 403, "rater": 403, "researcher": 200, "admin": 200},
    ),
    (
        "get",
        "/api/studies/{slug}/monitor/",
        {"anonymous": 403, "rater": 403, "researcher": 403, "admin": 200},
    ),
    (
        "post",
        "/api/assignments/{assignment}/pause/",
        {"anonymous": 403, "rater": 403, "researcher": 403, "admin": 200},
    ),
    (
        "post",
        "/api/payments/999999/decision/",
        {"anonymous": 403, "rater": 403, "researcher": 403, "admin": 404},
    ),
]


@pytest.mark.parametrize(("method", "url", "expected"), STAFF_ENDPOINTS)
@pytest.mark.parametrize("role", ["anonymous", "rater", "researcher", "admin"])
def test_permission_matrix(method, url, expected, role):
    tiny = tiny_study()
    _, assignment = started(tiny)
    client = client_for(role)
    url = url.format(slug=tiny.study.slug, assignment=assignment.pk)
    data = {"reason": "check", "approve": True}
    response = getattr(client, method)(url, data, format="json")
    assert response.status_code == expected[role], response.content


def test_stimuli_in_no_session_are_split_into_sessions_on_request():
    # given: a study whose three videos came by upload (in no session yet)
    study = make_study(session_size=2, golden_per_session=0)
    StimulusFactory.create_batch(3, study=study)
    admin = client_for("admin")
    # when
    first = admin.post(f"/api/studies/{study.slug}/sessions/")
    again = admin.post(f"/api/studies/{study.slug}/sessions/")
    # then: two sessions (2 + 1), and nothing more the second time
    assert first.status_code == 201
    assert first.json() == {
        "created": [{"index": 1, "stimuli": 2}, {"index": 2, "stimuli": 1}],
        "golden_added": 0,
    }
    assert (again.status_code, again.json()) == (200, {"created": [], "golden_added": 0})
    assert study.sessions.count() == 2


def test_build_sessions_command_and_admin_action():
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.test import Client

    study = make_study(session_size=2, golden_per_session=0)
    StimulusFactory.create_batch(2, study=study)
    out = io.StringIO()
    call_command("build_sessions", study.slug, stdout=out)
    assert out.getvalue().strip() == f"{study.slug}: 1 new session(s) (1)"
    StimulusFactory.create_batch(1, study=study)
    superuser = User.objects.create_superuser("boss", password="x")
    client = Client()
    client.force_login(superuser)
    response = client.post(
        "/admin/annotation/study/",
        {"action": "build_sessions", "_selected_action": [study.pk]},
        follow=True,
    )
    assert f"{study.name}: 1 new session(s)" in response.content.decode()
    assert list(study.sessions.order_by("index").values_list("index", flat=True)) == [1, 2]
    with pytest.raises(CommandError, match="no study 'nope'"):
        call_command("build_sessions", "nope")


def test_pairs_that_compare_nothing_are_reported_by_the_command_the_action_and_the_api():
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.test import Client

    from annotation.models import PreferenceSettings

    # given: a preference study whose saved pairs compare a condition with itself
    study = make_study(design="preference", golden_per_session=0)
    for condition in ("model-a", "model-b"):
        StimulusFactory(study=study, condition=condition, content="c1")
    PreferenceSettings.objects.create(study=study, condition_pairs="model-b, model-b")
    said = "'model-b' is compared with itself"
    # then: the command fails with the line to mend
    with pytest.raises(CommandError, match=said):
        call_command("build_sessions", study.slug)
    # and the admin action says it as an error, where it was a server error
    client = Client()
    client.force_login(User.objects.create_superuser("boss", password="x"))
    response = client.post(
        "/admin/annotation/study/",
        {"action": "build_sessions", "_selected_action": [study.pk]},
        follow=True,
    )
    assert response.status_code == 200 and said in html.unescape(response.content.decode())
    # and the API answers 400 with it
    refused = client_for("admin").post(f"/api/studies/{study.slug}/sessions/")
    assert refused.status_code == 400 and said in refused.json()["detail"]
    assert not study.sessions.exists()


@pytest.mark.parametrize("design", ["slider", "preference"])
def test_an_admin_creates_a_study_of_a_design(design):
    # when
    response = client_for("admin").post(
        "/api/studies/", {"name": "New", "slug": f"new-{design}", "design": design}, format="json"
    )
    # then: the study, with its design's questions; researchers may not create one
    assert (response.status_code, response.json()["design"]) == (201, design)
    study = Study.objects.get(slug=f"new-{design}")
    keys = list(study.dimensions.values_list("key", flat=True))
    expected = {
        "slider": ["subject", "completeness", "interaction"],
        "preference": ["video_quality"],
    }
    assert keys == expected[design]
    refused = client_for("researcher").post(
        "/api/studies/", {"name": "X", "slug": "x", "design": design}, format="json"
    )
    assert refused.status_code == 403 and not Study.objects.filter(slug="x").exists()


@pytest.mark.parametrize("fmt", ["json", "multipart"])
def test_a_setting_a_new_study_does_not_take_is_refused_not_ignored(fmt):
    # before, 201 with session_size 300: the admin was never told
    body = {"name": "X", "slug": "x", "session_size": 5}
    response = client_for("admin").post("/api/studies/", body, format=fmt)
    assert response.status_code == 400 and not Study.objects.filter(slug="x").exists()
    assert list(response.json()["fields"]) == ["session_size"]
    assert "edited in the admin" in response.json()["detail"]


def test_a_study_of_an_unknown_design_is_refused_naming_the_designs():
    response = client_for("admin").post(
        "/api/studies/", {"name": "X", "slug": "x", "design": "prefernce"}, format="json"
    )
    assert response.status_code == 400 and not Study.objects.filter(slug="x").exists()
    assert response.json()["detail"] == (
        "design: unknown design 'prefernce'; the designs are: "
        "preference, propose_verify, questionnaire, ranking, slider"
    )
