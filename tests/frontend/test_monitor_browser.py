"""The admin's live monitor in Chromium updates while a simulated rater rates."""

import pytest
from django.test import Client

from tests.annotation.rater_fixtures import answer, onboard, rater_client
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def signed_in(context, live_server, user) -> None:
    client = Client()
    client.force_login(user)
    context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
    )


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
