import re

import pytest
from django.contrib.auth.models import Group

from annotation.roles import RESEARCHERS_GROUP
from tests.annotation.rater_fixtures import tiny_study
from tests.factories import UserFactory, make_study

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


@pytest.mark.parametrize("role", ["anonymous", "rater", "researcher", "admin"])
def test_the_home_page_leads_each_role_to_its_pages_of_each_running_study(client, role):
    # given: a running study of each of two designs, and a closed one
    sliders = make_study(name="Sliders", state="running")
    labels = make_study(name="Labels", design="questionnaire", state="running")
    make_study(name="Closed", state="closed")
    if role != "anonymous":
        signed_in(client, role)
    # when
    body = client.get("/").content.decode()
    # then
    assert "Sliders" in body and "Labels" in body and "Closed" not in body
    links = set(re.findall(r'href="([^"]+)"', body))
    staff = {
        f"/studies/{s.slug}/{page}/" for s in (sliders, labels) for page in ("monitor", "results")
    }
    expected = {
        "anonymous": set(),
        "rater": {f"/study/{sliders.slug}/", f"/study/{labels.slug}/"},
        "researcher": {
            "/studies/",
            f"/studies/{sliders.slug}/results/",
            f"/studies/{labels.slug}/results/",
        },
        "admin": {"/studies/", *staff, f"/studies/{labels.slug}/audits/"},
    }[role]
    study_links = {link for link in links if link.startswith(("/study/", "/studies/"))}
    assert study_links == expected
    for link in study_links:  # each opens for this role
        assert client.get(link).status_code == 200, link
