"""The consent text a rater agrees to is the one their page showed, and it is kept: a text
edited meanwhile is refused with 409 consent_changed and shown again."""

import pytest

from annotation.models import Participation, Study
from tests.annotation.rater_fixtures import rater_client, tiny_study

pytestmark = pytest.mark.django_db

CONSENT = {"accept": True, "viewport_width": 1280, "viewport_height": 800}


def test_the_text_agreed_to_is_kept_with_the_participation():
    tiny = tiny_study(consent_text="My ratings may be published.")
    client, user = rater_client()
    shown = client.get(tiny.base + "state/").json()["study"]
    # when
    response = client.post(
        tiny.base + "consent/",
        {**CONSENT, "consent_version": shown["consent_version"]},
        format="json",
    )
    # then
    assert response.status_code == 200
    participation = Participation.objects.get(rater__user=user)
    assert participation.consented_text == "My ratings may be published."
    # and a later edit of the study's text leaves the record as it was
    Study.objects.filter(pk=tiny.study.pk).update(consent_text="Something else.")
    participation.refresh_from_db()
    assert participation.consented_text == "My ratings may be published."


def test_a_text_edited_since_the_page_showed_it_is_refused_and_shown_again():
    # given: the page shows the text, then the team corrects it
    tiny = tiny_study(consent_text="Version one.")
    client, user = rater_client()
    old = client.get(tiny.base + "state/").json()["study"]["consent_version"]
    Study.objects.filter(pk=tiny.study.pk).update(consent_text="Version two.")
    # when: the rater agrees to what they saw
    response = client.post(
        tiny.base + "consent/", {**CONSENT, "consent_version": old}, format="json"
    )
    # then: refused, nothing recorded, the new version named
    body = response.json()
    new = client.get(tiny.base + "state/").json()["study"]
    assert (response.status_code, body["error"]) == (409, "consent_changed")
    assert body["detail"] == (
        "the consent text has changed since this page showed it: please read it again"
    )
    assert body["consent_version"] == new["consent_version"] != old
    assert new["consent_text"] == "Version two."
    participation = Participation.objects.get(rater__user=user)
    assert participation.consent_at is None and participation.consented_text == ""
    # when: they agree to the new text
    again = client.post(
        tiny.base + "consent/",
        {**CONSENT, "consent_version": new["consent_version"]},
        format="json",
    )
    # then
    assert again.status_code == 200
    participation.refresh_from_db()
    assert participation.consented_text == "Version two."


def test_a_consent_without_a_version_takes_the_text_as_it_is_and_a_repeat_changes_nothing():
    tiny = tiny_study(consent_text="Version one.")
    client, user = rater_client()
    assert client.post(tiny.base + "consent/", CONSENT, format="json").status_code == 200
    Study.objects.filter(pk=tiny.study.pk).update(consent_text="Version two.")
    # a repeat of the consent (an old page) after the edit: agreed already, nothing to ask
    repeat = client.post(
        tiny.base + "consent/", {**CONSENT, "consent_version": "0000000000000000"}, format="json"
    )
    assert repeat.status_code == 200
    assert Participation.objects.get(rater__user=user).consented_text == "Version one."
