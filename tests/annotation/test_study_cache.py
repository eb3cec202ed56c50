"""The per-study cache of dimensions, questions and vocabularies: fresh on every read until
the study's first answer (another process may still replace them), cached after."""

import pytest

from annotation.designs import questionnaire_study
from annotation.models import Dimension
from annotation.study_cache import StudyCache
from tests.annotation.design_fixtures import Answerer, tiny_questionnaire_study
from tests.annotation.rater_fixtures import consent_and_tutorial, rater_client

pytestmark = pytest.mark.django_db


def test_values_are_read_again_until_the_study_is_frozen_then_kept():
    loads = []
    frozen = {7: False}
    cache = StudyCache(lambda study_id: loads.append(study_id) or len(loads), frozen=frozen.get)
    assert [cache.get(7), cache.get(7)] == [1, 2]  # read again: not frozen yet
    frozen[7] = True
    assert [cache.get(7), cache.get(7)] == [3, 3]  # kept once frozen
    cache.forget(7)
    assert cache.get(7) == 4


def test_questions_replaced_from_another_process_reach_a_rater_before_any_answer(tmp_path):
    import json

    from django.core.management import call_command

    from tests.annotation.design_fixtures import SMALL_QUESTIONS

    # given: a rater at the qualification test of a study nobody has answered yet, with
    # the questions this web process read for their page
    tiny = tiny_questionnaire_study()
    client, _ = rater_client()
    consent_and_tutorial(client, tiny)
    item = client.get(tiny.base + "next/").json()["item"]
    held = dict(questionnaire_study._CACHE._entries)
    # when: the set is imported again from the command line (another process: its
    # forget does not reach this one, whose entries are put back as they were)
    path = tmp_path / "small.json"
    path.write_text(json.dumps(SMALL_QUESTIONS))
    call_command("import_questions", tiny.study.slug, str(path))
    questionnaire_study._CACHE._entries.update(held)
    # then: the rater's answer is taken against the new questions (before: a 500, the
    # answer naming questions that were gone)
    sent = client.post(
        tiny.base + "answers/", Answerer("questionnaire").answer(item), format="json"
    )
    assert sent.status_code == 201, sent.content
    assert Dimension.objects.filter(study=tiny.study).count() == 4


def test_a_frozen_study_is_not_asked_again_when_its_values_are_read_again():
    asked = []
    cache = StudyCache(
        lambda study_id: "values", seconds=-1.0, frozen=lambda s: asked.append(s) or True
    )
    assert [cache.get(3), cache.get(3), cache.get(3)] == ["values"] * 3  # read each time
    assert asked == [3]  # an answered study stays answered: one query, not one per read
