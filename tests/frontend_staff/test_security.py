import pytest
from django.core.cache import cache

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _clear_cache():
    cache.clear()


def test_failed_sign_ins_are_rate_limited(client, settings):
    # given
    settings.MOSAIC_LOGIN_MAX_FAILURES = 3
    UserFactory(username="ann")
    # when: three wrong passwords
    for _ in range(3):
        assert (
            client.post("/accounts/login/", {"username": "ann", "password": "x"}).status_code == 200
        )
    # then: even the right password waits
    locked = client.post("/accounts/login/", {"username": "ann", "password": "pw"})
    assert locked.status_code == 429
    assert b"Too many failed sign-ins" in locked.content
    assert "_auth_user_id" not in client.session


def test_a_good_sign_in_resets_the_count(client, settings):
    settings.MOSAIC_LOGIN_MAX_FAILURES = 3
    UserFactory(username="bob")
    client.post("/accounts/login/", {"username": "bob", "password": "x"})
    client.post("/accounts/login/", {"username": "bob", "password": "x"})
    assert client.post("/accounts/login/", {"username": "bob", "password": "pw"}).status_code == 302
    client.logout()
    for _ in range(2):
        client.post("/accounts/login/", {"username": "bob", "password": "x"})
    assert client.post("/accounts/login/", {"username": "bob", "password": "pw"}).status_code == 302


def test_csrf_is_enforced_on_the_api():
    from django.test import Client

    from tests.annotation.rater_fixtures import tiny_study

    tiny = tiny_study()
    user = UserFactory()
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(user)
    response = strict.post(
        tiny.base + "consent/", {"accept": True}, content_type="application/json"
    )
    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]
