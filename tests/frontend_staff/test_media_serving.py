"""Videos behind opaque ids: range requests, and only for those who may watch them."""

import pytest
from django.core.files.base import ContentFile

from tests.annotation.rater_fixtures import onboard, rater_client, tiny_study
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

BYTES = bytes(range(256)) * 40  # 10,240 bytes standing in for a rendition


def with_rendition(stimulus):
    stimulus.rendition.save(f"renditions/{stimulus.checksum}.mp4", ContentFile(BYTES))
    return stimulus


def rater_with_session(tiny):
    client, user = rater_client()
    onboard(client, tiny)
    body = client.get(tiny.base + "next/").json()
    from django.test import Client

    browser = Client()
    browser.force_login(user)
    return browser, body["item"]


def test_a_rater_streams_their_current_video_with_ranges():
    tiny = tiny_study()
    for stimulus in tiny.study.stimuli.all():
        with_rendition(stimulus)
    browser, item = rater_with_session(tiny)
    # whole file
    whole = browser.get(item["video_url"])
    assert whole.status_code == 200 and whole["Accept-Ranges"] == "bytes"
    assert b"".join(whole.streaming_content) == BYTES
    # a range, as a browser seeking
    part = browser.get(item["video_url"], HTTP_RANGE="bytes=100-199")
    assert part.status_code == 206
    assert part["Content-Range"] == f"bytes 100-199/{len(BYTES)}"
    assert b"".join(part.streaming_content) == BYTES[100:200]
    # a suffix range and an open-ended one
    tail = browser.get(item["video_url"], HTTP_RANGE="bytes=-10")
    assert b"".join(tail.streaming_content) == BYTES[-10:]
    rest = browser.get(item["video_url"], HTTP_RANGE="bytes=10200-")
    assert b"".join(rest.streaming_content) == BYTES[10200:]
    # out of range
    assert browser.get(item["video_url"], HTTP_RANGE="bytes=99999-").status_code == 416


def test_urls_are_opaque():
    tiny = tiny_study()
    stimulus = with_rendition(tiny.study.stimuli.filter(role="golden").first())
    url = f"/media/v/{stimulus.public_id}/"
    assert str(stimulus.pk) not in url.replace(str(stimulus.public_id), "")
    assert "golden" not in url


def test_nobody_else_can_fetch_a_video():
    tiny = tiny_study()
    for stimulus in tiny.study.stimuli.all():
        with_rendition(stimulus)
    _, item = rater_with_session(tiny)
    from django.test import Client

    stranger = Client()
    assert stranger.get(item["video_url"]).status_code == 302  # to sign-in
    other = Client()
    other.force_login(UserFactory())
    assert other.get(item["video_url"]).status_code == 404  # same answer as no video
    staff = Client()
    staff.force_login(UserFactory(is_staff=True))
    assert staff.get(item["video_url"]).status_code == 200


def test_a_video_not_yet_processed_is_not_served():
    tiny = tiny_study()
    browser, item = rater_with_session(tiny)  # no rendition files
    assert browser.get(item["video_url"]).status_code == 404


def test_a_poster_whose_file_is_missing_is_not_found_not_an_error():
    # given: a stimulus whose poster field names a file that is not (or no longer) there
    tiny = tiny_study()
    stimulus = tiny.study.stimuli.first()
    stimulus.poster = "renditions/ab/missing.jpg"
    stimulus.save(update_fields=["poster"])
    from django.test import Client

    staff = Client()
    staff.force_login(UserFactory(is_staff=True))
    # when
    response = staff.get(f"/media/p/{stimulus.public_id}/")
    # then: the same answer as for a video not processed yet
    assert response.status_code == 404
    # and once the file is there, it is served
    stimulus.poster.save("renditions/ab/present.jpg", ContentFile(b"\xff\xd8jpeg"))
    present = staff.get(f"/media/p/{stimulus.public_id}/")
    assert present.status_code == 200
    assert b"".join(present.streaming_content) == b"\xff\xd8jpeg"
