"""A tutorial shows only videos that are ready, in every design: one still being
transcoded comes once it is, one that failed never shows as a broken video."""

import pytest

from annotation.models import Dimension, ExpertLabel, Stimulus, TutorialPair
from annotation.readiness import study_problems
from tests.annotation.design_fixtures import (
    tiny_preference_study,
    tiny_propose_study,
    tiny_questionnaire_study,
    tiny_ranking_study,
)
from tests.annotation.rater_fixtures import rater_client, tiny_study
from tests.factories import StimulusFactory

pytestmark = pytest.mark.django_db

CONSENT = {"accept": True, "viewport_width": 1280, "viewport_height": 800, "pixel_ratio": 1}
PROCESSING, FAILED, READY = (
    Stimulus.Status.PROCESSING,
    Stimulus.Status.FAILED,
    Stimulus.Status.READY,
)


def tutorial(tiny) -> dict:
    client, _ = rater_client()
    assert client.post(tiny.base + "consent/", CONSENT, format="json").status_code == 200
    return client.get(tiny.base + "tutorial/").json()


def set_status(videos, status) -> None:
    Stimulus.objects.filter(pk__in=[video.pk for video in videos]).update(status=status)


def shown_ids(body: dict) -> set[str]:
    """Every video id the tutorial shows."""
    ids = set()
    for exemplar in body["exemplars"]:
        ids.add(exemplar["id"])
        ids.update(video["id"] for video in exemplar.get("videos", []))
        ids.update(exemplar[side]["id"] for side in ("right", "reference") if exemplar.get(side))
    for pair in body["pairs"]:
        ids.update((pair["generated"]["id"], pair["real"]["id"]))
    return ids


def compared_example(tiny, ends: tuple[str, ...]) -> list[Stimulus]:
    question = Dimension.objects.filter(study=tiny.study).order_by("order").first()
    videos = [
        StimulusFactory(study=tiny.study, role=Stimulus.Role.TUTORIAL, content="e1", expected=end)
        for end in ends
    ]
    ExpertLabel.objects.create(stimulus=videos[0], dimension=question, value="best", note="")
    return videos


@pytest.mark.parametrize(
    ("make", "ends"),
    [(tiny_preference_study, ("best", "worst")), (tiny_ranking_study, ("best", "", "worst"))],
)
def test_a_compared_example_waits_until_every_video_of_it_is_ready(make, ends):
    # given: a worked example, one of its videos still being transcoded
    tiny = make()
    videos = compared_example(tiny, ends)
    set_status(videos[-1:], PROCESSING)
    # then: the example is not shown (shown without it, it would say less)
    assert tutorial(tiny)["exemplars"] == []
    # when: it is ready
    set_status(videos[-1:], READY)
    # then: the whole example is shown
    assert shown_ids(tutorial(tiny)) == {str(video.public_id) for video in videos}


def test_a_preference_example_shows_no_reference_that_is_not_ready():
    tiny = tiny_preference_study()
    question = Dimension.objects.get(study=tiny.study)
    question.shows_reference = True
    question.save()
    compared_example(tiny, ("best", "worst"))
    StimulusFactory(study=tiny.study, role=Stimulus.Role.REFERENCE, content="e1", status=PROCESSING)
    (example,) = tutorial(tiny)["exemplars"]
    assert example["reference"] is None


def test_a_questionnaire_exemplar_that_failed_is_not_shown():
    tiny = tiny_questionnaire_study()
    failed, shown = Stimulus.objects.filter(study=tiny.study, role="tutorial").order_by("pk")
    set_status([failed], FAILED)
    assert shown_ids(tutorial(tiny)) == {str(shown.public_id)}


def test_a_propose_example_still_being_cut_is_not_shown():
    tiny = tiny_propose_study()
    propose = Dimension.objects.get(study=tiny.study, key="propose")
    waiting, shown = StimulusFactory.create_batch(
        2, study=tiny.study, role=Stimulus.Role.TUTORIAL, segment={"box": [0, 0, 1, 1]}
    )
    for video in (waiting, shown):
        ExpertLabel.objects.create(stimulus=video, dimension=propose, value=[11], note="")
    set_status([waiting], PROCESSING)
    assert shown_ids(tutorial(tiny)) == {str(shown.public_id)}


def test_a_tutorial_pair_waits_for_both_its_videos():
    tiny = tiny_study()
    dimension = Dimension.objects.filter(study=tiny.study).first()
    generated, real = StimulusFactory.create_batch(2, study=tiny.study, role=Stimulus.Role.TUTORIAL)
    TutorialPair.objects.create(
        study=tiny.study, dimension=dimension, label="Ex", generated=generated, real=real
    )
    set_status([real], PROCESSING)
    assert tutorial(tiny)["pairs"] == []
    set_status([real], READY)
    assert [pair["label"] for pair in tutorial(tiny)["pairs"]] == ["Ex"]


def test_a_study_whose_every_example_failed_lacks_examples():
    # given: a preference study whose one worked example failed to transcode
    tiny = tiny_preference_study()
    videos = compared_example(tiny, ("best", "worst"))
    assert "no_exemplars" not in {p.code for p in study_problems(study=tiny.study)}
    # when
    set_status(videos, FAILED)
    # then: readiness says both that videos failed and that the tutorial has no example
    codes = {p.code for p in study_problems(study=tiny.study)}
    assert {"no_exemplars", "videos_failed"} <= codes


def test_tutorial_pairs_are_read_in_a_fixed_number_of_queries():
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.factories import add_expert_scores

    # given: a study whose tutorial pairs each have the experts' scores
    tiny = tiny_study()
    dimension = Dimension.objects.filter(study=tiny.study).first()
    client, _ = rater_client()
    assert client.post(tiny.base + "consent/", CONSENT, format="json").status_code == 200

    def add_pair(label: str) -> None:
        generated, real = StimulusFactory.create_batch(
            2, study=tiny.study, role=Stimulus.Role.TUTORIAL
        )
        add_expert_scores(generated)
        TutorialPair.objects.create(
            study=tiny.study, dimension=dimension, label=label, generated=generated, real=real
        )

    def read() -> tuple[int, list]:
        with CaptureQueriesContext(connection) as queries:
            pairs = client.get(tiny.base + "tutorial/").json()["pairs"]
        return len(queries.captured_queries), pairs

    add_pair("One")
    one, pairs = read()
    assert pairs[0]["expert"]  # the experts' scores are read
    # when: two more pairs are made
    add_pair("Two")
    add_pair("Three")
    three, pairs = read()
    # then: all three, in as many queries as one
    assert [pair["label"] for pair in pairs] == ["One", "Two", "Three"]
    assert three == one
