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
    # each export's "Prepare file" says how its job goes in a status region
    exports = re.findall(r'<tr data-export="[^"]+">.*?</tr>', body, re.S)
    assert exports and all('<span class="job" role="status">' in row for row in exports)


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
    # given: running studies of two designs, one open to every signed-in rater, one
    # entered through its link, and a closed one
    sliders = make_study(name="Sliders", state="running", open_to_signed_in=True)
    labels = make_study(name="Labels", design="questionnaire", state="running")
    make_study(name="Closed", state="closed", open_to_signed_in=True)
    if role != "anonymous":
        signed_in(client, role)
    # when
    body = client.get("/").content.decode()
    # then: researchers and admins see every running study; a rater those they may
    # enter; a visitor none (a study's name is its team's to publish)
    named = {name for name in ("Sliders", "Labels", "Closed") if name in body}
    assert (
        named
        == {
            "anonymous": set(),
            "rater": {"Sliders"},
            "researcher": {"Sliders", "Labels"},
            "admin": {"Sliders", "Labels"},
        }[role]
    )
    links = set(re.findall(r'href="([^"]+)"', body))
    both = (sliders, labels)
    results = {f"/studies/{s.slug}/results/" for s in both}
    monitors = {f"/studies/{s.slug}/monitor/" for s in both}
    expected = {
        "anonymous": set(),
        "rater": {f"/study/{sliders.slug}/"},  # the other is entered through its link
        "researcher": {"/studies/", *results},
        "admin": {"/studies/", *results, *monitors, f"/studies/{labels.slug}/audits/"},
    }[role]
    study_links = {link for link in links if link.startswith(("/study/", "/studies/"))}
    assert study_links == expected
    for link in study_links:  # each opens for this role
        assert client.get(link).status_code == 200, link
    if role == "rater":  # the rater may take part: the page's first call lets them in
        assert client.get(f"/api/rater/studies/{sliders.slug}/state/").status_code == 200


def test_a_rater_is_offered_a_link_only_study_once_they_take_part(client):
    # given: a study entered through its link, and a rater who took part in it
    from annotation.models import Participation, Rater

    study = make_study(name="Link only", state="running")
    rater, newcomer = UserFactory(), UserFactory()
    Participation.objects.create(rater=Rater.objects.create(user=rater), study=study)
    # when, then: the one who takes part is offered it, the newcomer is not
    for user, offered in ((rater, True), (newcomer, False)):
        client.force_login(user)
        body = client.get("/").content.decode()
        assert (f'href="/study/{study.slug}/"' in body) is offered


def test_a_refused_page_says_why_and_leads_on(client):
    # given: a study, and a rater opening its live monitor
    study = make_study(name="Sliders", state="running")
    signed_in(client, "rater")
    # when
    response = client.get(f"/studies/{study.slug}/monitor/")
    # then: MOSaic's page, with the bar, who is signed in and a way on; not Django's bare one
    body = response.content.decode()
    assert response.status_code == 403
    assert "You may not open this page" in body and "whose role does not open it" in body
    assert 'class="topbar"' in body and 'href="/"' in body


def test_an_unknown_address_gets_a_page_that_leads_on(client):
    response = client.get("/studies/no-such-study/results/nothing/")
    body = response.content.decode()
    assert response.status_code == 404
    assert "There is no such page" in body and 'class="topbar"' in body


def test_the_server_error_page_renders_without_a_request():
    # Django renders 500.html with no context at all: nothing in it may need one
    from django.template.loader import render_to_string

    body = render_to_string("500.html")
    assert "Something went wrong on our side" in body and "/static/frontend/mosaic.css" in body


def row_texts(body: str) -> dict[str, str]:
    """The Studies page's rows as text (tags dropped, spaces made one), by study slug."""
    rows = dict(re.findall(r'<tr data-study="([^"]+)">(.*?)</tr>', body, re.S))
    return {slug: " ".join(re.sub(r"<[^>]+>", " ", row).split()) for slug, row in rows.items()}


def test_the_studies_page_says_how_far_each_study_has_come(client):
    from datetime import timedelta

    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from annotation.models import Assignment
    from tests.factories import RaterFactory

    # given: a study with two sessions, taken three times by two raters, one finished;
    # and a study nobody has started
    busy = tiny_study(stimuli=12).study
    idle = tiny_study().study
    first, second = busy.sessions.order_by("index")
    alice, bob = RaterFactory.create_batch(2)
    now = timezone.now()
    Assignment.objects.create(rater=alice, session=first, order_seed=1, finished_at=now,
                              last_answered_at=now - timedelta(minutes=30))  # fmt: skip
    Assignment.objects.create(rater=bob, session=first, order_seed=2,
                              last_answered_at=now - timedelta(minutes=3))  # fmt: skip
    Assignment.objects.create(rater=alice, session=second, order_seed=3)
    signed_in(client, "researcher")
    # when
    with CaptureQueriesContext(connection) as two:
        body = client.get("/studies/").content.decode()
    # then: each row says its design and how far it has come
    text = row_texts(body)
    assert "Single-stimulus sliders (GAIA)" in text[busy.slug]
    assert "2 raters · 1 of 3 sessions finished last answer 3 minutes ago" in text[busy.slug]
    assert "no session taken yet" in text[idle.slug]
    # and: in the same number of queries however many studies are listed
    more = tiny_study().study
    Assignment.objects.create(rater=bob, session=more.sessions.first(), order_seed=4)
    with CaptureQueriesContext(connection) as three:
        body = client.get("/studies/").content.decode()
    after = row_texts(body)
    assert "1 rater · 0 of 1 session finished" in after.pop(more.slug)
    assert after == text  # the others as they were
    assert len(three.captured_queries) == len(two.captured_queries)
