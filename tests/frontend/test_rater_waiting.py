"""The rater page while there is nothing to rate for now: it says why, keeps what the
rater answered meanwhile, and goes on when asked again."""

import pytest

from annotation.models import Assignment, Stimulus
from annotation.services.admin_actions import assignment_pause, assignment_reopen
from tests.factories import UserFactory
from tests.frontend.rater_browser import (
    agree,
    current_item,
    enter,
    onboard,
    rate,
    set_sliders,
    wait_step,
)
from tests.frontend.test_rater_rating import server_order
from tests.frontend.test_rater_resilience import ratings_of, unsent

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_paused_session_keeps_the_answer_and_says_so(page, live_server, rater_study):
    # given: one item rated, then the study's team pauses the session
    tiny = rater_study(rest_every=0)
    onboard(page, live_server, tiny)
    order = server_order()
    rate(page, 30)
    # the page has topped its window up again (it asks next/ after each delivery: had
    # the pause come first, it would have learned of it then, with no answer to hold)
    page.wait_for_function("document.querySelector('#rater').dataset.ahead === '4/4'")
    admin = UserFactory(is_staff=True)
    assignment = Assignment.objects.get()
    assignment_pause(assignment=assignment, reason="checking this rater", by=admin)
    # when: the rater answers the item on screen
    item = current_item(page)
    set_sliders(page, 64)
    page.click("#next")
    # then: the page says so; the answer is kept in the browser, not refused
    assert wait_step(page, "waiting") == "waiting"
    section = page.locator("#step-waiting")
    assert section.get_attribute("data-reason") == "paused"
    assert section.locator("h1").inner_text() == "Your session is paused"
    assert [(a["item"], a["scores"]["subject"]) for a in unsent(page)] == [(item, 64)]
    assert ratings_of(item) == {}
    assert page.locator("#notice").is_hidden()
    # when: reloaded while still paused
    page.reload()
    # then
    assert wait_step(page, "waiting") == "waiting"
    assert len(unsent(page)) == 1
    # when: the team reopens the session and the rater tries again
    assignment_reopen(assignment=assignment, reason="all fine", by=admin)
    page.click("#waiting-retry")
    # then: the kept answer is stored once and the next item shows
    assert wait_step(page, "rating") == "rating"
    assert current_item(page) == order[2]
    assert {score for score, _ in ratings_of(item).values()} == {64.0}
    assert unsent(page) == []


def test_a_qualification_test_not_ready_yet_says_so(page, live_server, rater_study):
    # given: the qualification videos are still being processed
    tiny = rater_study()
    qualification = Stimulus.objects.filter(role=Stimulus.Role.QUALIFICATION)
    qualification.update(status=Stimulus.Status.PROCESSING)
    enter(page, live_server, tiny)
    agree(page)
    # when
    page.locator(".tutorial-pair").first.wait_for()
    page.click("#tutorial-done")
    # then: the rater waits, and is not let through to the sessions
    assert wait_step(page, "waiting") == "waiting"
    section = page.locator("#step-waiting")
    assert section.get_attribute("data-reason") == "qualification_not_ready"
    assert section.locator("h1").inner_text() == "The qualification test is not ready yet"
    assert not Assignment.objects.exists()
    # when: the videos are ready and the rater tries again
    qualification.update(status=Stimulus.Status.READY)
    page.click("#waiting-retry")
    # then
    assert wait_step(page, "rating") == "rating"
    assert page.locator("#step-rating").get_attribute("data-kind") == "qualification"
    assert page.locator("#progress-text").inner_text() == "0 of 2 done"
