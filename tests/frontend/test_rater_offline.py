"""Rating through a dropped connection (docs/rater-api.md, "The window"): the page answers
the items of its window offline, exactly as online, and delivers them once, in order;
rest breaks and gates stay the server's."""

import re
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Answer, Assignment
from tests.annotation.rater_fixtures import session_ratings
from tests.frontend.rater_browser import (
    current_item,
    delivered,
    entry_url,
    onboard,
    rate,
    wait_step,
)
from tests.frontend.test_rater_rating import server_order

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def wait_window(page) -> None:
    """Wait until every item of the window after the one on screen is downloaded."""
    page.wait_for_function(
        """() => {
            const ahead = document.querySelector('#rater').dataset.ahead || '0/0';
            const [ready, held] = ahead.split('/');
            return Number(held) > 0 && ready === held;
        }"""
    )


def stored_items() -> list[str]:
    """The items of the stored session answers, in the order they were stored."""
    answers = Answer.objects.filter(assignment__isnull=False).order_by("id")
    return [str(item) for item in answers.values_list("item__public_id", flat=True)]


def rate_offline(page, count: int, value: float = 61) -> list[tuple[str, str]]:
    """Rate `count` items without waiting for the server; (item, video source) of each."""
    rated = []
    for _ in range(count):
        item = current_item(page)
        source = page.locator("#stage video").get_attribute("src")
        rate(page, value, wait_delivered=False)
        rated.append((item, source))
    return rated


def test_a_minute_offline_loses_nothing_and_doubles_nothing(
    page, context, live_server, rater_study
):
    # given: a window of 5, no rest within it
    tiny = rater_study(rest_every=0, window_size=5)
    onboard(page, live_server, tiny)
    order = server_order()
    wait_window(page)
    # when: the connection drops for a minute, and the rater answers 5 items meanwhile
    context.set_offline(True)
    went_offline = time.monotonic()
    rated = rate_offline(page, 5)
    # then: every video shown offline came from the window's downloads (the first was on
    # screen already), and the page waits once the window is used up, saying why
    assert [item for item, _ in rated] == order[:5]
    assert all(source.startswith("blob:") for _, source in rated[1:])
    assert wait_step(page, "waiting") == "waiting"
    assert page.locator("#step-waiting").get_attribute("data-reason") == "window_end"
    assert page.locator("#connection").is_visible()
    assert stored_items() == []
    # (the card does not call the answers saved: they are on this device only)
    note = page.locator("#step-waiting .muted").inner_text()
    assert "not sent yet are kept in this browser" in note and "saved" not in note
    page.wait_for_timeout(max(0, 60 - (time.monotonic() - went_offline)) * 1000)
    # when: the connection is back
    context.set_offline(False)
    # then: all 5 stored once, in order, and the session goes on by itself
    delivered(page)
    assert stored_items() == order[:5]
    assert session_ratings().count() == 5 * 3
    assert Assignment.objects.get().position == 5
    assert wait_step(page, "rating") == "rating"
    assert current_item(page) == order[5]
    assert page.locator("#connection").is_hidden()


def test_a_page_closed_offline_delivers_what_it_held_once(context, live_server, rater_study):
    # given: two answers given offline, then the page closed
    tiny = rater_study(rest_every=0, window_size=5)
    page = context.new_page()
    onboard(page, live_server, tiny)
    order = server_order()
    wait_window(page)
    context.set_offline(True)
    rate_offline(page, 2)
    page.close()
    # when: opened again later, online
    context.set_offline(False)
    reopened = context.new_page()
    reopened.goto(entry_url(live_server, tiny, "P1"))
    # then: delivered once, in order, before the server is asked where the rater is
    assert wait_step(reopened, "rating") == "rating"
    assert current_item(reopened) == order[2]
    delivered(reopened)
    assert stored_items() == order[:2]
    assert session_ratings().count() == 2 * 3


def test_a_second_device_resumes_at_the_right_item(browser, page, live_server, rater_study):
    # given: three answers from one device, the last given offline and delivered later
    tiny = rater_study(rest_every=0, window_size=5)
    onboard(page, live_server, tiny)
    order = server_order()
    rate(page, 40)
    rate(page, 41)
    page.context.set_offline(True)
    rate(page, 42, wait_delivered=False)
    page.context.set_offline(False)
    delivered(page)
    # when: the rater opens the study on another device
    other = browser.new_context(viewport={"width": 1280, "height": 800}, bypass_csp=True)
    try:
        second = other.new_page()
        second.goto(entry_url(live_server, tiny, "P1"))
        # then: the item after the last one answered
        assert wait_step(second, "rating") == "rating"
        assert current_item(second) == order[3]
        rate(second, 43)
    finally:
        other.close()
    # then: every answer once, in order, from either device
    assert stored_items() == order[:4]


def test_a_rest_reached_offline_is_neither_skipped_nor_taken_twice(
    page, context, live_server, rater_study
):
    # given: a 6 s rest after every 3 answers
    tiny = rater_study(rest_every=3, rest_seconds=6, window_size=5)
    onboard(page, live_server, tiny)
    order = server_order()
    wait_window(page)
    # then: the window stops at the rest (the item on screen and two downloaded ahead)
    assert page.locator("#rater").get_attribute("data-ahead") == "2/2"
    # when: offline, the rater answers up to the rest, and the page's clock jumps an
    # hour ahead (as a rater changing the computer's clock would)
    context.set_offline(True)
    rate_offline(page, 3)
    assert wait_step(page, "break") == "break"
    rest_began = time.monotonic()
    page.evaluate(
        """() => {
            const real = Date.now;
            Date.now = () => real() + 3600 * 1000;
        }"""
    )
    # then: the countdown runs on the page's own clock, not the computer's
    page.wait_for_timeout(1000)
    left = page.locator("#break-countdown").inner_text()
    assert re.fullmatch(r"0:0[3-5]", left), left
    assert stored_items() == []
    # when: the rest is over while still offline, and the answers come a while later
    page.wait_for_function("document.querySelector('#rater').dataset.step !== 'break'")
    assert time.monotonic() - rest_began >= 5
    page.wait_for_timeout(1500)
    context.set_offline(False)
    back = time.monotonic()
    # then: delivered in order, the rest counted from the answer that started it, so
    # rating goes on at once: no second rest
    delivered(page)
    assert wait_step(page, "rating", "break") == "rating"
    assert current_item(page) == order[3]
    assert time.monotonic() - back < 5
    assignment = Assignment.objects.get()
    assert stored_items() == order[:3]
    assert assignment.breaks_taken == 1
    # the rest ran from when the rater answered, on the server's clock
    answered = Answer.objects.filter(assignment=assignment).order_by("id").last().answered_at
    assert abs(answered - assignment.last_answered_at) < timedelta(seconds=1)
    assert timezone.now() - answered > timedelta(seconds=6)
