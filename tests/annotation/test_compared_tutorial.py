"""The compared designs' tutorial: the manifest's tutorial rows are worked examples (a
content's best and worst video, a ranking's others in between, the question and why),
shown before the test: a preference study's as an item shows a pair, the better video
on either side; a ranking study's in the experts' order."""

import pytest

from annotation.errors import ImportFailed
from annotation.models import Dimension, ExpertLabel, Stimulus, TutorialPair
from annotation.readiness import study_problems
from annotation.services.study_import import study_import_manifest
from media_pipeline.services.transcode_jobs import stimuli_enqueue_processing
from tests.annotation.design_fixtures import tiny_preference_study, tiny_ranking_study
from tests.annotation.rater_fixtures import rater_client
from tests.factories import StimulusFactory
from tests.videos import write_video

pytestmark = pytest.mark.django_db

CONSENT = {"accept": True, "viewport_width": 1280, "viewport_height": 800, "pixel_ratio": 1}
HEADER = "path,role,content,expected,tutorial_dimension,note,prompt"


def write_manifest(folder, rows: list[str]):
    for index, _ in enumerate(rows):
        write_video(folder / f"v{index}.mp4", f"example video {index}")
    path = folder / "manifest.csv"
    path.write_text(HEADER + "\n" + "\n".join(rows) + "\n")
    return path


def imported(tiny, manifest, capture_on_commit) -> None:
    """The manifest imported and its videos transcoded (on commit, in process): ready to
    be shown."""
    with capture_on_commit(execute=True):
        study_import_manifest(
            study=tiny.study, manifest=manifest, on_commit=stimuli_enqueue_processing
        )


def tutorial(tiny) -> dict:
    client, user = rater_client()
    assert client.post(tiny.base + "consent/", CONSENT, format="json").status_code == 200
    body = client.get(tiny.base + "tutorial/").json()
    client.force_login(user)  # the media views are pages, signed in by session
    return body, client


def test_worked_examples_are_imported_and_shown_with_the_better_video_on_either_side(
    tmp_path, django_capture_on_commit_callbacks
):
    # given: a preference study with no worked examples yet
    tiny = tiny_preference_study()
    assert "no_exemplars" in {p.code for p in study_problems(study=tiny.study)}
    # when: two examples are imported, the first's best video listed after its worst
    manifest = write_manifest(
        tmp_path,
        [
            "v0.mp4,tutorial,e1,worst,,,A dog runs",
            "v1.mp4,tutorial,e1,best,,The other one is blurred.,A dog runs",
            "v2.mp4,tutorial,e2,best,,,A cat sleeps",
            "v3.mp4,tutorial,e2,worst,,,A cat sleeps",
        ],
    )
    imported(tiny, manifest, django_capture_on_commit_callbacks)
    # then: the best video of each keeps the experts' choice for the study's one question
    question = Dimension.objects.get(study=tiny.study)
    labels = ExpertLabel.objects.filter(stimulus__study=tiny.study).order_by("stimulus__pk")
    assert [(label.stimulus.original_name, label.dimension, label.value) for label in labels] == [
        ("v1.mp4", question, "best"),
        ("v2.mp4", question, "best"),
    ]
    assert "no_exemplars" not in {p.code for p in study_problems(study=tiny.study)}
    # and: the tutorial shows each pair, the better video left in the first, right in
    # the second, with the experts' choice in those terms and why
    body, client = tutorial(tiny)
    assert body["pairs"] == []
    first, second = body["exemplars"]
    best = {s.original_name: str(s.public_id) for s in Stimulus.objects.filter(study=tiny.study)}
    assert (first["id"], first["right"]["id"]) == (best["v1.mp4"], best["v0.mp4"])
    assert first["answers"] == [
        {"question": question.key, "value": "left", "note": "The other one is blurred."}
    ]
    assert (second["id"], second["right"]["id"]) == (best["v3.mp4"], best["v2.mp4"])
    assert second["answers"] == [{"question": question.key, "value": "right", "note": ""}]
    assert (first["prompt"], first["reference"]) == ("A dog runs", None)
    assert client.get(second["right"]["video_url"]).status_code == 200


def test_an_example_of_a_question_about_the_reference_shows_its_reference(
    tmp_path, django_capture_on_commit_callbacks
):
    # given: a study of two questions, the second asked about the reference video
    tiny = tiny_preference_study()
    Dimension.objects.create(
        study=tiny.study, key="motion", label="Motion", order=9, shows_reference=True
    )
    manifest = write_manifest(
        tmp_path,
        [
            "v0.mp4,tutorial,e1,best,motion,Follows the dancer's steps.,",
            "v1.mp4,tutorial,e1,worst,,,",
            "v2.mp4,reference,e1,,,,",
        ],
    )
    # when
    imported(tiny, manifest, django_capture_on_commit_callbacks)
    # then: the example is headed by its question and shows the reference between
    body, _ = tutorial(tiny)
    (example,) = body["exemplars"]
    reference = Stimulus.objects.get(study=tiny.study, role="reference")
    assert example["reference"]["id"] == str(reference.public_id)
    assert example["answers"][0]["question"] == "motion"


def test_the_study_s_tutorial_pairs_are_shown_beside_its_examples():
    # given: a tutorial pair made in the admin, and no worked example
    tiny = tiny_preference_study()
    shown, other = StimulusFactory.create_batch(2, study=tiny.study, role=Stimulus.Role.TUTORIAL)
    question = Dimension.objects.get(study=tiny.study)
    TutorialPair.objects.create(
        study=tiny.study, dimension=question, label="Example 1", generated=shown, real=other
    )
    # when
    body, _ = tutorial(tiny)
    # then: the pair is still shown
    assert [pair["label"] for pair in body["pairs"]] == ["Example 1"]
    assert body["exemplars"] == []


def test_bad_example_rows_are_refused_with_their_lines(tmp_path):
    # given: a study of two questions, the second added a moment ago (the import reads
    # them afresh, not from the few seconds' cache of the answer path)
    tiny = tiny_preference_study()
    Dimension.objects.create(study=tiny.study, key="motion", label="Motion", order=9)
    manifest = write_manifest(
        tmp_path,
        [
            "v0.mp4,tutorial,,best,motion,,",  # no content
            "v1.mp4,tutorial,e1,best,,,",  # which question?
            "v2.mp4,tutorial,e1,worst,motion,,",  # the question goes on the best row
            "v3.mp4,tutorial,e2,best,speed,,",  # no such question
            "v4.mp4,tutorial,e3,worst,,A note,",  # the note goes on the best row
            "v5.mp4,golden,g1,best,,A note,",  # only worked examples take a note
            "v6.mp4,tutorial,e4,best,motion,,",  # no worst video
        ],
    )
    # when
    with pytest.raises(ImportFailed) as refused:
        study_import_manifest(study=tiny.study, manifest=manifest)
    # then: each named by its line, and nothing imported
    errors = dict(refused.value.errors)
    assert errors[2] == "a tutorial row of a preference study needs: content"
    assert "is not one of the study's questions" in errors[3]
    assert errors[4] == "a worked example's question and note go on its best video's row"
    assert errors[5].startswith("tutorial_dimension 'speed' is not one of the study's questions")
    assert errors[6] == errors[4]
    assert errors[7].startswith("a golden row takes no note")
    assert len(errors) == 6  # the row errors come first: contents are checked after
    assert not Stimulus.objects.filter(study=tiny.study, role="tutorial").exists()


def test_an_example_without_its_worse_video_is_refused(tmp_path):
    tiny = tiny_preference_study()
    manifest = write_manifest(tmp_path, ["v0.mp4,tutorial,e1,best,,,"])
    with pytest.raises(ImportFailed) as refused:
        study_import_manifest(study=tiny.study, manifest=manifest)
    assert refused.value.errors == [
        (2, "tutorial content 'e1' has no 'worst' video (one best and one worst make its pair)")
    ]


def test_a_ranking_example_shows_its_videos_in_the_experts_order(
    tmp_path, django_capture_on_commit_callbacks
):
    # given: a ranking study of two criteria, without worked examples
    tiny = tiny_ranking_study()
    assert "no_exemplars" in {p.code for p in study_problems(study=tiny.study)}
    criterion = Dimension.objects.filter(study=tiny.study).order_by("order").last()
    # when: an example of four videos is imported, its worst first and its best third
    manifest = write_manifest(
        tmp_path,
        [
            "v0.mp4,tutorial,e1,worst,,,A dog runs",
            "v1.mp4,tutorial,e1,,,,A dog runs",
            f"v2.mp4,tutorial,e1,best,{criterion.key},Sharp and steady.,A dog runs",
            "v3.mp4,tutorial,e1,,,,A dog runs",
        ],
    )
    imported(tiny, manifest, django_capture_on_commit_callbacks)
    # then: best first, the others in between in the order imported, worst last
    assert "no_exemplars" not in {p.code for p in study_problems(study=tiny.study)}
    body, client = tutorial(tiny)
    (example,) = body["exemplars"]
    ids = {s.original_name: str(s.public_id) for s in Stimulus.objects.filter(study=tiny.study)}
    shown = [(video["id"], video["place"]) for video in example["videos"]]
    assert shown == [
        (ids["v2.mp4"], "best"),
        (ids["v1.mp4"], "between"),
        (ids["v3.mp4"], "between"),
        (ids["v0.mp4"], "worst"),
    ]
    assert example["id"] == ids["v2.mp4"]
    assert example["answers"] == [
        {
            "question": criterion.key,
            "value": ["best", "between", "between", "worst"],
            "note": "Sharp and steady.",
        }
    ]
    assert client.get(example["videos"][3]["video_url"]).status_code == 200


def test_a_ranking_example_names_its_criterion_and_has_both_ends(tmp_path):
    # given: a ranking study of two criteria
    tiny = tiny_ranking_study()
    manifest = write_manifest(
        tmp_path,
        [
            "v0.mp4,tutorial,e1,best,,,",  # which criterion?
            "v1.mp4,tutorial,e1,worst,,,",
            "v2.mp4,tutorial,e2,,,,",  # no best, no worst
        ],
    )
    # when
    with pytest.raises(ImportFailed) as refused:
        study_import_manifest(study=tiny.study, manifest=manifest)
    # then
    (line, text), *_ = refused.value.errors
    assert line == 2 and "is not one of the study's questions" in text
    manifest = write_manifest(
        tmp_path,
        [
            "v0.mp4,tutorial,e1,best,aesthetics,,",
            "v1.mp4,tutorial,e1,worst,,,",
            "v2.mp4,tutorial,e2,,,,",
        ],
    )
    with pytest.raises(ImportFailed) as refused:
        study_import_manifest(study=tiny.study, manifest=manifest)
    make = "(one best and one worst make its item)"
    assert sorted(refused.value.errors) == [
        (4, f"tutorial content 'e2' has no 'best' video {make}"),
        (4, f"tutorial content 'e2' has no 'worst' video {make}"),
    ]
