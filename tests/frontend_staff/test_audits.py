"""The expert audit pages of questionnaire studies (docs/admins.md, "Questionnaire
labelling"): who may open them, what they show (the plan's operating characteristic,
the rater's answers in the questions' terms) and what deciding through them does."""

from __future__ import annotations

import os
import re

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from scipy.stats import binom

from annotation.designs.questionnaire_study import settings_of
from annotation.models import (
    Answer,
    Assignment,
    BatchAudit,
    Dimension,
    ExpertLabel,
    Item,
    Participation,
    Payment,
)
from annotation.roles import RESEARCHERS_GROUP
from annotation.services.admin_actions import participation_exclude
from annotation.services.session_start import assignment_start_next
from tests.annotation.design_fixtures import Answerer, tiny_questionnaire_study
from tests.annotation.rater_fixtures import consent_and_tutorial, rater_client
from tests.annotation.test_journey import take_test_and_session
from tests.annotation.test_questionnaire_design import run_at_once
from tests.factories import UserFactory
from tests.live_requests import close_context

pytestmark = pytest.mark.django_db

# Playwright's sync API keeps an event loop in the test thread; the ORM calls the browser
# test makes beside it are synchronous (as in tests/frontend/conftest.py).
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

OC_RATES = (0.01, 0.02, 0.05, 0.10, 0.20)


def finished_batch(tiny, *, right: bool = True) -> Assignment:
    client, user = rater_client()
    take_test_and_session(client, tiny, Answerer("questionnaire"), golden_right=right)
    return Assignment.objects.get(rater__user=user)


def small_plan(tiny, *, n: int = 3, c: int = 1) -> None:
    plan = settings_of(tiny.study)
    plan.audit_sample_size, plan.audit_acceptance_number = n, c
    plan.save()


def staff_client(name: str = "expert", *, role: str = "admin") -> tuple[Client, User]:
    user = UserFactory(username=name, is_staff=role == "admin")
    if role == "researcher":
        user.groups.add(Group.objects.get_or_create(name=RESEARCHERS_GROUP)[0])
    if role == "rater":
        rater_client(user)
    client = Client()
    client.force_login(user)
    return client, user


def audit_url(batch: Assignment) -> str:
    return f"/studies/{batch.session.study.slug}/audits/{batch.pk}/"


def form(audit: BatchAudit, *, wrong: int, reason: str = "", skip: int = 0) -> dict:
    """The audit form as an expert fills it: the first `wrong` sampled videos wrong, the
    last `skip` without a verdict."""
    data = {"reason": reason}
    for index, item in enumerate(audit.sample):
        data[f"note-{item}"] = f"note {index}"
        if index < len(audit.sample) - skip:
            data[f"verdict-{item}"] = "wrong" if index < wrong else "right"
    return data


def qualified_newcomer(tiny) -> Participation:
    """A rater who passed the qualification and has no session yet."""
    client, user = rater_client()
    consent_and_tutorial(client, tiny)
    while (body := client.get(tiny.base + "next/").json())["step"] == "qualification":
        client.post(
            tiny.base + "answers/", Answerer("questionnaire").answer(body["item"]), format="json"
        )
    return Participation.objects.get(rater__user=user, study=tiny.study)


# --- permissions ------------------------------------------------------------------------


@pytest.mark.parametrize(("role", "status"), [("rater", 403), ("researcher", 403), ("admin", 200)])
def test_only_admins_open_and_decide_audits(role, status):
    # given
    tiny = tiny_questionnaire_study()
    batch = finished_batch(tiny)
    client, _ = staff_client(role=role)
    # when
    queue = client.get(f"/studies/{tiny.study.slug}/audits/")
    page = client.get(audit_url(batch))
    decided = client.post(audit_url(batch), {"reason": "x"})
    # then: refused roles leave no audit behind; the admin's bad form changes nothing
    assert (queue.status_code, page.status_code) == (status, status)
    if status == 403:
        assert decided.status_code == 403
        assert not BatchAudit.objects.exists()
    else:
        assert decided.status_code == 400
        assert BatchAudit.objects.get().verdict == ""


def test_anonymous_users_are_sent_to_sign_in(client):
    tiny = tiny_questionnaire_study()
    response = client.get(f"/studies/{tiny.study.slug}/audits/")
    assert response.status_code == 302 and response.url.startswith("/accounts/login/")


def test_only_questionnaire_studies_and_their_own_batches_have_audit_pages():
    from tests.annotation.rater_fixtures import tiny_study

    slider = tiny_study()
    tiny = tiny_questionnaire_study()
    batch = finished_batch(tiny)
    client, _ = staff_client()
    assert client.get(f"/studies/{slider.study.slug}/audits/").status_code == 404
    assert client.get(f"/studies/{slider.study.slug}/audits/{batch.pk}/").status_code == 404
    assert not BatchAudit.objects.exists()


def test_the_studies_and_home_pages_link_the_audits_of_questionnaire_studies_for_admins():
    from tests.annotation.rater_fixtures import tiny_study

    slider, tiny = tiny_study(), tiny_questionnaire_study()
    admin, _ = staff_client()
    researcher, _ = staff_client("reader", role="researcher")
    body = admin.get("/studies/").content.decode()
    assert f"/studies/{tiny.study.slug}/audits/" in body
    # the links' column is named for a screen reader, though its header shows nothing
    assert '<th><span class="visually-hidden">Actions</span></th>' in body
    assert f"/studies/{slider.study.slug}/audits/" not in body
    assert "/audits/" not in researcher.get("/studies/").content.decode()
    # and the home page, where both studies run
    home = admin.get("/").content.decode()
    assert f"/studies/{tiny.study.slug}/audits/" in home
    assert f"/studies/{slider.study.slug}/audits/" not in home


# --- the queue ---------------------------------------------------------------------------


def test_the_queue_lists_finished_batches_then_the_decided_ones():
    # given: two sessions of two videos, each finished by a rater; an unfinished third
    tiny = tiny_questionnaire_study(session_size=2)
    small_plan(tiny, n=2, c=0)
    first, second = finished_batch(tiny), finished_batch(tiny)
    client, _ = staff_client()
    url = f"/studies/{tiny.study.slug}/audits/"
    body = client.get(url).content.decode()
    assert 'id="queue-count">(2)' in body
    assert body.count('<th><span class="visually-hidden">Actions</span></th>') == 1
    assert f'data-assignment="{first.pk}"' in body and f'data-assignment="{second.pk}"' in body
    assert "(0 accepted · 0 rejected)" in body
    assert "accepted when at most 0 of them are wrong." in body
    # when: the first is rejected through its page
    client.get(audit_url(first))
    audit = BatchAudit.objects.get(assignment=first)
    response = client.post(audit_url(first), form(audit, wrong=1, reason="tags missing"))
    assert response.status_code == 302
    # then: it left the queue for the history, with its verdict, auditor and reason
    body = client.get(url).content.decode()
    assert 'id="queue-count">(1)' in body
    assert "(0 accepted · 1 rejected)" in body
    history = body.split('id="audit-history"')[1]
    assert f'data-assignment="{first.pk}"' in history
    assert "Rejected" in history and "tags missing" in history and "expert" in history
    assert f'data-assignment="{second.pk}"' not in history


def test_the_queue_passes_over_batches_that_no_longer_count():
    # given: three sessions; one batch passes its gate, one fails it, one is an
    # excluded rater's
    tiny = tiny_questionnaire_study(session_size=2, stimuli=6)
    passed = finished_batch(tiny)
    failed = finished_batch(tiny, right=False)
    excluded = finished_batch(tiny)
    participation = Participation.objects.get(rater_id=excluded.rater_id, study=tiny.study)
    participation_exclude(participation=participation, reason="spam", by=UserFactory())
    client, _ = staff_client()
    # when
    body = client.get(f"/studies/{tiny.study.slug}/audits/").content.decode()
    # then: only the batch that counts waits for an expert; the page says why two do not
    assert failed.eligible_for_next is False
    assert 'id="queue-count">(1)' in body and f'data-assignment="{passed.pk}"' in body
    assert f'data-assignment="{failed.pk}"' not in body
    assert f'data-assignment="{excluded.pk}"' not in body
    assert "2 finished batches are not listed" in " ".join(body.split())
    # and a study that keeps failed-gate sessions has that batch audited
    tiny.study.keep_failed_gate_sessions = True
    tiny.study.save(update_fields=["keep_failed_gate_sessions"])
    body = client.get(f"/studies/{tiny.study.slug}/audits/").content.decode()
    assert 'id="queue-count">(2)' in body and f'data-assignment="{failed.pk}"' in body
    assert "1 finished batch is not listed" in " ".join(body.split())


def test_a_simulated_raters_batch_is_marked_so_in_the_queue_and_in_the_history():
    # given: a simulated rater's finished batch (the demo's)
    tiny = tiny_questionnaire_study()
    small_plan(tiny, n=2, c=0)
    batch = finished_batch(tiny)
    batch.rater.is_simulated = True
    batch.rater.save(update_fields=["is_simulated"])
    client, _ = staff_client()
    url = f"/studies/{tiny.study.slug}/audits/"
    queue = client.get(url).content.decode().split('id="audit-queue"')[1]
    assert '<span class="tag">simulated</span>' in queue
    # when: it is decided
    client.get(audit_url(batch))
    audit = BatchAudit.objects.get(assignment=batch)
    client.post(audit_url(batch), form(audit, wrong=0))
    # then: the history says so too
    history = client.get(url).content.decode().split('id="audit-history"')[1]
    assert f'data-assignment="{batch.pk}"' in history
    assert '<span class="tag">simulated</span>' in history


# --- the audit page ----------------------------------------------------------------------


def test_the_page_shows_the_plan_and_its_operating_characteristic():
    # given: plan n=3, c=1 over a batch of 4 regular videos
    tiny = tiny_questionnaire_study()
    small_plan(tiny, n=3, c=1)
    batch = finished_batch(tiny)
    client, _ = staff_client()
    # when
    body = client.get(audit_url(batch)).content.decode()
    # then: P(accept) at each defect rate is the binomial cdf at c
    assert 'id="plan-n">3<' in body and 'id="plan-c">1<' in body
    assert "accepted when at most 1 of them is wrong, and rejected otherwise" in body
    cells = re.findall(r'data-defects="([^"]+)" data-accept="([^"]+)">([^<]+)<', body)
    assert [defects for defects, _, _ in cells] == ["1%", "2%", "5%", "10%", "20%"]
    for (_, exact, shown), rate in zip(cells, OC_RATES, strict=True):
        assert float(exact) == pytest.approx(binom.cdf(1, 3, rate), abs=1e-12)
        assert shown == f"{binom.cdf(1, 3, rate):.1%}"
    assert "all of them are checked" not in body


def test_the_sample_is_drawn_once_for_every_expert_and_a_small_batch_is_checked_whole():
    # given: the default plan (n=8) over a batch of 4 regular videos
    tiny = tiny_questionnaire_study()
    batch = finished_batch(tiny)
    first, _ = staff_client("first")
    second, _ = staff_client("second")
    # when
    pages = [first.get(audit_url(batch)).content.decode(), second.get(audit_url(batch))]
    # then
    audit = BatchAudit.objects.get()
    regular = Item.objects.filter(pk__in=batch.order, role="stimulus")
    assert sorted(audit.sample) == sorted(regular.values_list("pk", flat=True))
    assert "This batch has only 4 regular videos: all of them are checked" in pages[0]
    for item in audit.sample:
        assert f'id="video-{item}"' in pages[1].content.decode()


def test_the_page_shows_each_sampled_video_with_the_raters_answers_in_the_questions_terms():
    # given: a batch answered wrongly throughout, one sampled video with experts' answers
    tiny = tiny_questionnaire_study()
    batch = finished_batch(tiny, right=False)
    client, _ = staff_client()
    client.get(audit_url(batch))
    audit = BatchAudit.objects.get()
    videos = {item: Item.objects.get(pk=item).members.get().stimulus for item in audit.sample}
    item, video = next((i, v) for i, v in videos.items() if not v.asked_questions)
    level = Dimension.objects.get(study=tiny.study, key="object_text")
    ExpertLabel.objects.create(stimulus=video, dimension=level, value=3, note="the vase is there")
    # when
    body = client.get(audit_url(batch)).content.decode()
    # then: the video, its prompt, the answers as the question names them
    section = body.split(f'id="video-{item}"')[1].split("</section>")[0]
    assert f'src="/media/v/{video.public_id}/"' in section
    # the video is named by its heading ("Video 2 of 4")
    assert f'aria-labelledby="video-{item}-title"' in section
    assert f'<h3 id="video-{item}-title">Video ' in section
    assert video.prompt in section
    assert "0 (scale 0–10)" in section
    assert "1 · Completely inconsistent" in section
    assert "Hard Light, Diffused Light" in section
    assert "(no comment)" in section
    assert "Experts' answer" in section
    assert "3 · Fully consistent" in section and "the vase is there" in section
    assert section.count('type="radio"') == 2
    # its verdict and note are named with its number, not alike for every video
    number = re.search(r"Video (\d+) of 4", section).group(1)
    assert f"<legend>The rater's answers to video {number} are</legend>" in section
    assert f'<label class="note">Note on video {number}' in section


# --- deciding ---------------------------------------------------------------------------


@pytest.mark.parametrize(("wrong", "verdict"), [(0, "accepted"), (1, "accepted"), (2, "rejected")])
def test_deciding_through_the_page_follows_the_plan(wrong, verdict):
    # given: plan n=3, c=1
    tiny = tiny_questionnaire_study()
    small_plan(tiny, n=3, c=1)
    batch = finished_batch(tiny)
    client, user = staff_client()
    client.get(audit_url(batch))
    audit = BatchAudit.objects.get()
    # when
    response = client.post(audit_url(batch), form(audit, wrong=wrong))
    # then
    assert response.status_code == 302 and response.url == audit_url(batch)
    audit.refresh_from_db()
    assert (audit.verdict, audit.wrong, audit.auditor) == (verdict, wrong, user)
    assert [f["wrong"] for f in audit.findings] == [i < wrong for i in range(3)]
    assert [f["note"] for f in audit.findings] == ["note 0", "note 1", "note 2"]
    batch.refresh_from_db()
    assert batch.state == ("excluded" if verdict == "rejected" else "finished")
    payment = Payment.objects.get(assignment=batch)
    assert payment.status == ("rejected" if verdict == "rejected" else "pending")


def test_a_rejection_excludes_the_batch_rejects_its_payment_and_requeues_its_session():
    # given: one rater per video: the session is full once its batch is finished
    tiny = tiny_questionnaire_study()
    small_plan(tiny, n=3, c=1)
    batch = finished_batch(tiny)
    answers = Answer.objects.filter(assignment=batch).count()
    newcomer = qualified_newcomer(tiny)
    assert assignment_start_next(participation=newcomer) is None
    client, user = staff_client()
    client.get(audit_url(batch))
    audit = BatchAudit.objects.get()
    # when
    client.post(audit_url(batch), form(audit, wrong=3, reason="levels guessed"))
    # then: answers kept but excluded with the reason, payment rejected with it
    batch.refresh_from_db()
    reason = "batch rejected in its audit: levels guessed"
    assert (batch.state, batch.admin_note, batch.excluded_by) == ("excluded", reason, user)
    assert Answer.objects.filter(assignment=batch).count() == answers
    payment = Payment.objects.get(assignment=batch)
    assert (payment.status, payment.note) == ("rejected", reason)
    # and the session goes to the newcomer
    started = assignment_start_next(participation=newcomer)
    assert started is not None and started.session_id == batch.session_id
    # and the decided page is read-only, with what was decided
    body = client.get(audit_url(batch)).content.decode()
    assert 'id="audit-form"' not in body and 'type="radio"' not in body
    assert "3 of 3 sampled videos wrong. Decided by expert at" in body
    assert "levels guessed" in body and "note 2" in body


def test_a_batch_rejected_in_its_audit_is_not_reopened_from_the_monitor(caplog):
    from annotation.monitor import study_monitor

    # given: a rejected batch, and an admin-excluded one beside it
    tiny = tiny_questionnaire_study(raters_per_video=2)
    small_plan(tiny, n=3, c=1)
    rejected, excluded = finished_batch(tiny), finished_batch(tiny)
    client, _ = staff_client()
    client.get(audit_url(rejected))
    client.post(audit_url(rejected), form(BatchAudit.objects.get(), wrong=3, reason="guessed"))
    api = f"/api/assignments/{excluded.pk}/"
    assert client.post(api + "exclude/", {"reason": "rushed"}).status_code == 200
    # then: the monitor offers to reopen only the one an admin excluded
    rows = {row["id"]: row for row in study_monitor(study=tiny.study)["assignments"]}
    assert (rows[rejected.pk]["rejected_in_audit"], rows[excluded.pk]["rejected_in_audit"]) == (
        True,
        False,
    )
    # when: the rejected one is asked to reopen all the same
    refused = client.post(f"/api/assignments/{rejected.pk}/reopen/", {"reason": "oops"})
    # then: refused with the reason, logged, nothing changed; the other reopens
    assert refused.status_code == 409
    assert "rejected in its audit" in refused.json()["detail"]
    assert "tried to reopen assignment" in caplog.text
    rejected.refresh_from_db()
    assert rejected.state == "excluded"
    assert Payment.objects.get(assignment=rejected).status == "rejected"
    reopened = client.post(api + "reopen/", {"reason": "checked again"})
    assert reopened.json()["state"] == "finished"


def test_a_form_without_every_verdict_is_refused_and_keeps_what_was_typed():
    # given
    tiny = tiny_questionnaire_study()
    small_plan(tiny, n=3, c=1)
    batch = finished_batch(tiny)
    client, _ = staff_client()
    client.get(audit_url(batch))
    audit = BatchAudit.objects.get()
    # when: the last video has a note but no verdict
    response = client.post(audit_url(batch), form(audit, wrong=1, reason="my reason", skip=1))
    # then
    assert response.status_code == 400
    body = response.content.decode()
    assert "every sampled video needs a verdict: right or wrong" in body
    first, second, last = audit.sample
    assert f'name="verdict-{first}" value="wrong" checked' in body
    assert f'name="verdict-{second}" value="right" checked' in body
    assert f'name="verdict-{last}" value="right">' in body
    assert f'name="verdict-{last}" value="wrong">' in body
    assert f'id="video-{last}"' in body.split('class="card audit-video missing"')[1][:40]
    assert "note 2</textarea>" in body and "my reason</textarea>" in body
    audit.refresh_from_db()
    batch.refresh_from_db()
    assert (audit.verdict, batch.state) == ("", "finished")


def test_a_reason_too_long_is_refused_not_cut_short():
    # given: a batch to reject, and a reason past the limit (before: accepted, 302, and
    # cut to 2000 characters in the audit, the session's and the payment's notes)
    tiny = tiny_questionnaire_study()
    small_plan(tiny, n=3, c=0)
    batch = finished_batch(tiny)
    client, _ = staff_client()
    client.get(audit_url(batch))
    audit = BatchAudit.objects.get()
    # when
    response = client.post(audit_url(batch), form(audit, wrong=2, reason="r" * 1901))
    # then
    assert response.status_code == 400
    assert "a reason is a text of at most 1900 characters" in response.content.decode()
    audit.refresh_from_db()
    batch.refresh_from_db()
    assert (audit.verdict, batch.state) == ("", "finished")


def test_a_second_expert_deciding_a_decided_batch_is_told_and_changes_nothing():
    # given: one expert accepted the batch
    tiny = tiny_questionnaire_study()
    small_plan(tiny, n=3, c=1)
    batch = finished_batch(tiny)
    first, first_user = staff_client("first")
    second, _ = staff_client("second")
    second.get(audit_url(batch))  # the second expert has the form open
    audit = BatchAudit.objects.get()
    first.post(audit_url(batch), form(audit, wrong=0))
    # when: the second sends theirs, rejecting
    response = second.post(audit_url(batch), form(audit, wrong=3, reason="bad"))
    # then
    assert response.status_code == 409
    body = response.content.decode()
    assert "this batch was already audited: accepted by first at" in body
    assert 'id="audit-form"' not in body
    audit.refresh_from_db()
    batch.refresh_from_db()
    assert (audit.verdict, audit.auditor, audit.wrong) == ("accepted", first_user, 0)
    assert batch.state == "finished"
    assert Payment.objects.get(assignment=batch).status == "pending"


@pytest.mark.django_db(transaction=True)
def test_two_experts_submitting_at_once_leave_exactly_one_decision():
    # given
    tiny = tiny_questionnaire_study()
    small_plan(tiny, n=3, c=1)
    batch = finished_batch(tiny)
    first, _ = staff_client("first")
    second, _ = staff_client("second")
    first.get(audit_url(batch))
    audit = BatchAudit.objects.get()
    # when: one accepts, one rejects, at once
    responses = run_at_once(
        lambda: first.post(audit_url(batch), form(audit, wrong=0)),
        lambda: second.post(audit_url(batch), form(audit, wrong=3, reason="bad")),
    )
    # then
    statuses = sorted(response.status_code for response in responses)
    assert statuses == [302, 409], responses
    audit.refresh_from_db()
    batch.refresh_from_db()
    winner = "first" if responses[0].status_code == 302 else "second"
    assert audit.auditor.username == winner
    assert audit.verdict == ("accepted" if winner == "first" else "rejected")
    assert batch.state == ("finished" if winner == "first" else "excluded")
    loser = responses[1] if winner == "first" else responses[0]
    assert "this batch was already audited" in loser.content.decode()


def test_an_unfinished_batch_is_refused_with_its_reason():
    tiny = tiny_questionnaire_study()
    batch = finished_batch(tiny)
    Assignment.objects.filter(pk=batch.pk).update(state="active")
    client, _ = staff_client()
    response = client.get(audit_url(batch))
    assert response.status_code == 409
    assert "only a finished batch can be audited (this one is active)" in response.content.decode()
    assert not BatchAudit.objects.exists()


# --- the Django admin's log -------------------------------------------------------------


def test_the_admin_shows_audits_read_only():
    # given: a decided audit
    tiny = tiny_questionnaire_study()
    small_plan(tiny, n=3, c=1)
    batch = finished_batch(tiny)
    client, _ = staff_client()
    client.get(audit_url(batch))
    audit = BatchAudit.objects.get()
    client.post(audit_url(batch), form(audit, wrong=2, reason="levels guessed"))
    superuser = Client()
    superuser.force_login(UserFactory(is_staff=True, is_superuser=True))
    # when
    listing = superuser.get("/admin/annotation/batchaudit/").content.decode()
    change = superuser.get(f"/admin/annotation/batchaudit/{audit.pk}/change/")
    # then: listed with its verdict; shown, never editable
    assert "Rejected" in listing and "levels guessed" in listing
    assert change.status_code == 200
    page = change.content.decode()
    assert "levels guessed" in page and "note 1" in page
    assert 'name="reason"' not in page and 'name="verdict"' not in page
    assert superuser.get("/admin/annotation/batchaudit/add/").status_code == 403


# --- in Chromium -------------------------------------------------------------------------


@pytest.fixture
def audit_context(browser, tmp_path):
    """A Chromium page of 1280 x 900 that fails the test on any JavaScript error."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    context.set_default_timeout(15_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield context, page
    close_context(context)
    assert errors == [], f"JavaScript errors on the page: {errors}"


def with_clips(tiny, folder) -> None:
    """Every video of the study a real 0.5 s clip with a poster."""
    import subprocess

    from annotation.models import Stimulus
    from tests.frontend.conftest import Clip, attach_clip

    video, poster = folder / "clip.mp4", folder / "poster.png"
    source = "testsrc2=size=64x48:rate=10"
    subprocess.run(
        ["ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi", "-i", source, "-t", "0.5",
         "-pix_fmt", "yuv420p", "-c:v", "libx264", str(video)],
        check=True,
    )  # fmt: skip
    subprocess.run(
        ["ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi", "-i", source, "-frames:v", "1",
         str(poster)],
        check=True,
    )  # fmt: skip
    clip = Clip(video.read_bytes(), poster.read_bytes())
    for stimulus in Stimulus.objects.filter(study=tiny.study):
        attach_clip(stimulus, clip)


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_an_admin_audits_a_batch_on_the_page(live_server, audit_context, tmp_path, settings):
    # given: a finished batch of a study with plan n=3, c=1, and an admin signed in
    settings.MEDIA_ROOT = tmp_path / "media"
    context, page = audit_context
    tiny = tiny_questionnaire_study()
    with_clips(tiny, tmp_path)
    small_plan(tiny, n=3, c=1)
    batch = finished_batch(tiny)
    admin = UserFactory(username="auditor", is_staff=True)
    signed = Client()
    signed.force_login(admin)
    context.add_cookies(
        [{"name": "sessionid", "value": signed.cookies["sessionid"].value, "url": live_server.url}]
    )
    # when: the admin opens the batch from the queue
    page.goto(f"{live_server.url}/studies/{tiny.study.slug}/audits/")
    page.locator(f'#audit-queue tr[data-assignment="{batch.pk}"] a.button').click()
    page.locator("#operating-characteristic").wait_for()
    # then: the plan and what it guarantees, and three videos that play
    cells = page.locator("#operating-characteristic td")
    assert cells.all_inner_texts() == [f"{binom.cdf(1, 3, p):.1%}" for p in OC_RATES]
    videos = page.locator("section.audit-video")
    assert videos.count() == 3
    page.wait_for_function(
        "[...document.querySelectorAll('section.audit-video video')].every(v => v.readyState >= 1)"
    )
    # when: two verdicts and notes, the third forgotten
    sections = videos.all()
    sections[0].get_by_label("wrong").check()
    sections[0].locator("textarea").fill("levels guessed")
    sections[1].get_by_label("wrong").check()
    sections[1].locator("textarea").fill("tags missing")
    page.locator('textarea[name="reason"]').fill("answers at random")
    page.locator("#audit-submit").click()
    # then: refused, nothing typed lost, the forgotten video marked
    page.locator("#audit-error").wait_for()
    assert "every sampled video needs a verdict" in page.locator("#audit-error").inner_text()
    assert page.locator("section.audit-video.missing").count() == 1
    assert page.locator("section.audit-video textarea").first.input_value() == "levels guessed"
    assert page.locator('textarea[name="reason"]').input_value() == "answers at random"
    assert BatchAudit.objects.get().verdict == ""
    # when: the last verdict, and submit
    page.locator("section.audit-video.missing").get_by_label("right").check()
    page.locator("#audit-submit").click()
    # then: rejected by the plan (2 wrong > c=1), shown read-only; the batch excluded
    page.locator("#decision").wait_for()
    assert page.locator("#decision h2").inner_text() == "Rejected"
    assert page.locator("#decision-reason").inner_text() == "answers at random"
    assert page.locator("#audit-form").count() == 0
    batch.refresh_from_db()
    assert batch.state == "excluded"
    assert batch.admin_note == "batch rejected in its audit: answers at random"
    assert Payment.objects.get(assignment=batch).status == "rejected"
    # and the queue has it in its history
    page.get_by_text("Audit queue").click()
    page.locator("#audit-history").wait_for()
    assert page.locator("#decided-counts").inner_text() == "(0 accepted · 1 rejected)"
    assert page.locator("#queue-count").inner_text() == "(0)"
