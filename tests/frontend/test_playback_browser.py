"""A video the rater's browser cannot play, in real Chromium: the page says so and offers
to skip it; a skip reaches the server, which takes the item out and tells the team."""

import pytest
from django.core.files.base import ContentFile

from annotation.models import Participation, PlaybackReport, Stimulus
from tests.frontend.rater_browser import agree, enter, finish_tutorial

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def damage(stimulus: Stimulus) -> None:
    """Zero the rendition's first 4 KB: its container can no longer be read."""
    stimulus.refresh_from_db()
    data = bytearray(stimulus.rendition.read())
    stimulus.rendition.close()
    data[:4096] = bytes(4096)
    name = stimulus.rendition.name.rsplit("/", 1)[-1]
    stimulus.rendition.save(name, ContentFile(bytes(data)), save=True)


def test_a_test_video_that_cannot_play_is_skipped_and_reported(page, live_server, rater_study):
    # given: both qualification videos damaged after they were processed
    tiny = rater_study()
    for stimulus in tiny.qualification:
        damage(stimulus)
    enter(page, live_server, tiny)
    agree(page)
    finish_tutorial(page)
    # then: the first test video fails; the page says so and offers the skip
    skip = page.locator("#skip-video")
    skip.wait_for(state="visible")
    assert "could not be loaded" in page.locator("#notice").inner_text()
    first = page.locator("#step-rating").get_attribute("data-item")
    # when
    skip.click()
    # then: the next test video is shown, and fails too; skipped as well
    page.wait_for_function(
        "item => document.querySelector('#step-rating').dataset.item !== item", arg=first
    )
    skip.wait_for(state="visible")
    skip.click()
    # then: no test is left, so the rater is let through to the study's videos
    page.wait_for_function("document.querySelector('#step-rating').dataset.kind === 'rating'")
    assert "skipped" in page.locator("#notice").inner_text()
    reports = list(PlaybackReport.objects.order_by("pk"))
    assert str(reports[0].item.public_id) == first
    shown = {r.item.members.get().stimulus_id for r in reports}
    assert shown == {s.pk for s in tiny.qualification}
    assert all(r.detail.startswith("MediaError ") for r in reports)
    assert Participation.objects.get(rater__external_id="P1").qualification_state == "passed"
