"""The Django admin as docs/admins.md describes it: every setting editable, lists cheap."""

import pytest
from django.contrib import admin
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Payment, Study
from tests.annotation.rater_fixtures import (
    answer,
    onboard,
    qualification_ratings,
    rater_client,
    tiny_study,
)
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_every_study_setting_is_in_the_admin_form():
    # given: the fields an admin sets (not the ones the system keeps)
    editable = {
        field.name
        for field in Study._meta.get_fields()
        if getattr(field, "editable", False) and not field.auto_created
    } - {"created_at"}
    # when
    in_form = {
        name for _, options in admin.site._registry[Study].fieldsets for name in options["fields"]
    }
    # then
    assert editable - in_form == set()


def test_the_study_form_shows_the_raters_wanted_per_video(client):
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    study = tiny_study().study
    body = client.get(f"/admin/annotation/study/{study.pk}/change/").content.decode()
    assert 'name="target_raters_per_stimulus"' in body


@pytest.mark.parametrize(
    ("design", "field", "absent"),
    [
        ("preference", "preference-0-judgments_per_pair", "ranking-0-ties_allowed"),
        ("ranking", "ranking-0-ties_allowed", "preference-0-judgments_per_pair"),
    ],
)
def test_a_studys_design_settings_are_in_its_admin_page(client, design, field, absent):
    from tests.annotation.design_fixtures import tiny_of

    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    study = tiny_of(design).study
    body = client.get(f"/admin/annotation/study/{study.pk}/change/").content.decode()
    assert f'name="{field}"' in body
    assert f'name="{absent}"' not in body


@pytest.mark.parametrize("answered", [False, True], ids=["no-answers", "answered"])
def test_the_scale_is_fixed_once_a_study_has_answers(client, answered):
    # given: a study, rated once or not at all
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    tiny = tiny_study()
    if answered:
        rate(tiny, raters=1, answers=1)
    url = f"/admin/annotation/study/{tiny.study.pk}/change/"
    # when
    body = client.get(url).content.decode()
    # then: the scale is an input only while no answer was given on it
    for field in ("slider_min", "slider_max", "slider_step"):
        assert (f'name="{field}"' in body) == (not answered)


def rate(tiny, raters: int, answers: int) -> None:
    for _ in range(raters):
        client, _ = rater_client()
        onboard(client, tiny)
        for _ in range(answers):
            item = client.get(tiny.base + "next/").json()["item"]["id"]
            client.post(tiny.base + "answers/", answer(item), format="json")


LIST_PAGES = [
    "/admin/annotation/answer/",
    "/admin/annotation/item/",
    "/admin/annotation/assignment/",
    "/admin/annotation/participation/",
    "/admin/annotation/rater/",
    "/admin/annotation/payment/",
    "/admin/annotation/session/",
]


def list_queries(client) -> dict[str, int]:
    counts = {}
    for url in LIST_PAGES:
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url).status_code == 200
        counts[url] = len(queries)
    return counts


def test_list_pages_take_as_many_queries_for_many_rows_as_for_one(client):
    # given: one rater's rows
    tiny = tiny_study(rest_every=0)
    rate(tiny, raters=1, answers=6)
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    one = list_queries(client)
    # when: three more raters, each finishing their session (a payment each)
    rate(tiny, raters=3, answers=8)
    assert Payment.objects.count() == 3 and qualification_ratings().count() == 24
    many = list_queries(client)
    # then: the rows' related objects come with the list, not one query per row
    assert many == one


def test_the_admin_needs_a_superuser_or_model_permissions(client):
    # docs: a staff user without permissions reaches /admin/ but no model in it
    client.force_login(UserFactory(is_staff=True))
    assert client.get("/admin/").status_code == 200
    assert client.get("/admin/annotation/study/").status_code == 403
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    assert client.get("/admin/annotation/study/").status_code == 200
