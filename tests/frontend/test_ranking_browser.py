"""The ranking widget in Chromium: every video played before the order opens, placing by
clicks, dragging and keys, two videos compared side by side, and a ranking given offline
sent once when the connection is back."""

import uuid

import pytest

from annotation.models import Answer, ItemMember, RankingPlacement
from tests.frontend.rater_browser import (
    PHONE,
    agree,
    delivered,
    enter,
    fits_the_screen,
    reachable,
    wait_step,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def shown_videos(page) -> list[str]:
    page.wait_for_selector("#step-rating:not([hidden]) .rank-tile")
    return page.eval_on_selector_all(".rank-tile", "tiles => tiles.map(t => t.dataset.video)")


def expected_order(item_videos: list[str]) -> list[str]:
    """Best first as a golden item expects (its middling video between), else as shown."""
    expected = dict(
        ItemMember.objects.filter(stimulus__public_id__in=item_videos).values_list(
            "stimulus__public_id", "expected"
        )
    )
    place = {"best": 0, "": 1, "worst": 2}
    return sorted(item_videos, key=lambda video: place[expected.get(uuid.UUID(video), "")])


def play_all(page, videos: list[str]) -> None:
    for video in videos:
        page.click(f'.rank-tile[data-video="{video}"] .rank-poster')
        page.wait_for_selector(f'.rank-tile[data-video="{video}"][data-played="yes"]')


def rank_by_clicks(page) -> list[str]:
    item = page.locator("#step-rating").get_attribute("data-item")
    videos = shown_videos(page)
    play_all(page, videos)
    order = expected_order(videos)
    for video in order:
        page.click(f'.rank-tile[data-video="{video}"] .rank-place')
    page.click("#next")
    page.wait_for_function(
        """item => document.querySelector('#rater').dataset.step !== 'rating'
                   || document.querySelector('#step-rating').dataset.item !== item""",
        arg=item,
    )
    return order


def played_item(page, live_server, ranking_study) -> tuple[str, list[str]]:
    """A qualified rater's first session item with every video played: (item, videos)."""
    qualified(page, live_server, ranking_study())
    item = page.locator("#step-rating").get_attribute("data-item")
    videos = shown_videos(page)
    play_all(page, videos)
    return item, videos


def stored_order(page, item: str) -> list[str]:
    """Once the page moved past `item` and sent it: its stored order, best first."""
    page.wait_for_function(
        "item => document.querySelector('#step-rating').dataset.item !== item", arg=item
    )
    delivered(page)
    placed = RankingPlacement.objects.filter(
        answer__item__public_id=item, answer__assignment__isnull=False
    ).order_by("rank")
    return [str(p.stimulus.public_id) for p in placed]


def qualified(page, live_server, tiny) -> None:
    enter(page, live_server, tiny)
    agree(page)
    page.wait_for_selector("#tutorial-empty:not([hidden])")
    page.click("#tutorial-done")
    wait_step(page, "rating")
    for _ in range(2):
        rank_by_clicks(page)
    wait_step(page, "message")
    page.click("#message-continue")
    wait_step(page, "rating")


def test_the_order_opens_once_every_video_is_played_and_is_stored_as_placed(
    page, live_server, ranking_study
):
    tiny = ranking_study()
    qualified(page, live_server, tiny)
    item = page.locator("#step-rating").get_attribute("data-item")
    videos = shown_videos(page)
    assert len(videos) == 3
    # the first video plays at once; placing all before every one was played is not enough
    for video in videos:
        page.click(f'.rank-tile[data-video="{video}"] .rank-place')
    assert page.locator("#next").is_disabled()
    assert "Play every video" in page.locator("#rating-hint").inner_text()
    # take them back, then play every one, comparing two side by side
    for video in videos:
        page.click(f'.rank-tile[data-video="{video}"] .rank-place')
    assert page.locator(".rank-row").count() == 0
    play_all(page, videos[:2])
    page.click(f'.rank-tile[data-video="{videos[2]}"] .rank-compare')
    assert page.locator(".viewer-slot:not([hidden]) video").count() == 2
    page.wait_for_selector(f'.rank-tile[data-video="{videos[2]}"][data-played="yes"]')
    # when: by keys: the third video placed first, then the first, then the second
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("ArrowLeft")  # the focus moves from the third to the second
    page.keyboard.press("ArrowRight")  # and back to the third
    page.keyboard.press("p")
    page.keyboard.press("ArrowRight")  # the first (wraps round)
    page.keyboard.press("p")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("p")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "item => document.querySelector('#step-rating').dataset.item !== item", arg=item
    )
    delivered(page)
    # then
    answer = Answer.objects.get(item__public_id=item, assignment__isnull=False)
    assert answer.layout == videos
    placed = RankingPlacement.objects.filter(answer=answer).order_by("rank")
    assert [str(p.stimulus.public_id) for p in placed] == [videos[2], videos[0], videos[1]]
    assert answer.plays >= 3


def test_the_keyboard_starts_in_the_videos(page, live_server, ranking_study):
    # given: a qualified rater whose next item has just opened
    qualified(page, live_server, ranking_study())
    # then: the focus is on the videos (named, with the keys), not at the top of the page
    focused = "() => [document.activeElement.dataset.field, document.activeElement.className]"
    page.wait_for_function("() => document.activeElement.dataset.field === 'grid'")
    label = page.evaluate(
        "() => [document.activeElement.getAttribute('aria-labelledby'),"
        " document.activeElement.getAttribute('aria-describedby')]"
    )
    assert [page.locator(f"#{name}").inner_text() for name in label][0] == "Videos"
    assert page.locator(f"#{label[1]}").inner_text().startswith("Keys:")
    # and the keys work from there: → chooses the second video, with the focus, and says
    # where it stands
    videos = shown_videos(page)
    page.keyboard.press("ArrowRight")
    assert page.locator(".rank-tile.focused").get_attribute("data-video") == videos[1]
    assert page.evaluate("() => document.activeElement.dataset.video") == videos[1]
    assert said(page) == "Video B: Not played yet"
    # and Tab goes on to that video's poster
    page.keyboard.press("Tab")
    assert page.evaluate(focused)[1] == "rank-poster"
    assert (
        page.evaluate("() => document.activeElement.closest('.rank-tile').dataset.video")
        == (videos[1])
    )


def test_a_ranking_given_offline_is_sent_once_when_the_connection_is_back(
    page, context, live_server, ranking_study
):
    tiny = ranking_study()
    qualified(page, live_server, tiny)
    page.wait_for_function(
        "() => { const [r, h] = document.querySelector('#rater').dataset.ahead.split('/');"
        " return Number(h) > 1 && r === h; }"
    )
    # when: offline, the rater ranks the item on screen
    context.set_offline(True)
    item = page.locator("#step-rating").get_attribute("data-item")
    order = rank_by_clicks(page)
    # then: the page goes on with the next item of its window; nothing stored yet
    assert wait_step(page, "rating") == "rating"
    assert page.locator("#step-rating").get_attribute("data-item") != item
    assert not Answer.objects.filter(item__public_id=item, assignment__isnull=False).exists()
    # when: back online
    context.set_offline(False)
    delivered(page)
    # then: stored once, as ranked
    answer = Answer.objects.get(item__public_id=item, assignment__isnull=False)
    placed = RankingPlacement.objects.filter(answer=answer).order_by("rank")
    assert [str(p.stimulus.public_id) for p in placed] == order


def test_tied_places_where_the_study_allows_them(page, live_server, ranking_study):
    from annotation.designs.ranking import settings_of

    tiny = ranking_study()
    chosen = settings_of(tiny.study)
    chosen.ties_allowed = True
    chosen.save()
    qualified(page, live_server, tiny)
    item = page.locator("#step-rating").get_attribute("data-item")
    videos = shown_videos(page)
    play_all(page, videos)
    # when: the first placed, the second in the same place, the third after them
    assert page.locator(f'.rank-tile[data-video="{videos[1]}"] .rank-tie').is_hidden()
    page.click(f'.rank-tile[data-video="{videos[0]}"] .rank-place')
    page.click(f'.rank-tile[data-video="{videos[1]}"] .rank-tie')
    page.click(f'.rank-tile[data-video="{videos[2]}"] .rank-place')
    assert page.locator(".rank-row").count() == 2
    page.click("#next")
    page.wait_for_function(
        "item => document.querySelector('#step-rating').dataset.item !== item", arg=item
    )
    delivered(page)
    # then
    ranks = dict(
        RankingPlacement.objects.filter(answer__item__public_id=item).values_list(
            "stimulus__public_id", "rank"
        )
    )
    assert [ranks[uuid.UUID(video)] for video in videos] == [1, 1, 3]


def test_videos_are_placed_and_reordered_by_dragging(page, live_server, ranking_study):
    item, videos = played_item(page, live_server, ranking_study)
    # when: each poster dragged into the order, then the last dragged onto the first place
    for video in videos:
        page.drag_and_drop(f'.rank-tile[data-video="{video}"]', ".rank-order")
    page.drag_and_drop(f'.rank-chip[data-video="{videos[2]}"]', '.rank-row[data-place="1"]')
    # then
    chips = page.eval_on_selector_all(".rank-chip", "chips => chips.map(c => c.dataset.video)")
    assert chips == [videos[2], videos[0], videos[1]]
    page.click("#next")
    assert stored_order(page, item) == chips


def said(page) -> str:
    return page.locator('.widget-ranking [data-field="said"]').inner_text()


def test_each_button_is_named_with_its_video_and_the_keys_say_what_they_did(
    page, live_server, ranking_study
):
    # given: an item's three videos played
    _, videos = played_item(page, live_server, ranking_study)
    grid, order = page.locator(".rank-grid"), page.locator(".rank-order")
    # then: the video in the viewer is named as its tile, and each tile's buttons say
    # which video they are for
    assert page.locator(".rank-viewer video").get_attribute("aria-label") == "Video C"
    for letter in "ABC":
        for name in (f"Video {letter}", f"Compare video {letter}", f"Place video {letter}"):
            assert grid.get_by_role("button", name=name, exact=True).count() == 1
    # when: the first placed by a click, the third by its key
    grid.get_by_role("button", name="Place video A", exact=True).click()
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("ArrowLeft")  # from the first, round to the third
    assert said(page) == "Video C: Played"
    page.keyboard.press("p")
    # then: said, with the place; the button now takes it back, named so; the order's
    # buttons name their video too
    assert said(page) == "Video C: Played · in place 2"
    assert page.evaluate("() => document.activeElement.dataset.video") == videos[2]
    assert grid.get_by_role("button", name="Take back video C", exact=True).inner_text() == (
        "Take back"
    )
    for letter in "AC":
        for name in (f"Move video {letter} up", f"Move video {letter} down"):
            assert order.get_by_role("button", name=name, exact=True).count() == 1
        assert order.get_by_role("button", name=f"Take back video {letter}").count() == 1

    # and a placed video's button is one line high, as an unplaced one's (the place is
    # in its state's line)
    placed = page.locator(f'.rank-tile[data-video="{videos[2]}"] .rank-place')
    unplaced = page.locator(f'.rank-tile[data-video="{videos[1]}"] .rank-place')
    assert placed.bounding_box()["height"] == unplaced.bounding_box()["height"]
    status = page.locator(f'.rank-tile[data-video="{videos[2]}"] .rank-status')
    assert status.inner_text() == "Played · in place 2"


def test_tab_enter_and_space_press_the_focused_buttons(page, live_server, ranking_study):
    item, videos = played_item(page, live_server, ranking_study)
    # when: each video placed by Enter or Space on its focused "Place" button, in order
    for video, key in zip(videos, ["Enter", " ", "Enter"], strict=True):
        page.locator(f'.rank-tile[data-video="{video}"] .rank-place').focus()
        page.keyboard.press(key)
    # then: placed, not saved (Enter was the button's, not the page's)
    assert page.locator(".rank-row").count() == 3
    assert page.locator("#step-rating").get_attribute("data-item") == item
    # when: Enter on the second's "move up", twice
    page.locator(f'button[data-video="{videos[1]}"][data-action="up"]').focus()
    page.keyboard.press("Enter")
    page.keyboard.press("Enter")
    # then: up to the top; the second Enter met the same focused button there (nothing
    # left to move), not the page's save
    chips = page.eval_on_selector_all(".rank-chip", "chips => chips.map(c => c.dataset.video)")
    assert chips == [videos[1], videos[0], videos[2]]
    assert page.locator("#step-rating").get_attribute("data-item") == item
    # when: the focus leaves the buttons, and Enter saves
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("Enter")
    assert stored_order(page, item) == [videos[1], videos[0], videos[2]]


def test_a_worked_example_is_tried_then_shown_in_the_experts_order(
    page, live_server, ranking_study, clip
):
    from annotation.models import Dimension
    from tests.frontend.conftest import worked_example
    from tests.frontend.test_preference_browser import tutorial_example

    # given: a ranking study with one worked example of three videos, its worst first
    tiny = ranking_study()
    criterion = Dimension.objects.filter(study=tiny.study).order_by("order").first()
    note = "Sharp, then grainy, then blurred."
    videos = worked_example(tiny, clip, ends="wmb", question=criterion, note=note)
    # when
    example = tutorial_example(page, live_server, tiny, criterion)
    figures = example.locator(".rank-example figure")

    def shown() -> tuple[list[str], list[str]]:
        captions = [figures.nth(i).locator("figcaption").inner_text() for i in range(3)]
        sources = [figures.nth(i).locator("video").get_attribute("src") for i in range(3)]
        return captions, sources

    def url(end: str) -> str:
        return f"/media/v/{videos[end].public_id}/"

    # then: first tried, in another order than the experts' (never their best first),
    # each named by a letter, the experts' answer hidden and Check closed
    assert shown() == (
        ["Video A", "Video B", "Video C"],
        [url("between"), url("best"), url("worst")],
    )
    assert example.locator('[data-field="answer"]').is_hidden()
    assert example.locator(".exemplar-check").is_disabled()
    page.wait_for_function(
        "v => v.readyState >= 1", arg=figures.nth(2).locator("video").element_handle()
    )
    # when: placed C, B, A, then C taken back and placed again: B, A, C
    for letter in "CBA":
        example.get_by_role("button", name=f"Place video {letter}").click()
    example.get_by_role("button", name="Take back video C").click()
    assert shown()[0] == ["Video A · in place 2", "Video B · in place 1", "Video C"]
    assert example.locator(".exemplar-check").is_disabled()
    example.get_by_role("button", name="Place video C").click()
    example.locator(".exemplar-check").click()
    # then: best first, worst last, each named by its place and the rater's
    assert shown() == (
        [
            "Best (video B, your place 1)",
            "In between (video A, your place 2)",
            "Worst (video C, your place 3)",
        ],
        [url("best"), url("between"), url("worst")],
    )
    assert example.locator(".rank-place").count() == 0
    assert example.locator(".exemplar-yours").inner_text() == (
        "Your order: B, A, C. You put the experts' best above their worst, which the test "
        "counts as right."
    )
    # and: the experts' order in words, and why
    assert example.locator('[data-field="answer"]').inner_text() == (
        "The experts' answer: the best first, the worst last, the others in between, as shown"
    )
    assert example.locator('[data-field="note"]').inner_text() == f"Why: {note}"


def test_on_a_phone_the_order_is_reordered_by_taps_on_buttons_big_enough(
    page, live_server, ranking_study
):
    # given: a qualified rater on a phone, every video played and placed as shown
    page.set_viewport_size(PHONE)
    item, videos = played_item(page, live_server, ranking_study)
    for video in videos:
        page.click(f'.rank-tile[data-video="{video}"] .rank-place')
    fits_the_screen(page)
    # then: the order's buttons (↑ ↓ ✕; dragging needs a mouse) are at least 24 px, the
    # smallest target WCAG 2.2 allows (2.5.8)
    sizes = page.eval_on_selector_all(
        ".rank-row button", "bs => bs.map(b => [b.offsetWidth, b.offsetHeight])"
    )
    assert len(sizes) == 9 and min(min(size) for size in sizes) >= 24, sizes
    # when: the last moved up by a tap, then Next
    last = f'.rank-row button[data-video="{videos[2]}"][data-action="up"]'
    reachable(page, last)
    page.click(last)
    reachable(page, "#next")
    page.click("#next")
    # then
    assert stored_order(page, item) == [videos[0], videos[2], videos[1]]
