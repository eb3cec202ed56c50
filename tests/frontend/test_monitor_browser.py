"""The admin's live monitor in Chromium updates while a simulated rater rates."""

import re

import pytest
from django.test import Client

from annotation.models import Assignment, Participation
from annotation.services.admin_actions import assignment_pause, participation_exclude
from tests.annotation.design_fixtures import tiny_questionnaire_study
from tests.annotation.rater_fixtures import answer, onboard, rater_client
from tests.annotation.test_counted_places import idle_for, started_batch
from tests.factories import UserFactory
from tests.frontend.rater_browser import PHONE, fits_the_screen, is_golden

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def signed_in(context, live_server, user) -> None:
    client = Client()
    client.force_login(user)
    context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
    )


def finished_session(tiny) -> tuple[Assignment, object]:
    """A rater who answered every item of their session with 50 on every slider (golden
    ones too: a constant rater); their assignment and user."""
    rater, user = rater_client()
    onboard(rater, tiny)
    while item := rater.get(tiny.base + "next/").json()["item"]:
        assert (
            rater.post(tiny.base + "answers/", answer(item["id"]), format="json").status_code == 201
        )
    return Assignment.objects.get(rater__user=user), user


@pytest.mark.django_db(transaction=True)
def test_the_monitor_follows_a_rater_without_reloading(live_server, context, page, rater_study):
    # given: an admin watching a study in which a rater has started
    tiny = rater_study(rest_every=0)
    rater, _ = rater_client()
    onboard(rater, tiny)
    rater.get(tiny.base + "next/")
    signed_in(context, live_server, UserFactory(is_staff=True))
    page.goto(f"{live_server.url}/studies/{tiny.study.slug}/monitor/")
    row = page.locator("#assignments tbody tr").first
    row.locator("td").nth(2).filter(has_text="0 / 8").wait_for()
    # when: the rater answers two videos
    for _ in range(2):
        item = rater.get(tiny.base + "next/").json()["item"]["id"]
        assert rater.post(tiny.base + "answers/", answer(item), format="json").status_code == 201
    # then: the row shows it within a polling interval, on the same page
    row.locator("td").nth(2).filter(has_text="2 / 8").wait_for(timeout=10_000)
    assert row.locator("td").nth(3).inner_text() == "active"
    assert "answers" in page.locator("#progress").inner_text()


@pytest.mark.django_db(transaction=True)
def test_the_monitor_shows_a_finished_rater_who_was_excluded(
    live_server, context, page, rater_study
):
    # given: a rater who finished their session and was excluded afterwards
    tiny = rater_study(rest_every=0)
    assignment, user = finished_session(tiny)
    admin = UserFactory(is_staff=True)
    excluded = participation_exclude(
        participation=Participation.objects.get(rater__user=user), reason="<b>cheat</b>", by=admin
    )
    assert excluded.is_excluded and Assignment.objects.get(pk=assignment.pk).state == "finished"
    # when: the admin opens the monitor
    signed_in(context, live_server, admin)
    page.goto(f"{live_server.url}/studies/{tiny.study.slug}/monitor/")
    row = page.locator(f'#assignments tbody tr[data-assignment="{assignment.pk}"]')
    row.wait_for()
    # then: the row says so, as text, and offers no second exclusion
    assert row.locator("td").nth(3).inner_text() == "finished"
    assert row.locator("td").nth(7).inner_text() == "rater excluded: <b>cheat</b>"
    assert row.locator("button").count() == 0
    page.select_option("#filter-state", "excluded")
    assert page.locator("#assignments tbody tr").count() == 1


@pytest.mark.django_db(transaction=True)
def test_the_monitor_shows_a_rater_who_withdrew_and_offers_no_reopen(
    live_server, context, page, rater_study
):
    # given: a rater who withdrew in the middle of their session
    tiny = rater_study(rest_every=0)
    rater, user = rater_client()
    onboard(rater, tiny)
    item = rater.get(tiny.base + "next/").json()["item"]["id"]
    assert rater.post(tiny.base + "answers/", answer(item), format="json").status_code == 201
    assert rater.post(tiny.base + "withdraw/", {"withdraw": True}, format="json").status_code == 200
    assignment = Assignment.objects.get(rater__user=user)
    # when: an admin opens the monitor
    signed_in(context, live_server, UserFactory(is_staff=True))
    page.goto(f"{live_server.url}/studies/{tiny.study.slug}/monitor/")
    row = page.locator(f'#assignments tbody tr[data-assignment="{assignment.pk}"]')
    row.wait_for()
    # then: the row says so, and offers neither a reopen nor an exclusion
    assert row.locator("td").nth(3).inner_text() == "excluded"
    assert row.locator("td").nth(7).inner_text() == "rater withdrew from the study"
    assert row.locator("button").count() == 0


@pytest.mark.django_db(transaction=True)
def test_the_monitor_says_why_a_constant_rater_failed_the_golden_gate(
    live_server, context, page, rater_study
):
    # given: a rater who gave every video, golden ones too, the same score: PLCC with the
    # experts' means is undefined, and the session fails the gate
    tiny = rater_study(rest_every=0)
    assignment, _ = finished_session(tiny)
    assert (assignment.golden_agreement, assignment.eligible_for_next) == (None, False)
    # when
    signed_in(context, live_server, UserFactory(is_staff=True))
    page.goto(f"{live_server.url}/studies/{tiny.study.slug}/monitor/")
    row = page.locator(f'#assignments tbody tr[data-assignment="{assignment.pk}"]')
    row.wait_for()
    # then: the agreement is named undefined (not left blank), and the flag says why
    assert row.locator("td").nth(6).inner_text() == "undefined"
    assert row.locator("td").nth(7).inner_text() == (
        "failed the golden gate (agreement undefined: constant scores, or under 3 golden answers)"
    )


@pytest.mark.django_db(transaction=True)
def test_the_monitor_shows_why_a_session_was_paused(live_server, context, page, rater_study):
    # given: a session an admin paused, with the reason
    tiny = rater_study(rest_every=0)
    rater, user = rater_client()
    onboard(rater, tiny)
    rater.get(tiny.base + "next/")
    admin = UserFactory(is_staff=True)
    assignment = assignment_pause(
        assignment=Assignment.objects.get(rater__user=user), reason="video <i>stalls</i>", by=admin
    )
    # when: the admin (or another) opens the monitor
    signed_in(context, live_server, admin)
    page.goto(f"{live_server.url}/studies/{tiny.study.slug}/monitor/")
    row = page.locator(f'#assignments tbody tr[data-assignment="{assignment.pk}"]')
    row.wait_for()
    # then: the reason stands on the row, as text
    assert row.locator("td").nth(3).inner_text() == "paused"
    assert row.locator("td").nth(7).inner_text() == "paused: video <i>stalls</i>"


@pytest.mark.django_db(transaction=True)
def test_the_monitor_says_when_its_numbers_are_stale(live_server, context, page, rater_study):
    # given: an admin watching a study
    tiny = rater_study(rest_every=0)
    signed_in(context, live_server, UserFactory(is_staff=True))
    page.goto(f"{live_server.url}/studies/{tiny.study.slug}/monitor/")
    page.locator("#updated").filter(has_text="updated").wait_for()
    # written as every moment on the page, in UTC on a 24-hour clock
    assert re.fullmatch(r"updated \d\d:\d\d:\d\d UTC", page.locator("#updated").inner_text())
    # when: the admin's sign-in is gone (the server refuses the next refresh)
    context.clear_cookies()
    # then: the page says the rows are no longer current, instead of keeping quiet
    page.locator("#updated").filter(has_text="not updated: the server answered 403").wait_for(
        timeout=10_000
    )


# Counts the changes to the live region #progress (its text written anew is one).
COUNT_PROGRESS_WRITES = """() => {
    window.progressWrites = 0;
    const count = (changes) => (window.progressWrites += changes.length);
    new MutationObserver(count).observe(document.querySelector('#progress'),
        { childList: true, characterData: true, subtree: true });
}"""
POLLED = "before => document.querySelector('#updated').textContent !== before"


def next_poll(page) -> None:
    """Wait until the monitor has redrawn once more (its "updated" time moves on)."""
    before = page.locator("#updated").inner_text()
    page.wait_for_function(POLLED, arg=before, timeout=10_000)


def watched_rater(live_server, context, page, rater_study):
    """A rater who has started, and an admin on the monitor with the focus on the rater's
    Pause button: (the rater's client, the study, the assignment, its row, the admin)."""
    tiny = rater_study(rest_every=0)
    rater, user = rater_client()
    onboard(rater, tiny)
    rater.get(tiny.base + "next/")
    assignment = Assignment.objects.get(rater__user=user)
    admin = UserFactory(is_staff=True)
    signed_in(context, live_server, admin)
    page.goto(f"{live_server.url}/studies/{tiny.study.slug}/monitor/")
    row = page.locator(f'#assignments tbody tr[data-assignment="{assignment.pk}"]')
    row.locator("td").nth(2).filter(has_text="0 / 8").wait_for()
    row.locator('button[data-action="pause"]').focus()
    return rater, tiny, assignment, row, admin


@pytest.mark.django_db(transaction=True)
def test_a_row_button_keeps_the_keyboard_focus_across_polls(
    live_server, context, page, rater_study
):
    # given: an admin on the monitor with the focus on a rater's Pause button
    rater, tiny, assignment, row, _ = watched_rater(live_server, context, page, rater_study)
    page.evaluate("() => (window.focusedButton = document.activeElement)")
    page.evaluate(COUNT_PROGRESS_WRITES)
    # when: two polls with nothing new
    next_poll(page)
    next_poll(page)
    # then: the focus is on the same button, and the live region was not written again
    assert page.evaluate("() => document.activeElement === window.focusedButton")
    assert page.evaluate("() => window.progressWrites") == 0
    # when: the rater answers up to the first video that is not golden (the row and the
    # progress change; golden answers are not progress, and one may come first)
    answered, item = 0, None
    while item is None or is_golden(item):
        item = rater.get(tiny.base + "next/").json()["item"]["id"]
        assert rater.post(tiny.base + "answers/", answer(item), format="json").status_code == 201
        answered += 1
    row.locator("td").nth(2).filter(has_text=f"{answered} / 8").wait_for(timeout=10_000)
    # then: the row was updated around the button in focus; the progress said it once
    assert page.evaluate("() => document.activeElement === window.focusedButton")
    assert page.locator("#progress").inner_text().startswith("1 answers")
    assert page.evaluate("() => window.progressWrites") == 1
    # and each button names the rater and session it acts on; the column is named
    whose = f"{assignment.rater.pseudonym}, session {assignment.session.index}"
    names = row.locator("button").evaluate_all("bs => bs.map(b => b.getAttribute('aria-label'))")
    assert names == [f"Pause: {whose}", f"Exclude session: {whose}", f"Exclude rater: {whose}"]
    assert page.locator("#assignments thead th").last.inner_text() == "Actions"


@pytest.mark.django_db(transaction=True)
def test_the_focus_stays_on_the_row_whose_focused_action_went(
    live_server, context, page, rater_study
):
    # given: the focus on a rater's Pause button
    _, _, assignment, row, admin = watched_rater(live_server, context, page, rater_study)
    # when: another admin pauses the session (Pause gives way to Reopen)
    assignment_pause(assignment=assignment, reason="stalls", by=admin)
    row.locator('button[data-action="reopen"]').wait_for(timeout=10_000)
    # then: the focus is on the row's first button, not lost to the page
    assert page.evaluate("() => document.activeElement.dataset.action") == "reopen"


@pytest.mark.django_db(transaction=True)
def test_the_monitor_says_an_idle_batch_gave_its_place_away(live_server, context, page):
    # given: a questionnaire batch begun and left for longer than the study allows
    tiny = tiny_questionnaire_study(idle_place_hours=2)
    batch, _ = started_batch(tiny)
    idle_for(batch, 3)
    # when
    signed_in(context, live_server, UserFactory(is_staff=True))
    page.goto(f"{live_server.url}/studies/{tiny.study.slug}/monitor/")
    row = page.locator(f'#assignments tbody tr[data-assignment="{batch.pk}"]')
    row.wait_for()
    # then: still being rated, and flagged as idle with its place open
    assert row.locator("td").nth(3).inner_text() == "active"
    assert row.locator("td").nth(7).inner_text() == "idle: its place is open to another rater"


@pytest.mark.django_db(transaction=True)
def test_the_monitor_says_what_the_study_lacks_until_it_lacks_nothing(
    live_server, context, page, rater_study
):
    from annotation.models import Dimension, Stimulus, TutorialPair
    from annotation.readiness import study_problems

    # given: an admin watching a study whose video is still being transcoded, and which
    # lacks a tutorial pair for one dimension
    tiny = rater_study()
    video = Stimulus.objects.filter(study=tiny.study, role="stimulus").first()
    Stimulus.objects.filter(pk=video.pk).update(status=Stimulus.Status.PROCESSING)
    page.clock.install()
    signed_in(context, live_server, UserFactory(is_staff=True))
    page.goto(f"{live_server.url}/studies/{tiny.study.slug}/monitor/")
    card = page.locator("#problems")
    assert "1 video(s) still being processed" in card.inner_text()
    assert "No tutorial pair for" in card.inner_text()
    # when: the video is ready, and the page looks again (every 20 s)
    Stimulus.objects.filter(pk=video.pk).update(status=Stimulus.Status.READY)
    page.clock.run_for(21_000)
    # then: its line goes, without a reload; the other stays
    card.filter(has_not_text="still being processed").wait_for()
    assert "No tutorial pair for" in card.inner_text()
    assert "checked" in page.locator("#problems-checked").inner_text()
    # when: the missing tutorial pair is made
    pair = TutorialPair.objects.filter(study=tiny.study).first()
    lacking = Dimension.objects.filter(study=tiny.study).exclude(tutorials__isnull=False).get()
    TutorialPair.objects.create(study=tiny.study, dimension=lacking, label="Another",
                                generated=pair.generated, real=pair.real)  # fmt: skip
    assert study_problems(study=tiny.study) == []
    page.clock.run_for(21_000)
    # then: the card goes
    card.wait_for(state="hidden")
    # and: comes back when something is lacking again
    Stimulus.objects.filter(pk=video.pk).update(status=Stimulus.Status.FAILED)
    page.clock.run_for(21_000)
    card.wait_for(state="visible")
    assert "1 video(s) failed to transcode" in card.inner_text()


@pytest.mark.django_db(transaction=True)
def test_on_a_phone_the_staff_pages_scroll_their_tables_not_the_page(
    live_server, context, page, rater_study
):
    # given: an admin on a phone, a study with a finished session
    tiny = rater_study(rest_every=0)
    finished_session(tiny)
    signed_in(context, live_server, UserFactory(is_staff=True))
    page.set_viewport_size(PHONE)
    slug = tiny.study.slug
    for path, shown in [
        ("/studies/", "table.grid tbody tr"),
        (f"/studies/{slug}/monitor/", "#assignments tbody tr"),
        (f"/studies/{slug}/results/", "#exports tr"),
    ]:
        # when
        page.goto(live_server.url + path)
        page.locator(shown).first.wait_for()
        # then: nothing scrolls the page sideways (a wide table scrolls within itself),
        # and the brand stands apart from the links (beside them, or above)
        fits_the_screen(page)
        brand = page.locator(".topbar .brand").bounding_box()
        links = page.locator(".topbar nav").bounding_box()
        beside = brand["x"] + brand["width"] + 8 <= links["x"]
        assert beside or brand["y"] + brand["height"] <= links["y"], (path, brand, links)
