"""The side-by-side preference page in Chromium: two videos in sync, the choice closed
until both played, keys and clicks, and answers kept through a lost connection."""

import json

import pytest

from annotation.models import ItemMember, PreferenceJudgment
from tests.frontend.rater_browser import (
    FOCUS,
    HOLD_PLAY,
    PHONE,
    agree,
    delivered,
    enter,
    fits_the_screen,
    reachable,
    wait_step,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def ready_item(page) -> str:
    """Wait until both videos have played through once; the item's id."""
    page.wait_for_selector("#step-rating[data-ready]:not([hidden])")
    return page.locator("#step-rating").get_attribute("data-item")


def best_key(page, item: str) -> str:
    """The key of the side the golden pair's best video is on ("1" left, "3" right)."""
    left = page.locator('[data-side="left"] video').get_attribute("data-item")
    best = ItemMember.objects.get(item__public_id=item, expected="best").stimulus.public_id
    return "1" if left == str(best) else "3"


def answer(page, key: str) -> str:
    item = ready_item(page)
    page.keyboard.press(key)
    page.keyboard.press("Enter")
    page.wait_for_function(
        """item => document.querySelector('#rater').dataset.step !== 'rating'
                   || document.querySelector('#step-rating').dataset.item !== item""",
        arg=item,
    )
    delivered(page)
    return item


WHY = "The other one is blurred."


def tutorial_example(page, live_server, tiny, question):
    """The tutorial's first worked example of the question, once shown."""
    enter(page, live_server, tiny)
    agree(page)
    example = page.locator(f'.exemplar-group[data-question="{question.key}"] .exemplar').first
    example.wait_for()
    return example


def qualified(page, live_server, tiny) -> None:
    enter(page, live_server, tiny)
    agree(page)
    page.wait_for_selector("#tutorial-empty:not([hidden])")  # no examples in this study
    # and the intro does not promise any
    intro = page.locator("#tutorial-intro p")
    assert intro.count() == 2 and intro.nth(0).is_visible() and intro.nth(1).is_hidden()
    page.click("#tutorial-done")
    for _ in range(2):
        wait_step(page, "rating")
        item = ready_item(page)
        answer(page, best_key(page, item))
    wait_step(page, "message")
    page.click("#message-continue")
    wait_step(page, "rating")


def test_both_videos_play_before_the_choice_opens_and_keys_answer(
    page, live_server, preference_study
):
    # given: a rater past the qualification test, at their first pair
    tiny = preference_study()
    qualified(page, live_server, tiny)
    # then: two videos side by side at their native size, the choice closed until both end
    videos = page.locator("#widget video")
    assert videos.count() == 2
    assert videos.evaluate_all("vs => vs.map(v => [v.width, v.height, v.muted])") == [
        [64, 48, True],
        [64, 48, True],
    ]
    assert videos.evaluate_all("vs => vs.map(v => v.getAttribute('aria-label'))") == [
        "Left video",
        "Right video",
    ]
    boxes = [videos.nth(i).bounding_box() for i in range(2)]
    assert boxes[0]["x"] + boxes[0]["width"] <= boxes[1]["x"]  # left of each other
    item = ready_item(page)
    assert page.locator("button.choice[data-choice='equal']").is_enabled()
    assert page.locator("#next").is_disabled()  # no choice yet
    # when: "2" (equally good/bad, the middle button), then Enter
    page.keyboard.press("2")
    assert (
        page.locator("button.choice[data-choice='equal']").get_attribute("aria-pressed") == "true"
    )
    page.keyboard.press("Enter")
    page.wait_for_function(
        "item => document.querySelector('#step-rating').dataset.item !== item", arg=item
    )
    delivered(page)
    # then: stored with the sides the rater saw
    judgment = PreferenceJudgment.objects.get(answer__item__public_id=item)
    assert judgment.choice == "equal"
    shown = [page_id for page_id in judgment.answer.layout]
    assert len(shown) == 2


def test_tab_enter_and_space_press_the_focused_choice_and_enter_then_saves_it(
    page, live_server, preference_study
):
    tiny = preference_study()
    qualified(page, live_server, tiny)
    item = ready_item(page)
    # given: left chosen by its key
    page.keyboard.press("1")
    # when: Space on the focused "right"
    page.locator("button.choice[data-choice='right']").focus()
    page.keyboard.press(" ")
    # then: right is chosen (not a replay)
    pressed = "button.choice[aria-pressed='true']"
    assert page.locator(pressed).get_attribute("data-choice") == "right"
    # when: Enter on the focused "equally good/bad"
    page.locator("button.choice[data-choice='equal']").focus()
    page.keyboard.press("Enter")
    # then: that is the choice now, and nothing is saved (an Enter meant for the button
    # saved the earlier choice)
    assert page.locator(pressed).get_attribute("data-choice") == "equal"
    assert page.locator("#step-rating").get_attribute("data-item") == item
    # when: Enter again, on the chosen button
    page.keyboard.press("Enter")
    page.wait_for_function(
        "item => document.querySelector('#step-rating').dataset.item !== item", arg=item
    )
    delivered(page)
    # then
    assert PreferenceJudgment.objects.get(answer__item__public_id=item).choice == "equal"
    # and a choice by its key, then Enter, saves it (the focus follows the key)
    item = ready_item(page)
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "item => document.querySelector('#step-rating').dataset.item !== item", arg=item
    )
    delivered(page)
    assert PreferenceJudgment.objects.get(answer__item__public_id=item).choice == "right"


def test_a_click_answers_and_an_answer_given_offline_is_sent_once_back_online(
    page, context, live_server, preference_study
):
    # given
    tiny = preference_study()
    qualified(page, live_server, tiny)
    item = ready_item(page)
    # when: offline, the rater clicks "Right" and saves
    context.set_offline(True)
    page.click("button.choice[data-choice='right']")
    page.click("#next")
    page.wait_for_selector("#connection:not([hidden])")
    # then: the page goes on with the next pair of its window
    page.wait_for_function(
        "item => document.querySelector('#step-rating').dataset.item !== item", arg=item
    )
    held = page.evaluate(
        "() => Object.keys(localStorage).filter(k => k.startsWith('mosaic:unsent:'))"
        ".flatMap(k => JSON.parse(localStorage.getItem(k)))"
    )
    assert [(a["item"], a["choice"]) for a in held] == [(item, "right")]
    assert not PreferenceJudgment.objects.filter(answer__item__public_id=item).exists()
    # when: the connection comes back
    context.set_offline(False)
    delivered(page)
    # then: stored once, and the queue is empty
    assert PreferenceJudgment.objects.filter(answer__item__public_id=item).count() == 1
    assert PreferenceJudgment.objects.get(answer__item__public_id=item).choice == "right"
    left = page.evaluate("() => JSON.stringify(Object.entries(localStorage))")
    assert all(not key.startswith("mosaic:unsent:") for key, _ in json.loads(left))


def test_a_tutorial_example_is_headed_by_its_question_in_words(
    page, live_server, preference_study, clip
):
    from annotation.dimensions import dimensions_forget
    from annotation.models import Dimension, Stimulus, TutorialPair
    from tests.factories import StimulusFactory
    from tests.frontend.conftest import attach_clip

    # given: a preference study with a tutorial example for its question
    tiny = preference_study()
    question = Dimension.objects.filter(study=tiny.study).first()
    question.label, question.help_text = "Which video looks better?", "Look at the faces."
    question.save()
    dimensions_forget(tiny.study.pk)
    shown, other = StimulusFactory.create_batch(2, study=tiny.study, role=Stimulus.Role.TUTORIAL)
    for stimulus in (shown, other):
        attach_clip(stimulus, clip)
    TutorialPair.objects.create(
        study=tiny.study, dimension=question, label="Example 1", generated=shown, real=other
    )
    # when
    enter(page, live_server, tiny)
    agree(page)
    group = page.locator(f'.tutorial-group[data-dimension="{question.key}"]')
    group.wait_for()
    # then: the question's label and help, not its key
    assert group.locator(':scope > [data-field="label"]').inner_text() == (
        "Which video looks better?"
    )
    assert group.locator(':scope > [data-field="help"]').inner_text() == "Look at the faces."


def test_a_worked_example_shows_its_pair_and_the_experts_choice(
    page, live_server, preference_study, clip
):
    from annotation.models import Dimension
    from tests.frontend.conftest import worked_example

    # given: a preference study with one worked example, its better video imported first
    tiny = preference_study()
    question = Dimension.objects.get(study=tiny.study)
    videos = worked_example(tiny, clip, ends="bw", question=question, note=WHY)
    # when
    example = tutorial_example(page, live_server, tiny, question)
    # then: the pair side by side, each video named by its side, the better one left
    sides = example.locator(".pref-example figure")
    assert [sides.nth(i).get_attribute("data-side") for i in range(2)] == ["left", "right"]
    assert sides.nth(0).locator("figcaption").inner_text() == "Left video"
    video = sides.nth(1).locator("video")
    assert video.get_attribute("src").endswith(f"/media/v/{videos['worst'].public_id}/")
    page.wait_for_function(
        "v => v.readyState >= 1", arg=video.element_handle()
    )  # the clip loads: a video the rater can play
    # and: the experts' choice and why wait for the rater's own
    told = example.locator('[data-field="answer"]'), example.locator('[data-field="note"]')
    assert all(line.is_hidden() for line in told)
    # when: the rater tries it, choosing otherwise than the experts
    example.get_by_role("button", name="Right").click()
    # then: their choice is said beside the experts', in words, and why
    assert example.locator(".exemplar-yours").inner_text() == (
        "Your choice: Right; the experts chose otherwise."
    )
    assert told[0].inner_text() == "The experts' answer: the left video is better"
    assert told[1].inner_text() == f"Why: {WHY}"
    # and: choosing again says it again
    example.get_by_role("button", name="Left").click()
    assert example.locator(".exemplar-yours").inner_text() == (
        "Your choice: Left, as the experts chose."
    )
    assert example.get_by_role("button", name="Left").get_attribute("aria-pressed") == "true"
    assert page.locator("#tutorial-empty").is_hidden()
    # and: "Play both" plays the pair together, as an item does
    example.get_by_role("button", name="Play both").click()
    page.wait_for_function(
        """row => [...row.querySelectorAll('video')].every(v => !v.paused && v.currentTime > 0)""",
        arg=example.locator(".pref-example").element_handle(),
    )


def test_a_new_pair_takes_the_focus_and_is_said_by_its_place(page, live_server, preference_study):
    # given: a rater at their first pair, left chosen by its key (the focus on its button)
    tiny = preference_study()
    qualified(page, live_server, tiny)
    item = ready_item(page)
    page.keyboard.press("1")
    page.evaluate(HOLD_PLAY)  # the next pair's videos stay unplayed: the choice closed
    # when: saved by Enter, the focused button going with its pair
    page.keyboard.press("Enter")
    page.wait_for_function(
        "item => document.querySelector('#step-rating').dataset.item !== item", arg=item
    )
    # then: the new pair's region has the focus, not the page's body
    assert page.evaluate(FOCUS) == [False, True, True]
    # and it is said by its place in the session
    done, length = page.locator("#progress").evaluate("p => [p.value, p.max]")
    assert page.locator("#item-said").inner_text() == f"Comparison {done + 1} of {length}"


def test_on_a_phone_the_choices_and_next_fit_the_screen_and_a_tap_answers(
    page, live_server, preference_study
):
    # given: a qualified rater on a phone
    page.set_viewport_size(PHONE)
    tiny = preference_study()
    qualified(page, live_server, tiny)
    item = ready_item(page)
    # then: the three choices fit beside each other (nothing scrolls sideways)
    fits_the_screen(page)
    for choice in ("left", "equal", "right"):
        reachable(page, f'.choice[data-choice="{choice}"]')
    # when: a choice tapped, then Next
    page.locator('.choice[data-choice="equal"]').click()
    reachable(page, "#next")
    page.locator("#next").click()
    delivered(page)
    # then: stored as tapped
    assert PreferenceJudgment.objects.get(answer__item__public_id=item).choice == "equal"
