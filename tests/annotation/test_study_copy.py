"""A study's protocol copied into a new draft (annotation.services.study_copy): every
setting, the design's and adaptive collection's, the dimensions with their questions and
the action vocabulary; none of its videos, sessions, raters or answers."""

import pytest
from django.contrib.admin.models import LogEntry
from django.db.models import QuerySet
from django.forms.models import model_to_dict
from django.test import Client

from annotation.designs import DESIGNS
from annotation.models import (
    Action,
    ActionGroup,
    AdaptiveSettings,
    Dimension,
    Item,
    Participation,
    Question,
    Session,
    Stimulus,
    Study,
)
from annotation.services.study_copy import SETTINGS, study_duplicate
from tests.annotation.design_fixtures import tiny_of
from tests.annotation.rater_fixtures import tiny_study
from tests.factories import RaterFactory, UserFactory

pytestmark = pytest.mark.django_db

NOT_COPIED = {"id", "name", "slug", "state", "entry_token"}


def settings_of(row) -> dict:
    """A row's fields as a person set them: without keys to other rows."""
    return {
        key: value
        for key, value in model_to_dict(row).items()
        if key not in {"id", "study", "dimension", "group"}
    }


def rows(queryset, *fields) -> list[tuple]:
    return list(queryset.values_list(*fields))


@pytest.mark.parametrize("design", sorted(DESIGNS))
def test_a_copy_has_the_protocol_and_nothing_collected(design):
    # given: a running study of the design, with adaptive collection set, and a rater in it
    original = tiny_of(design, name="Pilot", rest_every=4, payment_per_session="3.50").study
    AdaptiveSettings.objects.create(study=original, enabled=True, target_half_width=7.5)
    Participation.objects.create(rater=RaterFactory(), study=original)
    admin = UserFactory(is_staff=True)
    # when
    copy = study_duplicate(study=original, by=admin)
    # then: a draft of its own, reached by no link of the original
    assert (copy.name, copy.slug, copy.state) == ("Pilot (copy)", f"{original.slug}-copy", "draft")
    assert copy.entry_token != original.entry_token and len(copy.entry_token) >= 32
    mine, theirs = model_to_dict(copy), model_to_dict(original)
    assert {k: v for k, v in mine.items() if k not in NOT_COPIED} == {
        k: v for k, v in theirs.items() if k not in NOT_COPIED
    }
    # the design's settings and adaptive collection's
    for name in SETTINGS:
        theirs = getattr(original, name, None)
        mine = getattr(copy, name, None)
        assert (mine is None) == (theirs is None), name
        if theirs is not None:
            assert mine.pk != theirs.pk
            assert settings_of(mine) == settings_of(theirs), name
    assert copy.adaptive.reviewed_at is None
    # the dimensions with their questions, the action vocabulary
    fields = ("key", "label", "help_text", "anchor_low", "anchor_high", "order", "shows_reference")
    assert rows(copy.dimensions.order_by("order"), *fields) == rows(
        original.dimensions.order_by("order"), *fields
    )
    questions = Question.objects.filter(dimension__study=original).order_by("dimension__order")
    copied = Question.objects.filter(dimension__study=copy).order_by("dimension__order")
    assert [settings_of(q) for q in copied] == [settings_of(q) for q in questions]
    assert [q.dimension.study_id for q in copied] == [copy.pk] * len(questions)
    group_fields = ("key", "label", "limit", "required", "order")
    assert rows(copy.action_groups.order_by("order"), *group_fields) == rows(
        original.action_groups.order_by("order"), *group_fields
    )
    action_fields = ("group__key", "action_id", "name")
    assert rows(
        Action.objects.filter(group__study=copy).order_by("action_id"), *action_fields
    ) == rows(Action.objects.filter(group__study=original).order_by("action_id"), *action_fields)
    # nothing collected, nothing made of videos
    for model, path in [
        (Stimulus, "study"),
        (Item, "study"),
        (Session, "study"),
        (Participation, "study"),
    ]:
        assert not model.objects.filter(**{path: copy}).exists(), model.__name__
    assert not copy.tutorial_pairs.exists()
    # and the original is as it was
    assert Study.objects.get(pk=original.pk).state == "running"
    assert Dimension.objects.filter(study=original).count() == copy.dimensions.count()
    # (none of it vacuous where the design has it)
    if design == "propose_verify":
        assert ActionGroup.objects.filter(study=copy).count() > 0
    if design == "questionnaire":
        assert len(questions) > 0


def test_a_second_copy_takes_the_next_free_slug():
    original = tiny_study(name="Main").study
    admin = UserFactory(is_staff=True)
    first = study_duplicate(study=original, by=admin)
    second = study_duplicate(study=original, by=admin)
    of_copy = study_duplicate(study=first, by=admin)
    assert (first.slug, second.slug) == (f"{original.slug}-copy", f"{original.slug}-copy-2")
    assert (of_copy.slug, of_copy.name) == (f"{original.slug}-copy-copy", "Main (copy) (copy)")


def test_a_copy_passes_over_a_slug_taken_meanwhile(monkeypatch):
    # given: another copy takes "<slug>-copy" between the check and the insert
    original = tiny_study(name="Main").study
    exists = QuerySet.exists

    def taken_meanwhile(queryset):
        found = exists(queryset)
        if not found and not exists(Study.objects.filter(slug=f"{original.slug}-copy")):
            Study.objects.create(name="other", slug=f"{original.slug}-copy")
        return found

    monkeypatch.setattr(QuerySet, "exists", taken_meanwhile)
    # when
    copy = study_duplicate(study=original, by=UserFactory(is_staff=True))
    # then
    assert copy.slug == f"{original.slug}-copy-2"
    assert Study.objects.get(slug=f"{original.slug}-copy").name == "other"


def test_the_admin_action_copies_each_chosen_study_and_links_the_copy():
    # given
    original = tiny_study(name="Pilot").study
    client = Client()
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    # when
    response = client.post(
        "/admin/annotation/study/",
        {"action": "duplicate", "_selected_action": [original.pk]},
        follow=True,
    )
    # then
    copy = Study.objects.get(slug=f"{original.slug}-copy")
    body = response.content.decode()
    assert f'<a href="/admin/annotation/study/{copy.pk}/change/">Pilot (copy)</a>' in body
    assert "without its videos: import them with the manifest, then start it." in body
    (entry,) = LogEntry.objects.filter(object_id=str(copy.pk))
    assert (entry.is_addition(), entry.change_message) == (
        True,
        f"Copied from Pilot ({original.slug}).",
    )


def test_a_staff_user_without_the_add_permission_is_not_offered_the_copy():
    original = tiny_study().study
    client = Client()
    client.force_login(UserFactory(is_staff=True))
    response = client.post(
        "/admin/annotation/study/", {"action": "duplicate", "_selected_action": [original.pk]}
    )
    assert response.status_code == 403
    assert Study.objects.count() == 1
