"""The rater page as HTML (no JavaScript): access, what the template hands to rater.js."""

import json
import re
from pathlib import Path

import pytest
from django.urls import reverse

from annotation.designs import DESIGNS
from frontend.rater_views import rater_strings
from tests.annotation.rater_fixtures import tiny_study
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


def json_block(body: str, element_id: str) -> dict:
    match = re.search(rf'<script id="{element_id}" type="application/json">(.*?)</script>', body)
    assert match, f"no #{element_id} block"
    return json.loads(match.group(1))


def test_the_page_url_is_named_for_the_marketplace_redirect():
    assert reverse("rater:study", kwargs={"slug": "gaia"}) == "/study/gaia/"


def test_anonymous_visitors_are_sent_to_sign_in(client):
    tiny = tiny_study()
    response = client.get(f"/study/{tiny.study.slug}/")
    assert response.status_code == 302
    assert response.url == f"/accounts/login/?next=/study/{tiny.study.slug}/"


def test_an_unknown_study_is_404(client):
    client.force_login(UserFactory())
    assert client.get("/study/no-such-study/").status_code == 404


def test_the_page_hands_the_api_and_the_strings_to_the_module(client):
    # given
    tiny = tiny_study()
    user = UserFactory()
    client.force_login(user)
    slug = tiny.study.slug
    # when
    response = client.get(f"/study/{slug}/")
    body = response.content.decode()
    # then
    assert response.status_code == 200
    config = json_block(body, "rater-config")
    assert config["slug"] == slug
    assert config["user"] == user.pk
    assert config["api"] == {
        "state": f"/api/rater/studies/{slug}/state/",
        "consent": f"/api/rater/studies/{slug}/consent/",
        "tutorial": f"/api/rater/studies/{slug}/tutorial/",
        "tutorial_done": f"/api/rater/studies/{slug}/tutorial/done/",
        "next": f"/api/rater/studies/{slug}/next/",
        "answers": f"/api/rater/studies/{slug}/answers/",
        "problems": f"/api/rater/studies/{slug}/problems/",
        "withdraw": f"/api/rater/studies/{slug}/withdraw/",
    }
    assert len(config["csrf_token"]) == 64
    assert response.cookies["csrftoken"].value  # the token in the page is a valid pair
    assert json_block(body, "rater-strings") == rater_strings()
    assert '<script type="module" src="/static/frontend/rater.js">' in body
    assert 'href="/static/frontend/rater.css"' in body
    for step in ("consent", "tutorial", "rating", "break", "message", "finished"):
        assert f'id="step-{step}"' in body


def test_every_string_the_module_uses_is_provided():
    """The page's modules (rater*.js) and the design widgets read text only through
    t("key"): each key must exist in rater_strings."""
    static = ROOT / "frontend/static/frontend"
    modules = [*sorted(static.glob("rater*.js")), *sorted((static / "widgets").glob("*.js"))]
    source = "\n".join(module.read_text() for module in modules)
    calls = re.findall(r"\bt\(([^()]*)", source)
    used = {key for call in calls for key in re.findall(r'"([a-z_]+)"', call)}
    assert {"connection_lost", "viewport_too_small", "consent_failed", "ready"} <= used
    used |= {f"{step}_{part}" for step in ("done", "not_eligible", "screened_out")
             for part in ("title", "text")}  # fmt: skip
    assert used - set(rater_strings()) == set()


def test_every_design_names_its_items_for_a_screen_reader():
    """rater_item.js says each new item as `item_<design key>` ("Video 12 of 300"), a key made
    at run time that the test above cannot see."""
    strings = rater_strings()
    for key in DESIGNS:
        assert strings[f"item_{key}"].endswith("{number} of {length}"), key


def test_the_rating_slider_starts_without_a_value(client):
    tiny = tiny_study()
    client.force_login(UserFactory())
    body = client.get(f"/study/{tiny.study.slug}/").content.decode()
    template = re.search(r'<template id="slider-template">(.*?)</template>', body, re.S).group(1)
    assert re.search(r'<input type="range" class="slider" data-untouched>', template)
