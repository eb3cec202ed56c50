"""Withdrawing from a study in real Chromium: asked once more in a dialog, the answers
still unsent go first, and the page ends without a code (annotation.services.withdrawal)."""

import pytest

from annotation.models import Assignment, Participation
from tests.annotation.rater_fixtures import session_ratings
from tests.frontend.rater_browser import (
    current_item,
    enter,
    onboard,
    rate,
    set_sliders,
    wait_step,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_rater_withdraws_mid_session_after_staying_once(page, live_server, rater_study):
    # given: a rater one video into their session, the next one's sliders moved
    tiny = rater_study()
    onboard(page, live_server, tiny)
    rate(page, 60)
    current_item(page)
    set_sliders(page, 45)
    assert page.locator("#withdraw-bar").is_visible()
    # when: they open the dialog and stay
    page.click("#withdraw-open")
    dialog = page.locator("#withdraw-dialog")
    assert dialog.is_visible()
    assert page.evaluate("() => document.activeElement.id") == "withdraw-cancel"
    page.keyboard.press("Enter")  # a stray Enter stays: the dialog's, not the item's
    assert not dialog.is_visible()
    # then: nothing happened; the item is where it was, its answer not saved
    page.wait_for_timeout(500)
    assert wait_step(page, "rating") == "rating"
    assert page.locator("#rater").get_attribute("data-unsent") == "0"
    assert Assignment.objects.get(rater__external_id="P1").position == 1
    # when: they withdraw
    page.click("#withdraw-open")
    page.click("#withdraw-confirm")
    # then: the end, with no code and no redirect
    assert wait_step(page, "finished") == "finished"
    section = page.locator("#step-finished")
    assert section.get_attribute("data-outcome") == "withdrawn"
    assert section.locator("h1").inner_text() == "You have withdrawn from this study"
    assert not page.locator("#completion-code").is_visible()
    assert not page.locator("#withdraw-bar").is_visible()
    participation = Participation.objects.get(rater__external_id="P1")
    assert participation.withdrawn_at is not None
    assignment = Assignment.objects.get(rater__external_id="P1")
    assert (assignment.state, assignment.position) == ("excluded", 1)
    assert session_ratings().filter(answer__assignment=assignment).count() == 3  # kept
    # and coming back through the link says the same
    page.reload()
    assert wait_step(page, "finished") == "finished"
    assert section.get_attribute("data-outcome") == "withdrawn"


def test_an_answer_still_unsent_reaches_the_server_before_the_withdrawal(
    page, live_server, rater_study
):
    # given: the rater's answer held back: its requests fail as on a dropped connection
    tiny = rater_study()
    onboard(page, live_server, tiny)
    answers = f"**/api/rater/studies/{tiny.study.slug}/answers/"
    page.route(answers, lambda route: route.abort("internetdisconnected"))
    rate(page, 70, wait_delivered=False)
    assert page.locator("#rater").get_attribute("data-unsent") == "1"
    # when: they withdraw
    page.click("#withdraw-open")
    page.click("#withdraw-confirm")
    # then: the withdrawal waits for the answer
    page.wait_for_timeout(1500)
    assert Participation.objects.get(rater__external_id="P1").withdrawn_at is None
    assert page.locator("#withdraw-confirm").is_disabled()
    # when: the answer goes through
    page.unroute(answers)
    # then: it was stored, then the rater withdrew
    assert wait_step(page, "finished") == "finished"
    assignment = Assignment.objects.get(rater__external_id="P1")
    assert (assignment.state, assignment.position) == ("excluded", 1)
    assert set(session_ratings().values_list("score", flat=True)) == {70.0}


def test_declining_the_consent_form_withdraws(page, live_server, rater_study):
    tiny = rater_study()
    enter(page, live_server, tiny, "P1")
    assert not page.locator("#withdraw-bar").is_visible()  # the form has its own button
    # when
    page.click("#consent-decline")
    page.click("#withdraw-confirm")
    # then
    assert wait_step(page, "finished") == "finished"
    assert page.locator("#step-finished").get_attribute("data-outcome") == "withdrawn"
    participation = Participation.objects.get(rater__external_id="P1")
    assert participation.consent_at is None and participation.withdrawn_at is not None


def test_set_sliders_then_withdraw_sends_no_answer_for_the_item_on_screen(
    page, live_server, rater_study
):
    # given: the sliders of the first item moved, not saved
    tiny = rater_study()
    onboard(page, live_server, tiny)
    current_item(page)
    set_sliders(page, 40)
    # when
    page.click("#withdraw-open")
    page.click("#withdraw-confirm")
    # then: an answer not given is not made up
    assert wait_step(page, "finished") == "finished"
    assert not session_ratings().exists()
