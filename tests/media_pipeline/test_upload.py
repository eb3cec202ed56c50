import threading
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from annotation.models import Stimulus
from media_pipeline.models import ProcessingJob
from tests.factories import StimulusFactory, UserFactory, make_study

pytestmark = pytest.mark.django_db


def admin_client():
    client = APIClient()
    client.force_authenticate(UserFactory(is_staff=True))
    return client


def upload(client, study, name, data, **fields):
    return client.post(
        f"/api/studies/{study.slug}/stimuli/",
        {"file": SimpleUploadedFile(name, data), **fields},
        format="multipart",
    )


def test_upload_probes_stores_and_queues(clips, django_capture_on_commit_callbacks):
    study = make_study()
    client = admin_client()
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(
            client,
            study,
            "clip.bin",
            Path(clips["odd.mp4"]).read_bytes(),
            prompt="A man runs.",
            action="Running",
        )
    assert response.status_code == 201, response.json()
    stimulus = Stimulus.objects.get(public_id=response.json()["stimulus"])
    assert (stimulus.original_name, stimulus.prompt, stimulus.status) == (
        "clip.bin",
        "A man runs.",
        "ready",
    )  # the name said .bin: the content decided
    assert ProcessingJob.objects.filter(stimulus=stimulus, kind="transcode").count() == 1


def test_upload_refuses_a_text_file_named_mp4_and_stores_nothing(settings):
    study = make_study()
    response = upload(admin_client(), study, "notes.mp4", b"just some notes\n")
    assert response.status_code == 400
    assert response.json()["detail"].startswith("not a video: notes.mp4")
    assert Stimulus.objects.count() == 0


def test_a_duplicate_upload_is_a_conflict(clips, django_capture_on_commit_callbacks):
    study = make_study()
    client = admin_client()
    data = Path(clips["square.mp4"]).read_bytes()
    first = upload(client, study, "a.mp4", data)
    second = upload(client, study, "b.mp4", data)
    assert second.status_code == 409
    assert second.json()["stimulus"] == first.json()["stimulus"]
    assert Stimulus.objects.count() == 1


def test_the_size_limit(settings, clips):
    settings.MOSAIC_MAX_UPLOAD_BYTES = 100
    response = upload(admin_client(), make_study(), "a.mp4", Path(clips["square.mp4"]).read_bytes())
    assert response.status_code == 400 and "the limit is 100" in response.json()["detail"]


def test_only_admins_upload(clips):
    study = make_study()
    client = APIClient()
    client.force_authenticate(UserFactory())
    assert upload(client, study, "a.mp4", Path(clips["square.mp4"]).read_bytes()).status_code == 403


def test_upload_through_the_django_admin(clips, client, django_capture_on_commit_callbacks):
    study = make_study()
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    with (
        open(clips["square.mp4"], "rb") as handle,
        django_capture_on_commit_callbacks(execute=True),
    ):
        response = client.post(
            "/admin/annotation/stimulus/add/",
            {
                "study": study.pk,
                "role": "stimulus",
                "source_file": handle,
                "prompt": "A cat jumps.",
                "action": "Jumping",
            },
        )
    assert response.status_code == 302, response.content.decode()[:2000]
    stimulus = Stimulus.objects.get()
    assert (stimulus.prompt, stimulus.status) == ("A cat jumps.", "ready")


def test_an_admin_adding_a_golden_video_is_taken_to_its_expert_scores(clips, client):
    # given: a slider study
    study = make_study()
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    # when: an admin adds a golden video
    data = Path(clips["square.mp4"]).read_bytes()
    response = client.post(
        "/admin/annotation/stimulus/add/",
        {"study": study.pk, "role": "golden", "source_file": SimpleUploadedFile("g.mp4", data)},
        follow=True,
    )
    # then: on its page, where the experts' scores are entered, told to add them
    stimulus = Stimulus.objects.get()
    assert response.redirect_chain[-1][0] == f"/admin/annotation/stimulus/{stimulus.pk}/change/"
    page = response.content.decode()
    assert "Add the experts&#x27; scores of every dimension to this golden video" in page
    assert 'id="expert_scores-group"' in page  # the inline where they are entered


def test_an_admin_upload_names_a_compared_videos_condition_and_content(clips, client):
    # given: a preference study with model-a's video of content c1
    study = make_study(design="preference")
    StimulusFactory(study=study, condition="model-a", content="c1")
    client.force_login(UserFactory(is_staff=True, is_superuser=True))

    def add(name: str, condition: str, **more):
        data = Path(clips[name]).read_bytes()
        fields = {"study": study.pk, "role": "stimulus", "condition": condition,
                  "content": "c1", **more}  # fmt: skip
        return client.post(
            "/admin/annotation/stimulus/add/",
            {**fields, "source_file": SimpleUploadedFile(name, data)},
        )

    # when: model-b's video of c1
    assert add("square.mp4", "model-b").status_code == 302
    # then
    assert Stimulus.objects.filter(content="c1", condition="model-b").exists()
    # when: model-a again, for the same content
    response = add("odd.mp4", "model-a")
    # then: refused, and why
    assert response.status_code == 200
    assert "stimulus content &#x27;c1&#x27; has &#x27;model-a&#x27; twice" in (
        response.content.decode()
    )
    assert Stimulus.objects.filter(study=study).count() == 2


def test_an_upload_may_start_a_golden_pair_but_not_contradict_it(clips):
    study = make_study(design="preference")
    client = admin_client()
    first = upload(client, study, "a.mp4", Path(clips["square.mp4"]).read_bytes(),
                   role="golden", content="g1", expected="best")  # fmt: skip
    assert first.status_code == 201, first.json()  # its worst video comes next
    second = upload(client, study, "b.mp4", Path(clips["odd.mp4"]).read_bytes(),
                    role="golden", content="g1", expected="best")  # fmt: skip
    assert second.status_code == 400
    assert second.json()["detail"] == (
        "golden content 'g1' has 2 'best' videos (one best and one worst make its pair)"
    )


def test_the_admin_shows_why_an_upload_was_refused(client):
    study = make_study()
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    response = client.post(
        "/admin/annotation/stimulus/add/",
        {
            "study": study.pk,
            "role": "stimulus",
            "source_file": SimpleUploadedFile("notes.mp4", b"notes"),
        },
    )
    assert response.status_code == 200
    assert "not a video: notes.mp4" in response.content.decode()
    assert Stimulus.objects.count() == 0


def test_the_study_list_shows_processing_progress(client):
    from tests.factories import StimulusFactory

    study = make_study()
    StimulusFactory.create_batch(2, study=study)
    StimulusFactory(study=study, status="failed")
    StimulusFactory(study=study, status="pending")
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    body = client.get("/admin/annotation/study/").content.decode()
    assert "2/4 ready, 1 failed" in body


def test_the_same_file_uploaded_at_the_same_moment_is_a_conflict_that_leaves_no_file(
    clips, monkeypatch, settings
):
    """The other request stores the file between this one's duplicate check and its
    save: the unique constraint decides, and this one's copy is removed again."""
    from media_pipeline import ffmpeg

    study = make_study()
    data = Path(clips["square.mp4"]).read_bytes()
    real_probe = ffmpeg.probe

    def probe_while_the_other_request_stores(path):
        monkeypatch.setattr(ffmpeg, "probe", real_probe)
        assert upload(admin_client(), study, "first.mp4", data).status_code == 201
        return real_probe(path)

    monkeypatch.setattr(ffmpeg, "probe", probe_while_the_other_request_stores)
    # when
    response = upload(admin_client(), study, "second.mp4", data)
    # then
    assert response.status_code == 409
    assert "second.mp4 is already in this study" in response.json()["detail"]
    assert Stimulus.objects.count() == 1
    stored = [p for p in (Path(settings.MEDIA_ROOT) / "sources").rglob("*") if p.is_file()]
    assert stored == [Path(Stimulus.objects.get().source_file.path)]


def test_an_upload_to_a_ranking_study_refuses_a_condition_holding_a_separator(clips):
    study = make_study(design="ranking")
    client, video = admin_client(), Path(clips["square.mp4"]).read_bytes()
    response = upload(client, study, "a.mp4", video, condition="m=1", content="p1")
    assert response.status_code == 400
    assert "condition 'm=1' holds '='" in response.json()["detail"]
    assert not Stimulus.objects.filter(study=study).exists()
    ok = upload(client, study, "a.mp4", video, condition="m1", content="p1")
    assert ok.status_code == 201, ok.json()


def test_an_uploads_long_prompt_is_kept_whole(clips):
    # before, an upload cut every label to 500 characters and still answered 201
    study = make_study()
    prompt = "a slow pan over a harbour at dusk, " * 30 + "and a gull"
    response = upload(admin_client(), study, "a.mp4", Path(clips["square.mp4"]).read_bytes(),
                      prompt=prompt)  # fmt: skip
    assert response.status_code == 201, response.json()
    assert Stimulus.objects.get().prompt == prompt


@pytest.mark.parametrize(
    ("design", "fields", "message"),
    [
        ("preference", {}, "a stimulus video of a preference study needs: condition, content"),
        ("preference", {"role": "golden", "content": "g1"}, "needs: expected"),
        ("ranking", {"condition": "m1"}, "a stimulus video of a ranking study needs: content"),
    ],
)
def test_an_upload_names_what_its_design_needs_as_a_manifest_row_does(
    clips, design, fields, message
):
    # before, accepted: a video that could never be part of an item
    study = make_study(design=design)
    response = upload(admin_client(), study, "a.mp4", Path(clips["square.mp4"]).read_bytes(),
                      **fields)  # fmt: skip
    assert response.status_code == 400
    assert message in response.json()["detail"]
    assert not Stimulus.objects.exists()


def test_a_slider_studys_golden_upload_takes_its_expert_scores_afterwards(clips):
    study = make_study()
    response = upload(admin_client(), study, "a.mp4", Path(clips["square.mp4"]).read_bytes(),
                      role="golden")  # fmt: skip
    assert response.status_code == 201, response.json()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("design", ["preference", "ranking"])
def test_two_uploads_of_one_condition_at_once_do_not_both_pass(design):
    from django.db import connection

    from tests.videos import video_bytes

    # given: two admins uploading different videos of one condition of one content
    study = make_study(design=design)
    admin = UserFactory(is_staff=True)
    start = threading.Barrier(2)
    answers = []

    def send(tag: str) -> None:
        try:
            client = APIClient()
            client.force_authenticate(admin)
            start.wait()
            answers.append(upload(client, study, f"{tag}.mp4", video_bytes(tag),
                                  content="race", condition="m-same").status_code)  # fmt: skip
        finally:
            connection.close()

    # when: both at once
    threads = [threading.Thread(target=send, args=(tag,)) for tag in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    # then: one stored, the other refused (before, both: a ranking item named it twice)
    assert sorted(answers) == [201, 400]
    assert Stimulus.objects.filter(study=study, condition="m-same").count() == 1
