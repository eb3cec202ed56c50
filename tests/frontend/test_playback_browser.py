"""A video the rater's browser cannot play, in real Chromium: the page says so and offers
to skip it; a skip reaches the server, which takes the item out and tells the team."""

import subprocess

import pytest
from django.core.files.base import ContentFile

from annotation.models import Participation, PlaybackReport, Stimulus
from tests.frontend.rater_browser import agree, current_item, enter, finish_tutorial, onboard

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


def test_an_odd_sized_video_is_shown_unscaled_with_its_pad_pixel_hidden(
    page, live_server, rater_study, tmp_path
):
    # given: the session's videos 65 x 49, their renditions padded to 66 x 50 as the
    # transcode pads an odd side (one pixel, right and bottom)
    tiny = rater_study(rest_every=0)
    rendition = tmp_path / "padded.mp4"
    subprocess.run(
        ["ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
         "testsrc2=size=66x50:rate=10", "-t", "0.5", "-pix_fmt", "yuv420p", str(rendition)],
        check=True,
    )  # fmt: skip
    padded = rendition.read_bytes()
    for stimulus in Stimulus.objects.filter(study=tiny.study, role__in=["stimulus", "golden"]):
        stimulus.rendition.save(f"{stimulus.public_id}-odd.mp4", ContentFile(padded), save=False)
        stimulus.width, stimulus.height = 65, 49
        stimulus.save()
    # when
    onboard(page, live_server, tiny)
    current_item(page)
    # then: the element is the rendition's size (no resampling), the pad pixel clipped
    box = page.evaluate(
        """() => { const v = document.querySelector('#stage video');
                   const r = v.getBoundingClientRect();
                   return [r.width, r.height, v.videoWidth, v.videoHeight,
                           getComputedStyle(v).clipPath]; }"""
    )
    assert box == [66, 50, 66, 50, "inset(0px 1px 1px 0px)"]
