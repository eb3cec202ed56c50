"""The questionnaire page in Chromium: the experts' exemplars question by question, the
questions closed until the video has played, Next closed until every question but the
comment is answered, each kind answered by clicks and keys and stored as given, a video
asked only some questions, and answers given offline sent once when the connection is
back."""

import re

import pytest

from annotation.designs.questionnaire_study import questions_forget
from annotation.models import Answer, LabelAnswer, Question, Stimulus
from tests.annotation.design_fixtures import EXPERT_ANSWERS
from tests.frontend.rater_browser import (
    FOCUS,
    PHONE,
    agree,
    contrast,
    current_item,
    delivered,
    enter,
    fits_the_screen,
    reachable,
    wait_step,
)
from tests.frontend.test_rater_offline import stored_items, wait_window
from tests.frontend.test_rater_rating import server_order

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

ALL = ["overall", "object_text", "light", "comment"]
# Chromium plays every video at a sixteenth of its speed (its slowest) while this is set:
# the half-second clip takes eight, time to look at an item before it has played to its end.
SLOW_PLAY = """() => {
    window.slowPlay = true;
    const play = HTMLMediaElement.prototype.play;
    HTMLMediaElement.prototype.play = function () {
        this.playbackRate = window.slowPlay ? 0.0625 : 1;
        return play.call(this);
    };
}"""
FULL_SPEED = """() => {
    window.slowPlay = false;
    document.querySelector('#step-rating video').playbackRate = 1;
}"""


def question(page, key: str):
    return page.locator(f'#step-rating fieldset.q-question[data-question="{key}"]')


def shown_questions(page) -> list[str]:
    return page.eval_on_selector_all(
        "#step-rating fieldset.q-question", "boxes => boxes.map(box => box.dataset.question)"
    )


def choose(page, key: str, value) -> None:
    """Answer one question by clicks: a score or level by its value (the label of its
    radio button), tags one by one ("None of these" for none), a comment typed."""
    box = question(page, key)
    kind = box.get_attribute("data-kind")
    if kind == "comment":
        box.locator("textarea").fill(value)
    elif kind == "tags" and not value:
        box.locator(".q-none").click()
    elif kind == "tags":
        for tag in value:
            box.locator(f'[data-value="{tag}"]').click()
    else:
        box.locator(f'[data-value="{value}"]').click()


def hint(page) -> str:
    return page.locator("#rating-hint").inner_text()


def moved_past(page, item: str) -> None:
    page.wait_for_function(
        """item => document.querySelector('#rater').dataset.step !== 'rating'
                   || document.querySelector('#step-rating').dataset.item !== item""",
        arg=item,
    )


def answer_item(page, answers: dict) -> str:
    """Answer the shown questions of the item on screen from `answers` and save it."""
    item = current_item(page)
    for key in shown_questions(page):
        if key in answers:
            choose(page, key, answers[key])
    page.click("#next")
    moved_past(page, item)
    return item


def stored_labels(item: str) -> dict:
    """The stored answers of the session's answer to an item: key -> (number, invalid,
    sorted tags, text)."""
    answer = Answer.objects.get(item__public_id=item, assignment__isnull=False)
    rows = LabelAnswer.objects.filter(answer=answer).select_related("dimension")
    return {
        row.dimension.key: (
            row.number,
            row.invalid,
            sorted(row.tags.values_list("tag", flat=True)),
            row.text,
        )
        for row in rows.prefetch_related("tags")
    }


def through_tutorial(page) -> None:
    page.locator(".exemplar").first.wait_for()
    page.click("#tutorial-done")
    wait_step(page, "rating")


def qualify(page) -> None:
    """Both qualification items answered as the experts did, then on to the sessions."""
    for _ in range(2):
        answer_item(page, EXPERT_ANSWERS)
    wait_step(page, "message")
    page.click("#message-continue")
    wait_step(page, "rating")


def qualified(page, live_server, tiny) -> None:
    enter(page, live_server, tiny)
    agree(page)
    through_tutorial(page)
    qualify(page)


def restricted_video() -> Stimulus:
    """The regular video whose manifest row asks only some questions."""
    return Stimulus.objects.filter(role=Stimulus.Role.STIMULUS).exclude(asked_questions=[]).get()


def test_exemplars_then_every_kind_answered_by_clicks_and_keys_is_stored_as_given(
    page, live_server, questionnaire_study
):
    tiny = questionnaire_study()
    enter(page, live_server, tiny)
    agree(page)
    # then: the exemplars, question by question (the comment has none), each video with
    # its prompt, the experts' answer in the question's terms and why
    page.locator(".exemplar").first.wait_for()
    groups = page.locator(".exemplar-group")
    assert groups.evaluate_all("gs => gs.map(g => g.dataset.question)") == [
        "overall",
        "object_text",
        "light",
    ]
    assert groups.locator("h2").all_inner_texts() == [
        "Overall Score",
        "Object-Text Consistency",
        "Light Quality",
    ]
    # then: each is tried before it is told, the experts' answer hidden and Check closed
    # until the rater has answered; once checked, whether the test would count the
    # answer as agreeing (tolerances 1 point, the next level, Jaccard 0.5), and the rule
    assert page.locator(".exemplar .expert:visible").count() == 0
    assert page.locator(".exemplar .exemplar-check:disabled").count() == 6
    tried = {
        "overall": ([4], [8]),
        "object_text": ([1], [2]),
        "light": (["hard_light"], ["soft_light", "hard_light"]),
    }
    for group in groups.all():
        for exemplar, given in zip(
            group.locator(".exemplar").all(),
            tried[group.get_attribute("data-question")],
            strict=True,
        ):
            for value in given:
                exemplar.locator(f'.exemplar-question [data-value="{value}"]').click()
            exemplar.locator(".exemplar-check").click()
    yours = [group.locator(".exemplar-yours").all_inner_texts() for group in groups.all()]
    assert yours == [
        [
            "Your answer: 4 (on a scale from 0 to 10). The test would count it as not "
            "agreeing with the experts'. It counts a score from 6 to 8.",
            "Your answer: 8 (on a scale from 0 to 10). The test would count it as agreeing "
            "with the experts'. It counts a score from 6 to 8.",
        ],
        [
            "Your answer: 1 · Completely inconsistent. The test would count it as not "
            "agreeing with the experts'. It counts: 2 · Partially consistent; 3 · Fully "
            "consistent.",
            "Your answer: 2 · Partially consistent. The test would count it as agreeing "
            "with the experts'. It counts: 2 · Partially consistent; 3 · Fully consistent.",
        ],
        [
            "Your answer: Hard Light. The test would count it as not agreeing with the "
            "experts'. It counts your tags when those you and the experts both chose are "
            "at least 50% of all the tags either chose.",
            "Your answer: Hard Light, Soft Light. The test would count it as agreeing with "
            "the experts'. It counts your tags when those you and the experts both chose "
            "are at least 50% of all the tags either chose.",
        ],
    ]
    assert page.locator(".exemplar .expert:visible").count() == 6
    answers = [
        group.locator(".expert").all_inner_texts() for group in groups.all()
    ]  # two exemplar videos each
    assert answers == [
        ["The experts' answer: 7 (on a scale from 0 to 10)"] * 2,
        ["The experts' answer: 3 · Fully consistent"] * 2,
        ["The experts' answer: Soft Light"] * 2,
    ]
    assert page.locator(".exemplar .why").all_inner_texts() == ["Why: why"] * 6
    exemplars = {str(v.public_id) for v in Stimulus.objects.filter(role=Stimulus.Role.TUTORIAL)}
    shown = page.locator(".exemplar").evaluate_all("es => es.map(e => e.dataset.video)")
    assert set(shown) == exemplars and len(shown) == 6
    labels = page.locator(".exemplar video").evaluate_all(
        "vs => vs.map(v => v.getAttribute('aria-label'))"
    )
    assert labels == ["Example video"] * 6
    page.wait_for_function(
        "() => [...document.querySelectorAll('.exemplar video')].every(v => v.readyState >= 1)"
    )
    assert page.locator("#tutorial-empty").is_hidden()
    assert page.locator("#tutorial-intro .if-examples").is_visible()
    assert page.locator("#tutorial-done").inner_text() == "Start the qualification test"
    # when: the qualification's first video plays slowly
    page.evaluate(SLOW_PLAY)
    page.click("#tutorial-done")
    wait_step(page, "rating")
    question(page, "overall").wait_for()
    # then: the questions and Next stay closed until the video has played to its end
    assert shown_questions(page) == ALL
    assert page.locator("#step-rating fieldset.q-question:disabled").count() == 4
    assert page.locator("#next").is_disabled()
    assert hint(page) == "Watch the whole video first: the questions open when it ends."
    page.evaluate(FULL_SPEED)
    first = current_item(page)
    # then: Next opens once the score, the level and the tags are answered (not the comment)
    assert page.locator("#step-rating fieldset.q-question:disabled").count() == 0
    assert page.locator(".q-media-row").inner_text().endswith("0 of 3 answered")
    choose(page, "overall", 7)
    assert hint(page) == "Still to answer (2): Object-Text Consistency, Light Quality."
    choose(page, "object_text", 3)
    assert page.locator("#next").is_disabled()
    choose(page, "light", ["soft_light"])
    assert page.locator("#next").is_enabled()
    assert hint(page) == "Press Next (or Enter) to save your answers."
    assert question(page, "light").get_attribute("data-answered") == "yes"
    # and "None of these" counts as an answer, taken back by choosing a tag
    choose(page, "light", [])
    assert question(page, "light").locator("[aria-pressed=true]").all_inner_texts() == [
        "None of these"
    ]
    choose(page, "light", ["soft_light"])
    assert question(page, "light").locator("[aria-pressed=true]").count() == 1
    page.click("#next")
    moved_past(page, first)
    answer_item(page, EXPERT_ANSWERS)
    wait_step(page, "message")
    page.click("#message-continue")
    wait_step(page, "rating")
    # given: a session item asked every question
    while True:
        item = current_item(page)
        if shown_questions(page) == ALL:
            break
        answer_item(page, EXPERT_ANSWERS)
    # when: a score by a click, then another by Space (on its radio button); "Invalid
    # question"; three tags, one taken back by Space; a comment typed; Tab to Next, Enter
    choose(page, "overall", 8)
    question(page, "overall").locator('input[value="4"]').focus()
    page.keyboard.press(" ")
    choose(page, "object_text", "invalid")
    choose(page, "light", ["hard_light", "soft_light", "diffused_light"])
    question(page, "light").locator('button[data-value="soft_light"]').focus()
    page.keyboard.press(" ")
    pressed = question(page, "light").locator("[aria-pressed=true]").all_inner_texts()
    assert pressed == ["Hard Light", "Diffused Light"]
    question(page, "comment").locator("textarea").click()
    page.keyboard.type("Flickers at the end, twice.")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    moved_past(page, item)
    delivered(page)
    # then: stored as given, the comment as typed
    assert stored_labels(item) == {
        "overall": (4.0, False, [], ""),
        "object_text": (None, True, [], ""),
        "light": (None, False, ["diffused_light", "hard_light"], ""),
        "comment": (None, False, [], "Flickers at the end, twice."),
    }


def test_a_video_asked_some_questions_shows_only_those(page, live_server, questionnaire_study):
    tiny = questionnaire_study()
    qualified(page, live_server, tiny)
    restricted = str(restricted_video().public_id)
    # given: the session's items answered until the video asked only the score and tags
    while True:
        item = current_item(page)
        if page.locator("#step-rating video").get_attribute("data-item") == restricted:
            break
        assert shown_questions(page) == ALL
        answer_item(page, EXPERT_ANSWERS)
    # then: only its two questions, under their group's heading where they have one
    assert shown_questions(page) == ["overall", "light"]
    assert page.locator(".q-group h2").all_text_contents() == ["Aesthetics"]
    assert page.locator(".q-media-row").inner_text().endswith("0 of 2 answered")
    # when: a score, and none of the tags
    choose(page, "overall", 9)
    assert page.locator("#next").is_disabled()
    assert hint(page) == "Still to answer (1): Light Quality."
    choose(page, "light", [])
    page.click("#next")
    moved_past(page, item)
    delivered(page)
    # then
    assert stored_labels(item) == {
        "overall": (9.0, False, [], ""),
        "light": (None, False, [], ""),
    }


def test_answers_given_offline_are_sent_once_in_order_when_the_connection_is_back(
    page, context, live_server, questionnaire_study
):
    tiny = questionnaire_study()
    qualified(page, live_server, tiny)
    order = server_order()
    wait_window(page)
    # when: offline, the rater answers three items, each with its own score
    context.set_offline(True)
    given, sources = [], []
    for score in (1, 2, 3):
        sources.append(page.locator("#step-rating video").get_attribute("src"))
        given.append(answer_item(page, {**EXPERT_ANSWERS, "overall": score}))
    # then: the page went on from its window's downloads; nothing is stored yet
    assert given == order[:3]
    assert all(source.startswith("blob:") for source in sources[1:])
    assert stored_items() == []
    # when: back online
    context.set_offline(False)
    delivered(page)
    # then: each stored once, in order, with its score
    assert stored_items() == order[:3]
    assert [stored_labels(item)["overall"][0] for item in given] == [1.0, 2.0, 3.0]
    assert LabelAnswer.objects.filter(answer__assignment__isnull=False).count() == sum(
        len(stored_labels(item)) for item in given
    )


def test_a_question_of_one_answer_is_a_radio_group_of_one_tab_stop(
    page, live_server, questionnaire_study
):
    # given: the light question of one tag, the top level described, on a qualified
    # rater's item
    tiny = questionnaire_study()
    questions = Question.objects.filter(dimension__study=tiny.study)
    questions.filter(dimension__key="light").update(multiple=False)
    levels = questions.get(dimension__key="object_text").options
    levels[-1]["description"] = "Every object the prompt names is there, as it says."
    questions.filter(dimension__key="object_text").update(options=levels)
    questions_forget(tiny.study.pk)
    qualified(page, live_server, tiny)
    while shown_questions(page) != ALL:
        answer_item(page, EXPERT_ANSWERS)
    item = current_item(page)
    assert page.locator("#step-rating video").get_attribute("aria-label") == "Generated video"

    # then: each question of one answer is a radio group named by its question, an
    # option a radio button ("None of these" among the tags)
    def radios(group: str) -> list[str]:
        snapshot = page.get_by_role("radiogroup", name=group, exact=True).aria_snapshot()
        return re.findall(r'- radio "([^"]+)"', snapshot)

    assert radios("Overall Score") == [str(score) for score in range(11)]
    assert radios("Object-Text Consistency") == [
        "Completely inconsistent",
        "Partially consistent",
        "Fully consistent Every object the prompt names is there, as it says.",
        "Invalid question",
    ]
    tags = ["Hard Light", "Soft Light", "Diffused Light", "None of these"]
    assert radios("Light Quality") == tags
    # when: by keys from the first score (where the focus is once the video has played):
    # → three times; Tab to the level, ↓ twice; Tab to the tags, Space, →
    assert page.evaluate("() => document.activeElement.value") == "0"
    for key in ["ArrowRight"] * 3 + ["Tab"] + ["ArrowDown"] * 2 + ["Tab", " ", "ArrowRight"]:
        page.keyboard.press(key)
    # then: one Tab stop a question, the arrows chose as they moved
    checked = page.get_by_role("radio", checked=True)
    assert checked.evaluate_all("rs => rs.map(r => r.name + '=' + r.value)") == [
        "q-overall=3",
        "q-object_text=3",
        "q-light=soft_light",
    ]
    # and a chosen level's description is legible on its blue (4.5:1)
    assert contrast(question(page, "object_text").locator(".q-description")) >= 4.5
    # when: saved by Enter (the focus on a radio button)
    page.keyboard.press("Enter")
    moved_past(page, item)
    delivered(page)
    # then
    assert stored_labels(item) == {
        "overall": (3.0, False, [], ""),
        "object_text": (3.0, False, [], ""),
        "light": (None, False, ["soft_light"], ""),
    }


def test_a_new_video_takes_the_focus_without_scrolling_its_heading_away(
    page, live_server, questionnaire_study
):
    # given: a qualified rater, their page opened again at its top on a laptop, its video
    # slowed so that the questions stay closed
    tiny = questionnaire_study()
    qualified(page, live_server, tiny)
    page.add_init_script(SLOW_PLAY)
    page.set_viewport_size({"width": 1366, "height": 680})
    page.reload()
    # when: the item is shown
    page.wait_for_selector("#step-rating:not([hidden]) .widget-questionnaire")
    # then: the item's region has the focus, the page as it was: the heading and the
    # progress in view (the region is taller than the window: focused with a scroll, its
    # top went to the window's)
    assert page.evaluate(FOCUS) == [False, True, True]
    assert page.evaluate("scrollY") == 0
    done, length = page.locator("#progress").evaluate("p => [p.value, p.max]")
    assert page.locator("#item-said").inner_text() == f"Video {done + 1} of {length}"


def test_on_a_phone_the_questions_and_next_fit_the_screen(page, live_server, questionnaire_study):
    # given: the tiny study with a fourth question to answer, on a phone
    from annotation.models import Dimension

    tiny = questionnaire_study()
    framing = Dimension.objects.create(study=tiny.study, key="framing", label="Framing", order=9)
    Question.objects.create(dimension=framing, kind="score", scale_min=0, scale_max=10)
    questions_forget(tiny.study.pk)
    page.set_viewport_size(PHONE)
    enter(page, live_server, tiny)
    agree(page)
    through_tutorial(page)
    question(page, "framing").locator("input:enabled").first.wait_for(state="attached")
    # then: the four questions to answer named, three by name and the others counted;
    # the eleven steps of a score wrap: nothing scrolls sideways
    assert hint(page) == (
        "Still to answer (4): Overall Score, Object-Text Consistency, Light Quality, 1 more."
    )
    fits_the_screen(page)
    # when: every question answered by taps, Next is in reach
    for key, value in {**EXPERT_ANSWERS, "framing": 10}.items():
        reachable(page, f'#step-rating fieldset[data-question="{key}"] .q-option:last-child')
        choose(page, key, value)
    reachable(page, "#next")
    item = answer_item(page, {})
    delivered(page)
    stored = LabelAnswer.objects.get(answer__item__public_id=item, dimension=framing)
    assert stored.number == 10.0
