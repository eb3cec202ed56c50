"""A participant's personal data erased at their request (annotation.services.erasure,
`manage.py erase_rater`): what identifies them goes, their answers stay under their
pseudonym; with --withdraw they also leave every result."""

import io

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from rest_framework.authtoken.models import Token

from annotation.models import Answer, Participation, Rater
from annotation.services.participation import rater_enter_marketplace
from quality.selectors import study_exclusions
from tests.annotation.rater_fixtures import answer, tiny_study

pytestmark = pytest.mark.django_db

CONSENT = {"accept": True, "viewport_width": 1280, "viewport_height": 800,
           "user_agent": "Mozilla/5.0 (X11; Linux) Chrome/131"}  # fmt: skip


@pytest.fixture
def rated():
    """A marketplace participant who consented, qualified and answered two videos."""
    tiny = tiny_study(open_to_signed_in=False)
    user, _ = rater_enter_marketplace(
        slug=tiny.study.slug,
        token=tiny.study.entry_token,
        participant_id="5f1a2b3c4d5e",
        marketplace_study_id="S-1",
        marketplace_session_id="X-1",
    )
    client = Client()
    client.force_login(user)
    base = tiny.base
    assert (
        client.post(base + "consent/", CONSENT, content_type="application/json").status_code == 200
    )
    client.post(base + "tutorial/done/")
    for _ in range(4):  # the two test items, then two of the session
        item = client.get(base + "next/").json()["item"]["id"]
        sent = client.post(base + "answers/", answer(item, 52.0), content_type="application/json")
        assert sent.status_code == 201
    Token.objects.create(user=user)
    return tiny, Rater.objects.get(user=user), client


def erase(*args: str) -> str:
    out = io.StringIO()
    call_command("erase_rater", *args, stdout=out)
    return out.getvalue()


def test_erasing_takes_what_identifies_the_person_and_keeps_the_answers(rated):
    tiny, rater, client = rated
    answers = Answer.objects.filter(participation__rater=rater).count()
    # when
    assert erase("5f1a2b3c4d5e") == f"{rater.pseudonym}: personal data erased\n"
    # then: no id, name, marketplace ids or user agent left
    rater.refresh_from_db()
    user = rater.user
    assert (rater.external_id, user.username, user.is_active) == (None, f"erased-{rater.pk}", False)
    assert rater.erased_at is not None and not user.has_usable_password()
    assert not Token.objects.filter(user=user).exists()
    participation = Participation.objects.get(rater=rater)
    assert (participation.marketplace_study_id, participation.marketplace_session_id) == ("", "")
    assert participation.viewing_check["viewport_width"] == 1280
    assert "user_agent" not in participation.viewing_check
    # and the answers stay, counted as before, under the same pseudonym
    assert Answer.objects.filter(participation__rater=rater).count() == answers == 4
    assert study_exclusions(study=tiny.study) == []
    # and the browser that was signed in is signed in no more
    assert client.get(tiny.base + "state/").status_code == 403


def test_erasing_with_withdraw_also_takes_the_answers_out_of_the_results(rated):
    tiny, rater, _ = rated
    # when
    out = erase(rater.pseudonym, "--withdraw")
    # then
    assert out == f"{rater.pseudonym}: personal data erased; withdrawn from every study\n"
    (exclusion,) = study_exclusions(study=tiny.study)
    assert (exclusion.rule, exclusion.rater_id) == ("rater_withdrew", rater.pseudonym)


def test_a_repeat_changes_nothing_more_and_an_unknown_name_is_refused(rated):
    _, rater, _ = rated
    erase("5f1a2b3c4d5e")
    moment = Rater.objects.get(pk=rater.pk).erased_at
    # when: by the account's name now
    assert erase(f"erased-{rater.pk}") == f"{rater.pseudonym}: personal data was erased already\n"
    assert Rater.objects.get(pk=rater.pk).erased_at == moment
    # and the participant id is no longer known
    with pytest.raises(CommandError, match="no rater is named '5f1a2b3c4d5e'"):
        erase("5f1a2b3c4d5e")
    # a name that looks like a pseudonym but is not one (before: a ValueError traceback)
    with pytest.raises(CommandError, match="no rater is named 'R²'"):
        erase("R²")
