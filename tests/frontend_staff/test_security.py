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


@pytest.mark.parametrize(
    "variant", ["boss ", " boss", "boss  ", "BOSS", "\uff42\uff4f\uff53\uff53"]
)
def test_a_name_the_form_cleans_to_a_locked_name_is_locked_too(client, settings, variant):
    # given: "boss" locked after three wrong passwords
    settings.MOSAIC_LOGIN_MAX_FAILURES = 3
    UserFactory(username="boss")
    for _ in range(3):
        client.post("/accounts/login/", {"username": "boss", "password": "x"})
    # when: the right password under a name the sign-in form cleans to "boss"
    response = client.post("/accounts/login/", {"username": variant, "password": "pw"})
    # then: the same counter answers
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session


def test_padded_names_share_one_counter(client, settings):
    # given
    settings.MOSAIC_LOGIN_MAX_FAILURES = 3
    UserFactory(username="boss")
    # when: each failure under a differently padded name
    codes = [
        client.post(
            "/accounts/login/", {"username": "boss" + " " * pad, "password": "x"}
        ).status_code
        for pad in range(4)
    ]
    # then: the fourth attempt is already refused
    assert codes == [200, 200, 200, 429]


def test_the_admin_sign_in_is_limited_with_the_site_sign_in(client, settings):
    # given
    settings.MOSAIC_LOGIN_MAX_FAILURES = 3
    UserFactory(username="boss", is_staff=True)
    # when: three wrong passwords on the admin's page
    codes = [
        client.post("/admin/login/", {"username": "boss", "password": "x"}).status_code
        for _ in range(3)
    ]
    # then: the right password waits, on the admin's page and on the site's
    assert codes == [200, 200, 200]
    assert client.post("/admin/login/", {"username": "boss", "password": "pw"}).status_code == 429
    assert (
        client.post("/accounts/login/", {"username": "boss", "password": "pw"}).status_code == 429
    )
    assert "_auth_user_id" not in client.session


def test_the_admin_sign_in_still_signs_in(client):
    UserFactory(username="boss", is_staff=True)
    response = client.post("/admin/login/", {"username": "boss", "password": "pw"})
    assert response.status_code == 302
    assert client.get("/admin/login/").status_code == 302  # signed in: on to the index


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


def test_behind_a_proxy_failures_count_per_client_address(client, settings):
    """All requests come from nginx's address; the client's is the one nginx appended to
    X-Forwarded-For, and what a client writes there itself is not believed."""
    settings.MOSAIC_PROXY_HOPS = 1
    settings.MOSAIC_LOGIN_MAX_FAILURES = 2
    UserFactory(username="cat")
    nginx = {"REMOTE_ADDR": "172.18.0.5"}

    def sign_in(forwarded: str, password: str) -> int:
        data = {"username": "cat", "password": password}
        return client.post(
            "/accounts/login/", data, HTTP_X_FORWARDED_FOR=forwarded, **nginx
        ).status_code

    # when: an attacker at 203.0.113.9 fails twice, the second time claiming another address
    assert sign_in("203.0.113.9", "x") == 200
    assert sign_in("198.51.100.1, 203.0.113.9", "x") == 200
    # then: the attacker is locked, and the user at another address is not
    assert sign_in("203.0.113.9", "pw") == 429
    assert sign_in("192.0.2.44", "pw") == 302


def test_mosaics_own_pages_carry_the_content_security_policy(client):
    from config.security import POLICY
    from tests.annotation.rater_fixtures import tiny_study

    tiny = tiny_study()
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    slug = tiny.study.slug
    for url in (
        "/",
        f"/studies/{slug}/monitor/",
        f"/studies/{slug}/results/",
        "/admin/",
        "/admin/annotation/study/",
        "/api/docs/",
        "/api/studies/",
    ):
        response = client.get(url, HTTP_ACCEPT="text/html")
        assert response.status_code == 200, url
        assert response["Content-Type"].startswith("text/html"), url
        assert response["Content-Security-Policy"] == POLICY, url
        assert "script-src 'self'" in POLICY
    # a JSON answer needs none
    as_json = client.get("/api/studies/", HTTP_ACCEPT="application/json")
    assert "Content-Security-Policy" not in as_json


def test_no_template_of_mosaic_runs_an_inline_script():
    import re
    from pathlib import Path

    templates = Path(__file__).resolve().parents[2] / "frontend" / "templates"
    for template in templates.rglob("*.html"):
        scripts = re.findall(r"<script([^>]*)>(.*?)</script>", template.read_text(), re.S)
        for attributes, text in scripts:
            assert "src=" in attributes or not text.strip(), template


def test_the_api_schema_and_docs_are_served_to_the_study_team_only():
    from django.contrib.auth.models import Group
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    from annotation.roles import RESEARCHERS_GROUP
    from tests.annotation.rater_fixtures import rater_client

    # given: an anonymous visitor, a rater and a researcher with an API token
    anonymous = APIClient()
    rater, _ = rater_client()
    researcher = UserFactory()
    researcher.groups.add(Group.objects.get_or_create(name=RESEARCHERS_GROUP)[0])
    scripted = APIClient()
    scripted.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    # when
    refused = {
        (who, path): client.get(path, HTTP_ACCEPT=accept)
        for who, client in (("anonymous", anonymous), ("rater", rater))
        for path, accept in (("/api/schema/", "application/json"), ("/api/docs/", "text/html"))
    }
    schema = scripted.get("/api/schema/", HTTP_ACCEPT="application/json")
    docs = scripted.get("/api/docs/", HTTP_ACCEPT="text/html")
    # then: the refusals show no endpoint, and the rater's says whose the schema is
    assert {key: r.status_code for key, r in refused.items()} == dict.fromkeys(refused, 403)
    assert not [key for key, r in refused.items() if b"/api/studies/" in r.content]
    assert refused[("rater", "/api/schema/")].json() == {
        "error": "forbidden",
        "detail": "the API's schema and docs are for researchers and admins",
    }
    assert "/api/studies/{slug}/exports/{name}" in schema.json()["paths"]
    assert docs.status_code == 200 and b"swagger-ui" in docs.content
