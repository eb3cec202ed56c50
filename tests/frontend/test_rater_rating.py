"""Rating in real Chromium: qualification, sessions, breaks, the golden gate, completion."""

import re

import pytest

from annotation.models import Assignment, Item, Participation, Stimulus
from tests.annotation.rater_fixtures import qualification_ratings, session_ratings
from tests.frontend.conftest import MARKET
from tests.frontend.rater_browser import (
    FOCUS,
    HOLD_PLAY,
    PHONE,
    agree,
    current_item,
    delivered,
    enter,
    finish_tutorial,
    is_golden,
    onboard,
    qualify,
    rate,
    rate_until,
    record_writes,
    set_sliders,
    wait_step,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def server_order(pid: str = "P1") -> list[str]:
    """The rater's items in the order the server decided (opaque ids)."""
    order = Assignment.objects.get(rater__external_id=pid).order
    ids = dict(Item.objects.filter(pk__in=order).values_list("pk", "public_id"))
    return [str(ids[pk]) for pk in order]


def test_passing_the_qualification_opens_the_sessions(page, live_server, rater_study):
    # given
    tiny = rater_study()
    enter(page, live_server, tiny)
    agree(page)
    finish_tutorial(page)
    # when: both items rated 50 (experts: 50 +- 10, tolerance 1.5 sigma)
    shown = [rate(page, 50), rate(page, 50)]
    # then
    assert wait_step(page, "message") == "message"
    assert page.locator("#message-text").inner_text() == (
        "You passed the qualification test. The study's videos follow now."
    )
    # the message is the step's heading, and describes Continue, where the focus went
    message = page.get_by_role("heading", level=1, name="You passed the qualification test.")
    assert message.get_attribute("id") == "message-text"
    assert page.evaluate("() => document.activeElement.getAttribute('aria-describedby')") == (
        "message-text"
    )
    assert sorted(shown) == sorted(str(s.public_id) for s in tiny.qualification)
    answers = qualification_ratings().filter(answer__participation__rater__external_id="P1")
    assert answers.count() == 6
    assert set(answers.values_list("score", flat=True)) == {50.0}
    for answer in (rating.answer for rating in answers.select_related("answer")):
        assert answer.plays == 1 and answer.stalls == 0
        assert answer.watch_time_ms > 0
        assert answer.shown_at < answer.answered_at
    assert Participation.objects.get(rater__external_id="P1").qualification_state == "passed"
    # when
    page.click("#message-continue")
    # then: the first session starts at the server's first item
    assert wait_step(page, "rating") == "rating"
    assert page.locator("#step-rating").get_attribute("data-kind") == "rating"
    assert current_item(page) == server_order()[0]
    assert page.locator("#progress-text").inner_text() == "0 of 8 done"


def test_failing_the_qualification_screens_out_and_redirects(page, live_server, rater_study):
    # given
    tiny = rater_study()
    enter(page, live_server, tiny)
    agree(page)
    finish_tutorial(page)
    # when: far from the experts' 50
    qualify(page, 0)
    # then
    assert wait_step(page, "finished") == "finished"
    section = page.locator("#step-finished")
    assert section.get_attribute("data-outcome") == "screened_out"
    participation = Participation.objects.get(rater__external_id="P1")
    assert participation.qualification_state == "failed"
    assert page.locator("#completion-code").inner_text() == participation.completion_code
    assert page.locator("#completion-link").get_attribute("href") == MARKET + "screenout"
    page.wait_for_url(MARKET + "screenout")


def test_the_rating_view_shows_the_item_as_the_server_sends_it(page, live_server, rater_study):
    # given
    tiny = rater_study()
    onboard(page, live_server, tiny)
    order = server_order()
    # then: the first item, at its native size, muted, inline, with its poster
    item = current_item(page)
    assert item == order[0]
    video = page.locator("#stage video")
    assert video.get_attribute("width") == "64" and video.get_attribute("height") == "48"
    assert video.evaluate("v => [v.muted, v.playsInline, v.preload, v.controls]") == [
        True,
        True,
        "auto",
        False,
    ]
    assert video.get_attribute("poster")  # the poster, downloaded or from its URL
    assert video.get_attribute("aria-label") == "Generated video"
    assert page.locator('[data-field="action"]').inner_text() == "Arranging Flowers"
    assert page.locator('[data-field="prompt"]').inner_text() == "A girl arranges daisies."
    labels = page.locator("#sliders .dimension-label").all_inner_texts()
    assert labels == ["Subject quality", "Action completeness", "Action-scene interaction"]
    assert page.locator("#sliders .anchor-low").all_inner_texts() == ["Bad"] * 3
    assert page.locator("#sliders .anchor-high").all_inner_texts() == ["Excellent"] * 3
    # each slider is described by its scale's ends and its help
    described = page.locator("#sliders input[type=range]").first.evaluate(
        "s => s.getAttribute('aria-describedby').split(' ')"
        ".map(id => document.getElementById(id).textContent)"
    )
    assert described == [
        "Bad",
        "Excellent",
        "How well is the acting subject rendered: its shape, texture and anatomy?",
    ]
    # the window's items are downloaded ahead: the next one plays from its copy
    page.wait_for_function(
        """() => {
            const [ready, held] = document.querySelector('#rater').dataset.ahead.split('/');
            return Number(held) > 1 && ready === held;
        }"""
    )
    # sliders are empty: no value until moved, and Next waits for all three
    sliders = page.locator("#sliders input[type=range]")
    assert [sliders.nth(i).get_attribute("data-untouched") for i in range(3)] == [""] * 3
    set_sliders(page, {"subject": 10, "completeness": 20})
    assert page.locator("#next").is_disabled()
    set_sliders(page, {"interaction": 30})
    assert page.locator("#next").is_enabled()
    # when
    page.click("#next")
    # then
    page.wait_for_selector(f'#step-rating[data-item="{order[1]}"]')
    assert page.locator("#stage video").get_attribute("src").startswith("blob:")
    delivered(page)
    assert page.locator("#progress-text").inner_text() == "1 of 8 done"
    assert page.locator("#progress").evaluate("p => [p.value, p.max]") == [1, 8]
    stored = dict(
        session_ratings()
        .filter(stimulus__public_id=order[0])
        .values_list("dimension__key", "score")
    )
    assert stored == {"subject": 10.0, "completeness": 20.0, "interaction": 30.0}


def test_on_a_phone_the_sliders_are_as_wide_as_the_screen(page, live_server, rater_study):
    # given: a rater at their first item
    tiny = rater_study()
    onboard(page, live_server, tiny)
    current_item(page)
    # when: on a phone-sized screen
    page.set_viewport_size({"width": 390, "height": 844})
    # then: each slider takes the width (the anchors above it), nothing wider than the page
    slider = page.locator("#sliders input[type=range]").first.bounding_box()
    low = page.locator("#sliders .anchor-low").first.bounding_box()
    assert slider["width"] > 300, slider  # it was about 64 px beside 7rem anchors
    assert low["y"] + low["height"] <= slider["y"] + 1  # the anchor above the slider
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    # and on a wide screen the anchors stand beside it
    page.set_viewport_size({"width": 1280, "height": 800})
    slider = page.locator("#sliders input[type=range]").first.bounding_box()
    low = page.locator("#sliders .anchor-low").first.bounding_box()
    assert low["x"] + low["width"] <= slider["x"]


def test_on_a_phone_a_slider_reached_by_tab_scrolls_clear_of_the_sticky_next(
    page, live_server, rater_study
):
    # given: a rater on a phone, at their first item, the first slider in focus once the
    # video has ended
    page.set_viewport_size(PHONE)
    tiny = rater_study()
    onboard(page, live_server, tiny)
    current_item(page)
    assert page.evaluate("document.activeElement.dataset.dimension") == "subject"
    # when: Tab to each next slider
    for dimension in ("completeness", "interaction"):
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.dataset.dimension") == dimension
        # then: it is in view, above the hint and Next that stick to the bottom
        slider = page.evaluate("() => document.activeElement.getBoundingClientRect().toJSON()")
        foot = page.locator(".rating-foot").bounding_box()
        assert slider["bottom"] <= foot["y"], (dimension, slider, foot)
        assert slider["top"] >= 0, (dimension, slider)


def test_on_a_laptop_the_video_every_slider_and_next_are_in_view(page, live_server, rater_study):
    # given: a rater at their first item, on a laptop's browser window
    page.set_viewport_size({"width": 1366, "height": 680})
    tiny = rater_study()
    onboard(page, live_server, tiny)
    current_item(page)
    # then: the sliders stand beside the video, so nothing needs scrolling to answer
    boxes = page.evaluate(
        """() => [...document.querySelectorAll('#stage video, #sliders .dimension, #next')]
                 .map(node => node.getBoundingClientRect().bottom)"""
    )
    assert len(boxes) == 5 and max(boxes) <= 680, boxes
    video = page.locator("#stage video").bounding_box()
    first = page.locator("#sliders .dimension").first.bounding_box()
    assert first["x"] >= video["x"] + video["width"]


def test_sliders_stay_closed_until_the_video_has_played_through(page, live_server, rater_study):
    # given: the session's videos cannot be fetched, so none ever ends
    tiny = rater_study()
    onboard(page, live_server, tiny)
    current_item(page)
    page.route("**/media/v/**", lambda route: route.abort())
    page.reload()
    # then
    wait_step(page, "rating")
    page.wait_for_selector("#notice:not([hidden])")
    assert page.locator("#notice").inner_text().startswith("The video could not be loaded.")
    assert page.locator("#skip-video").is_visible()  # a way on, should a reload not help
    sliders = page.locator("#sliders input[type=range]")
    assert all(sliders.nth(i).is_disabled() for i in range(3))
    assert page.locator("#next").is_disabled()
    assert page.locator("#rating-hint").inner_text() == (
        "Watch the whole video first: the sliders open when it ends."
    )
    page.keyboard.press("Enter")
    assert session_ratings().count() == 0


def test_the_hint_is_written_only_when_it_says_something_new(page, live_server, rater_study):
    # given: a rater at an item with every slider set but the last
    tiny = rater_study()
    onboard(page, live_server, tiny)
    current_item(page)
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Tab")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Tab")
    hint_writes = record_writes(page, "#rating-hint")
    # when: the last slider is set, then moved step by step
    for _ in range(4):
        page.keyboard.press("ArrowRight")
    page.wait_for_function("document.querySelector('#next').disabled === false")
    # then: the live region changed once, to say the item is ready, not at every step
    writes = hint_writes()
    assert len(writes) == 1 and writes[0] == page.locator("#rating-hint").inner_text(), writes


def test_a_new_item_takes_the_focus_and_is_said_once(page, live_server, rater_study):
    # given: a rater at their first item, its sliders set by keys; what the item's live
    # region is written from now on is kept
    tiny = rater_study()
    onboard(page, live_server, tiny)
    item = current_item(page)
    assert page.locator("#item-said").inner_text() == "Video 1 of 8"
    said_writes = record_writes(page, "#item-said")
    for _ in range(3):
        page.keyboard.press("ArrowRight")
        page.keyboard.press("Tab")
    page.evaluate(HOLD_PLAY)  # the next video stays unplayed: its sliders closed
    # when: saved by Enter from the last slider, which goes with its item
    page.locator("#sliders input").last.focus()
    page.keyboard.press("Enter")
    page.wait_for_function(
        "item => document.querySelector('#step-rating').dataset.item !== item", arg=item
    )
    # then: the focus is on the new item's region (named by the step's heading), not on
    # the page's body, while its video has not played
    assert page.evaluate(FOCUS) == [False, True, True]
    region = page.locator("#widget > .widget")
    assert region.get_attribute("role") == "group"
    assert region.get_attribute("aria-labelledby") == "rating-title"
    assert page.locator("#rating-title").inner_text() == "Rating"
    # and Tab goes on into the item: its Play button
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "replay"
    # and the new item was said once, by its place; the slider steps before said nothing
    assert said_writes() == ["Video 2 of 8"]
    # when: its video plays through and its sliders are moved step by step
    page.evaluate("() => { HTMLMediaElement.prototype.play = window.heldPlay; }")
    page.keyboard.press(" ")  # Space on Play plays it (the page's Space replays: the same)
    page.wait_for_selector("#step-rating[data-ready]")
    for _ in range(4):
        page.keyboard.press("ArrowRight")
    # then: the first slider has the focus, and the item is not said again
    assert page.evaluate("document.activeElement.dataset.dimension") == "subject"
    assert said_writes() == ["Video 2 of 8"]


def test_keyboard_rating_with_a_replay(page, live_server, rater_study):
    # given
    tiny = rater_study()
    onboard(page, live_server, tiny)
    item = current_item(page)
    # the first slider has the focus once the video has ended
    assert page.evaluate("document.activeElement.dataset.dimension") == "subject"
    # when
    page.keyboard.press("ArrowRight")  # 50 -> 51
    page.keyboard.press("Tab")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")  # 50 -> 48
    page.keyboard.press("Tab")
    page.keyboard.press("End")  # 100
    page.keyboard.press(" ")  # replay
    page.wait_for_function("document.querySelector('#stage video').ended")
    page.keyboard.press("Enter")
    # then
    page.wait_for_function(
        "item => document.querySelector('#step-rating').dataset.item !== item", arg=item
    )
    delivered(page)
    ratings = session_ratings().filter(stimulus__public_id=item)
    assert dict(ratings.values_list("dimension__key", "score")) == {
        "subject": 51.0,
        "completeness": 48.0,
        "interaction": 100.0,
    }
    assert {(r.answer.plays, r.answer.stalls) for r in ratings} == {(2, 0)}


@pytest.mark.slow
def test_the_time_left_is_told_from_the_raters_own_pace(page, live_server, rater_study):
    # given: a page whose clock runs 60 times fast (a second an item reads as a minute),
    # the two items of the qualification test rated: too few to tell a pace
    page.add_init_script(
        "(() => { const now = performance.now.bind(performance);"
        " performance.now = () => now() * 60; })()"
    )
    tiny = rater_study(rest_every=0)
    onboard(page, live_server, tiny)
    current_item(page)
    assert page.locator("#progress-text").inner_text() == "0 of 8 done"
    assert page.locator("#time-left").is_hidden()
    # when: a third item
    rate(page, 55)
    current_item(page)
    # then: the seven items left, at the median of the three paces
    assert page.locator("#progress-text").inner_text() == "1 of 8 done"
    told = page.locator("#time-left").inner_text()
    minutes = re.fullmatch(r"· about (\d+) min left", told)
    assert minutes, told
    assert 3 <= int(minutes.group(1)) <= 60  # 7 items at 0.5-8 s each, read 60 times slow


def test_a_full_session_ends_with_the_code_and_the_redirect(page, live_server, rater_study):
    # given
    tiny = rater_study()
    onboard(page, live_server, tiny)
    golden = {str(tiny.golden[0].public_id): 20.0, str(tiny.golden[1].public_id): 80.0}
    # when: every item rated (golden ones as the experts did), breaks after 3 and 6
    rated = rate_until(page, lambda item: golden.get(item, 55.0), "finished")
    # then
    assert rated == server_order()
    assignment = Assignment.objects.get(rater__external_id="P1")
    assert (assignment.state, assignment.breaks_taken, assignment.position) == ("finished", 2, 8)
    assert session_ratings().filter(answer__assignment=assignment).count() == 8 * 3
    assert sorted(session_ratings().values_list("stimulus__public_id", flat=True).distinct()) == (
        sorted(Stimulus.objects.filter(public_id__in=rated).values_list("public_id", flat=True))
    )
    assert page.locator("#step-finished").get_attribute("data-outcome") == "done"
    code = Participation.objects.get(rater__external_id="P1").completion_code
    assert page.locator("#completion-code").inner_text() == code
    assert page.evaluate("Object.keys(localStorage).filter(k => k.startsWith('mosaic:'))") == []
    page.wait_for_url(MARKET + "done")


@pytest.mark.slow
@pytest.mark.parametrize(("agreeing", "outcome"), [(True, "message"), (False, "finished")])
def test_the_golden_gate_decides_about_the_next_session(
    page, live_server, rater_study, agreeing, outcome
):
    # given: two sessions of 3 stimuli + 2 golden, no breaks
    tiny = rater_study(session_size=3, rest_every=0)
    onboard(page, live_server, tiny)
    experts = {str(tiny.golden[0].public_id): 20.0, str(tiny.golden[1].public_id): 80.0}

    def value_of(item: str) -> float:
        if not is_golden(item):
            return 50.0
        return experts[item] if agreeing else 100.0 - experts[item]

    # when
    rated = rate_until(page, value_of, "message", "finished")
    # then
    assert len(rated) == 5
    assignment = Assignment.objects.get(rater__external_id="P1")
    assert assignment.golden_agreement == pytest.approx(1.0 if agreeing else -1.0)
    assert wait_step(page, "message", "finished") == outcome
    if agreeing:
        assert page.locator("#message-text").inner_text() == (
            "You finished this session. Thank you!"
        )
        page.click("#message-continue")
        wait_step(page, "rating")
        assert page.locator("#progress-text").inner_text() == "0 of 5 done"
        second = Assignment.objects.filter(rater__external_id="P1").exclude(pk=assignment.pk)
        assert current_item(page) in {
            str(i.public_id) for i in Item.objects.filter(pk__in=second.get().order)
        }
    else:
        section = page.locator("#step-finished")
        assert section.get_attribute("data-outcome") == "not_eligible"
        assert "cannot take further sessions" in section.inner_text()
        page.wait_for_url(MARKET + "done")


def test_next_stays_in_view_and_a_new_item_starts_at_the_top(page, live_server, rater_study):
    # given: a window too low for the item, its video at native size (the phone layout's
    # width is not at play: 1366 px wide, the sliders beside the video)
    page.set_viewport_size({"width": 1366, "height": 420})
    tiny = rater_study()
    onboard(page, live_server, tiny)
    current_item(page)
    # then: Next is at the window's foot although the last slider is below it
    last = page.locator("#sliders .dimension").last.bounding_box()
    assert last["y"] + last["height"] > 420
    assert page.locator("#next").bounding_box()["y"] + 30 <= 420
    # when: the rater scrolls down to the last slider and answers
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    assert page.evaluate("window.scrollY") > 0
    rate(page, 60)
    # then: the new item starts at the page's top, its heading and video in view (the
    # first slider may then take the focus a few pixels clear of the sticky foot)
    current_item(page)
    heading = page.locator("#step-rating h1").bounding_box()
    video = page.locator("#stage video").bounding_box()
    assert heading["y"] >= 0 and video["y"] >= heading["y"], (heading, video)
    assert page.evaluate("window.scrollY") < heading["y"]
