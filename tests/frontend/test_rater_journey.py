"""The rater's journey in real Chromium against the real server (docs/rater-api.md)."""

import pytest

from annotation.models import ExpertScore, Participation, Study, TutorialPair
from tests.frontend.rater_browser import agree, enter, entry_url, finish_tutorial, wait_step

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_marketplace_entry_opens_the_consent_step(page, live_server, rater_study):
    # given
    tiny = rater_study()
    # when
    page.goto(entry_url(live_server, tiny, "PID42", STUDY_ID="S9", SESSION_ID="X7"))
    # then
    assert wait_step(page, "consent") == "consent"
    assert page.url == f"{live_server.url}/study/{tiny.study.slug}/"
    participation = Participation.objects.get(rater__external_id="PID42")
    assert (participation.marketplace_study_id, participation.marketplace_session_id) == (
        "S9",
        "X7",
    )
    assert page.locator('[data-field="instructions"]').inner_text() == (
        "Watch each video to the end, then rate it."
    )


def test_a_bad_marketplace_token_is_refused(page, live_server, rater_study):
    tiny = rater_study()
    response = page.goto(f"{live_server.url}/r/{tiny.study.slug}/?token=nope&PROLIFIC_PID=P1")
    assert response.status == 403
    assert "This link cannot be used" in page.content()
    assert not Participation.objects.exists()


def test_consent_sends_the_viewing_conditions(page, live_server, rater_study):
    tiny = rater_study()
    enter(page, live_server, tiny, "P1")
    agree(page)
    check = Participation.objects.get(rater__external_id="P1").viewing_check
    assert (check["viewport_width"], check["viewport_height"]) == (1280, 800)
    assert check["pixel_ratio"] == 1.0
    assert check["screen_width"] > 0 and check["screen_height"] > 0
    assert "Chrome" in check["user_agent"]


def test_a_consent_text_edited_while_the_page_showed_it_is_shown_again(
    page, live_server, rater_study
):
    # given: the page shows the consent text, then the team corrects it
    tiny = rater_study(consent_text="Version one.")
    enter(page, live_server, tiny, "P1")
    text = page.locator('#step-consent [data-field="consent-text"]')
    assert text.inner_text() == "Version one."
    Study.objects.filter(pk=tiny.study.pk).update(consent_text="Version two.")
    # when: the rater agrees to what they read
    page.click("#consent-accept")
    # then: the new text is shown, and why
    page.locator("#consent-error").wait_for()
    assert page.locator('#consent-error [data-field="title"]').inner_text() == (
        "The consent text has changed."
    )
    assert text.inner_text() == "Version two."
    assert wait_step(page, "consent") == "consent"
    assert Participation.objects.get(rater__external_id="P1").consent_at is None
    # when: they agree to it
    agree(page)
    # then
    assert Participation.objects.get(rater__external_id="P1").consented_text == "Version two."


def test_the_keyboard_goes_on_from_each_new_step(page, live_server, rater_study):
    tiny = rater_study()
    enter(page, live_server, tiny, "P1")
    # when: "I agree" by the keyboard
    page.locator("#consent-accept").focus()
    page.keyboard.press("Enter")
    wait_step(page, "tutorial")
    # then: the focus is on the tutorial's heading, not back at the top of the page
    focused = (
        "() => [document.activeElement.tagName,"
        " document.activeElement.closest('.step')?.dataset.stepName]"
    )
    assert page.evaluate(focused) == ["H1", "tutorial"]
    # and Tab goes on to the tutorial's first control
    page.keyboard.press("Tab")
    assert page.evaluate(focused)[1] == "tutorial"


def test_a_too_small_window_is_told_clearly(page, live_server, rater_study):
    # given: a study that needs more than the 1280 x 800 window
    tiny = rater_study(min_viewport_width=1600, min_viewport_height=900)
    enter(page, live_server, tiny, "P1")
    # when
    page.click("#consent-accept")
    # then
    box = page.locator("#consent-error")
    box.wait_for()
    assert box.get_attribute("data-reason") == "viewport_too_small"
    text = box.inner_text()
    assert "Your browser window is too small for this study." in text
    assert "1600 x 900" in text and "1280 x 800" in text
    # the server's detail reads as a sentence of its own
    assert box.locator("[data-field=detail]").inner_text().startswith("This study needs")
    assert box.locator("[data-field=detail]").inner_text().endswith("1280 x 800.")
    assert wait_step(page, "consent") == "consent"
    assert Participation.objects.get(rater__external_id="P1").consent_at is None
    # when: the rater enlarges the window and tries again
    page.set_viewport_size({"width": 1700, "height": 1000})
    page.click("#consent-accept")
    # then
    assert wait_step(page, "tutorial") == "tutorial"
    assert (
        Participation.objects.get(rater__external_id="P1").viewing_check["viewport_width"] == 1700
    )


def test_tutorial_shows_pairs_by_dimension_and_reveals_the_expert(page, live_server, rater_study):
    # given
    tiny = rater_study()
    # the experts did not score the third pair's generated video
    unscored = TutorialPair.objects.get(study=tiny.study, label="Example 3").generated
    ExpertScore.objects.filter(stimulus=unscored).delete()
    enter(page, live_server, tiny, "P1")
    agree(page)
    page.locator(".tutorial-pair").first.wait_for()
    # then: grouped by dimension in the study's order, each pair side by side
    groups = page.locator(".tutorial-group")
    assert groups.count() == 2
    assert groups.nth(0).locator("h2").inner_text() == "Subject quality"
    assert groups.nth(1).locator("h2").inner_text() == "Action completeness"
    assert groups.nth(0).locator(".tutorial-pair").count() == 2
    first = page.locator(".tutorial-pair").first
    assert first.locator("h3").inner_text() == "Example 1"
    assert first.locator(".caption").inner_text() == "A person does thing 1."
    assert first.locator(".explanation").inner_text() == "Why example 1 is rated so."
    names = first.locator("video").evaluate_all("vs => vs.map(v => v.getAttribute('aria-label'))")
    assert names == ["Generated video", "Real video"]
    # the videos are really served to the rater
    first.locator('video[data-field="generated"]').evaluate(
        "v => new Promise(ok => v.readyState >= 1 ? ok()"
        " : v.addEventListener('loadedmetadata', ok))"
    )
    # when: trying the slider, then asking for the expert's answer
    slider = first.locator("input[type=range]")
    assert slider.get_attribute("data-untouched") == ""
    slider.fill("40")
    assert slider.get_attribute("data-untouched") is None
    assert first.locator(".expert").is_hidden()
    # a pair without the experts' score offers no answer to show
    assert page.locator(".tutorial-pair").nth(2).locator('[data-action="reveal"]').is_hidden()
    first.locator('[data-action="reveal"]').click()
    # then
    assert first.locator(".expert").inner_text() == "Expert's answer: 35 · Your answer: 40"
    assert first.locator(".expert-mark").is_visible()
    # when
    finish_tutorial(page)
    # then: the qualification test starts
    assert page.locator("#step-rating").get_attribute("data-kind") == "qualification"
    assert page.locator("#progress-text").inner_text() == "0 of 2 done"
    assert Participation.objects.get(rater__external_id="P1").tutorial_done_at is not None


def test_the_intro_speaks_of_the_examples_only_once_they_are_there(page, live_server, rater_study):
    # given: the tutorial's examples slow to come
    tiny = rater_study()
    held = []
    tutorial = f"**/api/rater/studies/{tiny.study.slug}/tutorial/"
    page.route(tutorial, lambda route: held.append(route))
    enter(page, live_server, tiny, "P1")
    page.click("#consent-accept")
    wait_step(page, "tutorial")
    while not held:
        page.wait_for_timeout(50)
    # then: nothing yet says "the examples below"
    assert page.locator("#tutorial-intro .if-examples").count() == 1
    assert page.locator("#tutorial-intro .if-examples").is_hidden()
    # when: they come
    held[0].continue_()
    page.locator(".tutorial-pair").first.wait_for()
    # then
    assert page.locator("#tutorial-intro .if-examples").is_visible()


def test_a_study_that_stops_running_says_so(page, live_server, rater_study):
    # given
    tiny = rater_study()
    enter(page, live_server, tiny, "P1")
    Study.objects.filter(pk=tiny.study.pk).update(state=Study.State.PAUSED)
    # when: paused by its team
    page.reload()
    # then: the page says so and offers to try again
    assert wait_step(page, "waiting") == "waiting"
    section = page.locator("#step-waiting")
    assert section.get_attribute("data-reason") == "study_paused"
    assert section.locator("h1").inner_text() == "This study is paused"
    # when: the study runs again and the rater tries again
    Study.objects.filter(pk=tiny.study.pk).update(state=Study.State.RUNNING)
    page.click("#waiting-retry")
    # then: on where they were
    assert wait_step(page, "consent") == "consent"
    # when: it is closed
    Study.objects.filter(pk=tiny.study.pk).update(state=Study.State.CLOSED)
    page.reload()
    # then
    page.wait_for_selector("#notice:not([hidden])")
    assert page.locator("#notice").inner_text() == (
        "This page could not be loaded: this study is closed"
    )
    assert page.locator("#step-consent").is_hidden()
    assert page.get_by_text("Loading…").is_hidden()  # nothing is loading any more
