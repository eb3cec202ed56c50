import pytest
from django.contrib.auth.models import Group

from annotation.roles import RESEARCHERS_GROUP
from tests.annotation.rater_fixtures import tiny_study
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def signed_in(client, role):
    user = UserFactory(is_staff=role == "admin")
    if role == "researcher":
        user.groups.add(Group.objects.get_or_create(name=RESEARCHERS_GROUP)[0])
    client.force_login(user)
    return client


@pytest.mark.parametrize(
    ("role", "monitor", "results"),
    [("rater", 403, 403), ("researcher", 403, 200), ("admin", 200, 200)],
)
def test_pages_check_the_role(client, role, monitor, results):
    tiny = tiny_study()
    signed_in(client, role)
    assert client.get(f"/studies/{tiny.study.slug}/monitor/").status_code == monitor
    assert client.get(f"/studies/{tiny.study.slug}/results/").status_code == results


def test_anonymous_users_are_sent_to_sign_in(client):
    tiny = tiny_study()
    response = client.get(f"/studies/{tiny.study.slug}/monitor/")
    assert response.status_code == 302 and response.url.startswith("/accounts/login/")


def test_monitor_page_loads_its_module(client):
    tiny = tiny_study()
    signed_in(client, "admin")
    body = client.get(f"/studies/{tiny.study.slug}/monitor/").content.decode()
    assert "frontend/monitor_page.js" in body
    assert f'<script id="study-slug" type="application/json">"{tiny.study.slug}"</script>' in body


def test_results_page_says_when_there_is_no_run(client):
    tiny = tiny_study()
    signed_in(client, "researcher")
    body = client.get(f"/studies/{tiny.study.slug}/results/").content.decode()
    assert "No finished analysis run yet." in body


def test_every_page_names_its_icon(client):
    from pathlib import Path

    body = client.get("/accounts/login/").content.decode()
    assert '<link rel="icon" href="/static/frontend/favicon.svg" type="image/svg+xml">' in body
    icon = Path(__file__).resolve().parents[2] / "frontend/static/frontend/favicon.svg"
    assert icon.read_text().startswith("<svg")


def test_pages_that_name_no_icon_get_mosaics_at_favicon_ico(client):
    # the admin's and the browsable API's pages name none: browsers ask for /favicon.ico
    response = client.get("/favicon.ico")
    assert response.status_code == 301
    assert response["Location"] == "/static/frontend/favicon.svg"


def test_the_admin_is_titled_mosaic(client):
    signed_in(client, "admin")
    body = client.get("/admin/").content.decode()
    assert "<title>Studies, raters and results | MOSaic admin</title>" in body
    assert ">MOSaic administration</a>" in body
