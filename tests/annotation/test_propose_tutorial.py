"""Propose-then-verify's tutorial: the manifest's tutorial rows are worked examples (a
person's segment, the experts' complete labels and why), shown before the test."""

import pytest

from annotation.errors import ImportFailed
from annotation.models import ExpertLabel, Stimulus
from annotation.readiness import study_problems
from annotation.services.study_import import study_import_manifest
from media_pipeline.ffmpeg.synth import make_clip
from media_pipeline.services.transcode_jobs import stimuli_enqueue_processing
from tests.annotation.design_fixtures import tiny_propose_study
from tests.annotation.rater_fixtures import rater_client
from tests.annotation.test_propose_design import box, write_rows

pytestmark = pytest.mark.django_db

CONSENT = {"accept": True, "viewport_width": 1280, "viewport_height": 800, "pixel_ratio": 1}
WHY = "Seated, looking at the speaker, a cup in hand."


def example_rows() -> list[dict]:
    return [
        box(path="film.mp4", role="tutorial", keyframe="2", person_id="0",
            expert_actions="79|12", note="Standing and speaking."),
        box(path="film.mp4", role="tutorial", keyframe="2", person_id="1", x1="0.6", x2="0.9",
            expert_actions="80|17|11", note=WHY),
    ]  # fmt: skip


def test_worked_examples_are_imported_and_shown_before_the_test(
    tmp_path, django_capture_on_commit_callbacks
):
    # given: a study that asks no tutorial of its raters yet
    tiny = tiny_propose_study(stimuli=0)
    assert "no_exemplars" in {p.code for p in study_problems(study=tiny.study)}
    # when: two people of one film are imported as worked examples
    make_clip(path=tmp_path / "film.mp4", width=160, height=120, fps=10, seconds=6.0)
    manifest = write_rows(tmp_path, example_rows(), extra_columns=["note"])
    with django_capture_on_commit_callbacks(execute=True):
        study_import_manifest(
            study=tiny.study, manifest=manifest, on_commit=stimuli_enqueue_processing
        )
    # then: each a segment cut around its keyframe, with the experts' labels and why
    examples = Stimulus.objects.filter(study=tiny.study, role="tutorial").order_by("pk")
    assert [s.status for s in examples] == ["ready", "ready"]
    assert [s.segment["box"] for s in examples] == [[0.1, 0.2, 0.5, 0.9], [0.6, 0.2, 0.9, 0.9]]
    label = ExpertLabel.objects.get(stimulus=examples[1])
    assert (label.value, label.note) == ([11, 17, 80], WHY)
    assert "no_exemplars" not in {p.code for p in study_problems(study=tiny.study)}
    # and: a rater's tutorial shows them, the labels named with their group in the
    # vocabulary's order, under the propose stage's question, and may play them
    client, user = rater_client()
    assert client.post(tiny.base + "consent/", CONSENT, format="json").status_code == 200
    body = client.get(tiny.base + "tutorial/").json()
    assert body["pairs"] == []
    assert [q["key"] for q in body["questions"]] == ["propose"]
    second = body["exemplars"][1]
    assert second["box"] == [0.6, 0.2, 0.9, 0.9]
    (answer,) = second["answers"]
    assert answer == {
        "question": "propose",
        "value": [
            {"id": 11, "name": "sit", "group": "Pose"},
            {"id": 17, "name": "carry/hold (an object)", "group": "Person-object"},
            {"id": 80, "name": "watch (a person)", "group": "Person-person"},
        ],
        "note": WHY,
    }
    client.force_login(user)  # the media views are pages, signed in by session
    assert client.get(second["video_url"]).status_code == 200


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"role": "tutorial"}, "a tutorial row needs the experts' labels: expert_actions"),
        ({"role": "tutorial", "expert_actions": "12", "keyframe": ""}, "needs its keyframe"),
        ({"note": "why"}, "a stimulus row takes no note"),
    ],
)
def test_a_bad_example_row_is_refused_with_its_line(tmp_path, row, message):
    tiny = tiny_propose_study(stimuli=0)
    make_clip(path=tmp_path / "film.mp4", width=160, height=120, fps=10, seconds=6.0)
    fields = {"path": "film.mp4", "role": "stimulus", "keyframe": "2", **row}
    manifest = write_rows(tmp_path, [box(**fields)], extra_columns=["note"])
    before = Stimulus.objects.filter(study=tiny.study).count()
    with pytest.raises(ImportFailed) as refused:
        study_import_manifest(study=tiny.study, manifest=manifest)
    assert any(line == 2 and message in text for line, text in refused.value.errors), (
        refused.value.errors
    )
    assert Stimulus.objects.filter(study=tiny.study).count() == before  # nothing imported
