"""No answer lost, none doubled, no break skipped: reloads, lost connections, lost replies."""

import json
import re

import pytest

from annotation.models import Assignment
from tests.annotation.rater_fixtures import session_ratings
from tests.frontend.rater_browser import (
    current_item,
    delivered,
    onboard,
    rate,
    set_sliders,
    wait_step,
)
from tests.frontend.test_rater_rating import server_order

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

UNSENT = "Object.entries(localStorage).filter(([k]) => k.startsWith('mosaic:unsent:'))"


def unsent(page) -> list[dict]:
    """The answers the page still holds, from every queue in localStorage."""
    return [answer for _, value in page.evaluate(UNSENT) for answer in json.loads(value)]


def ratings_of(item: str) -> dict[str, tuple[float, str]]:
    rows = session_ratings().filter(stimulus__public_id=item)
    return {r.dimension.key: (r.score, str(r.answer.client_uuid)) for r in rows}


def test_a_reload_resumes_at_the_servers_position(page, live_server, rater_study):
    # given: two items rated
    tiny = rater_study(rest_every=0)
    onboard(page, live_server, tiny)
    rate(page, 30)
    rate(page, 31)
    # when
    page.reload()
    # then
    wait_step(page, "rating")
    assert current_item(page) == server_order()[2]
    assert page.locator("#progress-text").inner_text() == "2 of 8 done"
    assert session_ratings().count() == 2 * 3


def test_an_unsent_answer_is_sent_first_after_a_reload(page, live_server, rater_study):
    # given: the answers endpoint cannot be reached
    tiny = rater_study(rest_every=0)
    onboard(page, live_server, tiny)
    order = server_order()
    page.route("**/answers/", lambda route: route.abort())
    item = current_item(page)
    set_sliders(page, 64)
    page.click("#next")
    page.wait_for_selector("#connection:not([hidden])")
    # then: kept in the browser, not on the server, and the page goes on with its window
    queued = unsent(page)
    assert [(a["item"], a["scores"]) for a in queued] == [
        (item, {"subject": 64, "completeness": 64, "interaction": 64})
    ]
    assert ratings_of(item) == {}
    assert page.locator("#step-rating").get_attribute("data-item") == order[1]
    # when: the page is reloaded with the connection back
    page.unroute("**/answers/")
    page.reload()
    # then: the answer went first, so the next item is shown, not the answered one again
    wait_step(page, "rating")
    assert current_item(page) == order[1]
    uuid = queued[0]["client_uuid"]
    assert ratings_of(item) == {key: (64.0, uuid) for key in queued[0]["scores"]}
    assert unsent(page) == []
    assert page.locator("#connection").is_hidden()


@pytest.mark.slow
def test_going_offline_loses_nothing_and_doubles_nothing(page, context, live_server, rater_study):
    # given
    tiny = rater_study(rest_every=0)
    onboard(page, live_server, tiny)
    order = server_order()
    item = current_item(page)
    # when: the connection drops just before the answer is sent, for several retries
    context.set_offline(True)
    set_sliders(page, {"subject": 12, "completeness": 34, "interaction": 56})
    page.click("#next")
    banner = page.locator("#connection")
    banner.wait_for()
    assert banner.inner_text() == (
        "Connection lost: you can go on, your answers are safe and will be sent as soon as the "
        "connection is back."
    )
    page.wait_for_timeout(3500)  # the retries at 1 s and 2 s fail too
    queued = unsent(page)
    assert len(queued) == 1 and ratings_of(item) == {}
    assert page.locator("#step-rating").get_attribute("data-item") == order[1]
    # when: back online
    context.set_offline(False)
    # then: sent once
    delivered(page)
    uuid = queued[0]["client_uuid"]
    assert ratings_of(item) == {
        "subject": (12.0, uuid),
        "completeness": (34.0, uuid),
        "interaction": (56.0, uuid),
    }
    assert session_ratings().count() == 3
    assert Assignment.objects.get().position == 1
    assert unsent(page) == []
    assert banner.is_hidden()
    # and the session goes on as usual
    rate(page, 70)
    assert session_ratings().count() == 6


def test_a_lost_reply_is_retried_and_stored_once(page, live_server, rater_study):
    # given: the first delivery reaches the server but its reply is lost on the way back
    tiny = rater_study(rest_every=0)
    onboard(page, live_server, tiny)
    order = server_order()
    statuses = []

    def lose_first_reply(route):
        if not statuses:
            statuses.append(route.fetch().status)  # the server stores the answer
            route.abort()
        else:
            response = route.fetch()
            statuses.append(response.status)
            route.fulfill(response=response)

    page.route("**/answers/", lose_first_reply)
    # when
    item = rate(page, 42)
    # then: the retry was answered as a repeat, nothing doubled, the page moved on
    assert statuses == [201, 200]
    assert current_item(page) == order[1]
    assert {score for score, _ in ratings_of(item).values()} == {42.0}
    assert session_ratings().count() == 3
    assert unsent(page) == []


@pytest.mark.slow
def test_the_break_cannot_be_skipped(page, live_server, rater_study):
    # given: a 4 s break after every 3 items
    tiny = rater_study(rest_every=3, rest_seconds=4)
    onboard(page, live_server, tiny)
    order = server_order()
    for _ in range(3):
        rate(page, 60)
    # then: the break shows, with nothing to press
    assert wait_step(page, "break") == "break"
    assert re.fullmatch(r"0:0[1-4]", page.locator("#break-countdown").inner_text())
    assert page.locator("#step-break button").count() == 0
    # when: reloading
    page.reload()
    # then: still on break
    assert wait_step(page, "break") == "break"
    # when: posting an answer for the next item directly, and asking for it
    replies = page.evaluate(
        """async (item) => {
            const config = JSON.parse(document.getElementById('rater-config').textContent);
            const headers = {'Content-Type': 'application/json', 'X-CSRFToken': config.csrf_token};
            const answer = {client_uuid: crypto.randomUUID(), item,
                            scores: {subject: 1, completeness: 1, interaction: 1}};
            const posted = await fetch(config.api.answers,
                {method: 'POST', headers, body: JSON.stringify(answer)});
            const next = await fetch(config.api.next);
            return [posted.status, await posted.json(), await next.json()];
        }""",
        order[3],
    )
    # then: refused, and no item is handed out
    status, refusal, upcoming = replies
    assert status == 423
    assert refusal["error"] == "on_break" and refusal["break_seconds_left"] > 0
    assert upcoming["step"] == "break" and upcoming["item"] is None
    assert session_ratings().count() == 3 * 3
    # when: the break runs out, the page goes on by itself
    assert wait_step(page, "rating") == "rating"
    assert current_item(page) == order[3]
    assert page.locator("#progress-text").inner_text() == "3 of 8 done"
