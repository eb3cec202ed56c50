"""The pages' Content-Security-Policy (config/security.py) in a browser that enforces it:
their scripts load and run and nothing is refused. The other browser tests bypass the
policy (Playwright's wait_for_function evaluates strings, which the policy forbids)."""

import pytest
from playwright.sync_api import expect

from tests.factories import UserFactory
from tests.frontend.test_monitor_browser import signed_in
from tests.live_requests import close_context

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def strict_page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.set_default_timeout(15_000)
    page = context.new_page()
    refused: list[str] = []
    errors: list[str] = []
    page.on(
        "console",
        lambda message: "Content Security Policy" in message.text and refused.append(message.text),
    )
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    close_context(context)
    assert refused == [], f"refused by the Content-Security-Policy: {refused}"
    assert errors == [], f"JavaScript errors on the page: {errors}"


@pytest.mark.django_db(transaction=True)
def test_the_monitor_and_the_rater_page_run_under_the_policy(live_server, strict_page, rater_study):
    tiny = rater_study(rest_every=0)
    slug = tiny.study.slug
    # the monitor: its module fills the progress card
    signed_in(strict_page.context, live_server, UserFactory(is_staff=True, is_superuser=True))
    response = strict_page.goto(f"{live_server.url}/studies/{slug}/monitor/")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    expect(strict_page.locator("#progress")).not_to_be_empty()
    # the rater page: its module leaves the loading step for the consent
    strict_page.context.clear_cookies()
    signed_in(strict_page.context, live_server, UserFactory())
    strict_page.goto(f"{live_server.url}/study/{slug}/")
    expect(strict_page.locator("#rater")).not_to_have_attribute("data-step", "loading")


@pytest.mark.django_db(transaction=True)
def test_the_admin_the_browsable_api_and_the_api_docs_run_under_the_policy(
    live_server, strict_page, rater_study
):
    # given: a study, and an administrator
    tiny = rater_study(rest_every=0)
    signed_in(strict_page.context, live_server, UserFactory(is_staff=True, is_superuser=True))
    pages = [
        "/admin/",
        "/admin/annotation/study/",
        f"/admin/annotation/study/{tiny.study.pk}/change/",
        "/admin/annotation/study/add/",
        "/admin/annotation/stimulus/",
        "/admin/annotation/question/",
        "/admin/annotation/batchaudit/",
        "/api/studies/",
    ]
    for path in pages:
        # when
        response = strict_page.goto(f"{live_server.url}{path}")
        # then: served under the policy, its scripts run (nothing refused: the fixture)
        assert response.status == 200, path
        assert "script-src 'self'" in response.headers["content-security-policy"], path
    strict_page.goto(f"{live_server.url}/admin/annotation/study/{tiny.study.pk}/change/")
    strict_page.wait_for_load_state("networkidle")
    # the Swagger UI, from MOSaic's own files, draws the schema's title
    response = strict_page.goto(f"{live_server.url}/api/docs/")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    expect(strict_page.locator(".swagger-ui .title")).to_contain_text("MOSaic API")
    expect(strict_page.locator(".opblock").first).to_be_visible()
