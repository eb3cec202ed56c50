"""The admin's live monitor in Chromium updates while a simulated rater rates."""

import re

import pytest
from django.test import Client

from annotation.models import Assignment, Participation
from annotation.services.admin_actions import assignment_pause, participation_exclude
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


@pytest.mark.django_db(transaction=True)
def test_the_monitor_shows_a_finished_rater_who_was_excluded(
    live_server, context, page, rater_study
):
    # given: a rater who finished their session and was excluded afterwards
    tiny = rater_study(rest_every=0)
    rater, user = rater_client()
    onboard(rater, tiny)
    while item := rater.get(tiny.base + "next/").json()["item"]:
        assert (
            rater.post(tiny.base + "answers/", answer(item["id"]), format="json").status_code == 201
        )
    assignment = Assignment.objects.get(rater__user=user)
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
