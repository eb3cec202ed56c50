"""Videos behind opaque ids: range requests, and only for those who may watch them."""

import pytest
from django.core.files.base import ContentFile

from annotation.models import Assignment
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


def rater_with_videos():
    """A rater at the first item of a session whose videos all have a rendition."""
    tiny = tiny_study()
    for stimulus in tiny.study.stimuli.all():
        with_rendition(stimulus)
    return rater_with_session(tiny)


def test_a_rater_streams_their_current_video_with_ranges():
    browser, item = rater_with_videos()
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


@pytest.mark.parametrize(
    ("state", "status"), [("active", 200), ("paused", 200), ("finished", 404), ("excluded", 404)]
)
def test_a_sessions_videos_are_served_only_while_it_goes_on(state, status):
    # given: a rater's session, in each state
    browser, item = rater_with_videos()
    Assignment.objects.update(state=state)
    # when
    response = browser.get(item["video_url"])
    # then
    assert response.status_code == status


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


def staff_with_video():
    from django.test import Client

    tiny = tiny_study()
    stimulus = with_rendition(tiny.study.stimuli.first())
    staff = Client()
    staff.force_login(UserFactory(is_staff=True))
    return staff, f"/media/v/{stimulus.public_id}/", stimulus


@pytest.mark.parametrize(
    "header",
    [
        "bytes=abc",  # not numbers
        "items=0-1",  # a unit this server does not know
        "bytes=5-2",  # last byte before the first: invalid (RFC 9110, 14.1.1)
        "bytes=-",  # neither end
        "bytes=1-2-3",
        "bytes=0-1,4-5",  # several ranges: served whole rather than as multipart
    ],
)
def test_a_range_header_not_understood_or_invalid_is_ignored(header):
    # given
    staff, url, _ = staff_with_video()
    # when
    response = staff.get(url, HTTP_RANGE=header)
    # then: RFC 9110, 14.2: the whole file, as without the header
    assert response.status_code == 200
    assert response["Content-Length"] == "10240"
    assert response["Accept-Ranges"] == "bytes"
    assert "Content-Range" not in response
    assert b"".join(response.streaming_content) == BYTES


@pytest.mark.parametrize("header", ["bytes=10240-", "bytes=99999-100000", "bytes=-0"])
def test_a_valid_range_past_the_end_is_unsatisfiable(header):
    # given
    staff, url, _ = staff_with_video()
    # when
    response = staff.get(url, HTTP_RANGE=header)
    # then
    assert response.status_code == 416
    assert response["Content-Range"] == "bytes */10240"


@pytest.mark.parametrize(
    ("header", "status", "length", "content_range"),
    [
        (None, 200, "10240", None),
        ("bytes=100-199", 206, "100", "bytes 100-199/10240"),
        ("bytes=-10", 206, "10", "bytes 10230-10239/10240"),
        ("bytes=5-2", 200, "10240", None),
    ],
)
def test_head_answers_as_get_does_without_a_body(header, status, length, content_range):
    # given
    staff, url, _ = staff_with_video()
    extra = {"HTTP_RANGE": header} if header else {}
    # when
    head = staff.head(url, **extra)
    get = staff.get(url, **extra)
    # then: the same status and headers, and no body
    assert head.status_code == get.status_code == status
    assert dict(head.headers) == dict(get.headers)
    assert head["Content-Length"] == length
    assert head["Content-Type"] == "video/mp4"
    assert head["Accept-Ranges"] == "bytes"
    assert head.get("Content-Range") == content_range
    assert b"".join(head.streaming_content) == b""


def test_head_is_refused_to_the_same_people_as_get():
    # given
    tiny = tiny_study()
    for stimulus in tiny.study.stimuli.all():
        with_rendition(stimulus)
    browser, item = rater_with_session(tiny)
    unprocessed = tiny.study.stimuli.exclude(public_id=item["video_url"].split("/")[-2]).first()
    unprocessed.rendition = ""
    unprocessed.save(update_fields=["rendition"])
    from django.test import Client

    stranger, other = Client(), Client()
    other.force_login(UserFactory())
    # when
    answers = {
        "stranger": stranger.head(item["video_url"]).status_code,
        "other": other.head(item["video_url"]).status_code,
        "rater": browser.head(item["video_url"]).status_code,
        "not ready": browser.head(f"/media/v/{unprocessed.public_id}/").status_code,
    }
    # then: the answers GET gets
    assert answers == {"stranger": 302, "other": 404, "rater": 200, "not ready": 404}
    assert browser.post(item["video_url"]).status_code == 405


@pytest.mark.parametrize("method", ["get", "head"])
def test_in_production_nginx_serves_the_file_for_get_and_head(settings, method):
    # given: production hands checked requests to nginx (deploy/nginx.conf)
    settings.MOSAIC_MEDIA_ACCEL_REDIRECT = "/protected-media/"
    staff, url, stimulus = staff_with_video()
    # when: nginx answers the Range header itself, whatever it is
    response = getattr(staff, method)(url, HTTP_RANGE="bytes=5-2")
    # then
    assert response.status_code == 200
    assert response["X-Accel-Redirect"] == f"/protected-media/{stimulus.rendition.name}"
    assert response["Content-Type"] == "video/mp4"
    assert response.content == b""


# ---------------------------------------------------------------- caching


def test_a_video_is_cached_long_and_revalidated_by_its_etag():
    browser, item = rater_with_videos()
    # when
    first = browser.get(item["video_url"])
    # then: immutable per URL, private to the rater
    etag, modified = first["ETag"], first["Last-Modified"]
    assert etag.startswith('"') and modified
    assert first["Cache-Control"] == "private, max-age=31536000, immutable"
    # when: asked again with what the browser holds
    again = browser.get(item["video_url"], HTTP_IF_NONE_MATCH=etag)
    since = browser.get(item["video_url"], HTTP_IF_MODIFIED_SINCE=modified)
    # then: 304 without a body, with the validators
    for response in (again, since):
        assert response.status_code == 304
        assert response["ETag"] == etag
        assert response["Cache-Control"] == "private, max-age=31536000, immutable"
    assert browser.get(item["video_url"], HTTP_IF_NONE_MATCH='"other"').status_code == 200


def test_a_range_is_served_only_while_if_range_still_names_the_file():
    browser, item = rater_with_videos()
    whole = browser.get(item["video_url"])
    etag, modified = whole["ETag"], whole["Last-Modified"]
    # when: resuming a download of the same file, by ETag or by date
    by_etag = browser.get(item["video_url"], HTTP_RANGE="bytes=100-", HTTP_IF_RANGE=etag)
    by_date = browser.get(item["video_url"], HTTP_RANGE="bytes=100-", HTTP_IF_RANGE=modified)
    # then: the rest of it
    for response in (by_etag, by_date):
        assert response.status_code == 206
        assert b"".join(response.streaming_content) == BYTES[100:]
    # when: the file the browser held has changed (another validator, or a weak one)
    for stale in ('"0-0"', f"W/{etag}", "Tue, 01 Jan 2030 00:00:00 GMT"):
        response = browser.get(item["video_url"], HTTP_RANGE="bytes=100-", HTTP_IF_RANGE=stale)
        # then: the whole current file, never a piece of another one
        assert response.status_code == 200, stale
        assert b"".join(response.streaming_content) == BYTES


def test_in_production_nginx_answers_the_validators(settings):
    """nginx sends the file (X-Accel-Redirect): its location sets the cache headers."""
    from pathlib import Path

    conf = (Path(settings.BASE_DIR) / "deploy" / "nginx.conf").read_text()
    location = conf[conf.index("location /protected-media/") :]
    location = location[: location.index("}")]
    assert "etag on;" in location
    assert 'add_header Cache-Control "private, max-age=31536000, immutable";' in location
