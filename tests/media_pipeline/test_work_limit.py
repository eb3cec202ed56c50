"""The limit on a transcode's work (MOSAIC_MAX_DECODED_PIXELS: width x height x frames),
at its boundary: on upload and import, where a frame too large is refused, and on the
transcode job itself. Each video is a real file made by ffmpeg."""

import csv
import logging
import sys
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from annotation.errors import ImportFailed
from annotation.models import Stimulus
from annotation.services.study_import import study_import_manifest
from media_pipeline.ffmpeg import TooLarge, check_work, probe, transcode
from media_pipeline.ffmpeg.synth import make_clip
from tests.annotation.design_fixtures import tiny_propose_study
from tests.factories import UserFactory, make_study
from tests.media_pipeline.test_media_hostile_input import files_under, run_job, stimulus_of

transcode_module = sys.modules["media_pipeline.ffmpeg.transcode"]
# 64 x 48 pixels x 10 frames
CLIP_PIXELS = 30_720
# 160 x 120 pixels x 60 frames (6 s at 10 fps); a 3 s segment of it is 30 frames
FILM_PIXELS, SEGMENT_PIXELS = 1_152_000, 576_000


@pytest.fixture(scope="module")
def videos(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("work")
    return {
        "clip": make_clip(path=folder / "clip.mp4", width=64, height=48, fps=10, seconds=1.0).path,
        "film": make_clip(
            path=folder / "film.mp4", width=160, height=120, fps=10, seconds=6.0
        ).path,
    }


def refusal(name: str, frames: int, size: str, pixels: int, limit: int) -> str:
    return (
        f"video too large: {name} is {frames:,} frames of {size} at 10 fps, {pixels:,} pixels "
        f"to transcode, more than the limit of {limit:,} (MOSAIC_MAX_DECODED_PIXELS)"
    )


def test_the_limit_counts_width_height_and_frames(videos):
    source = probe(videos["clip"])
    assert (source.width, source.height, source.frames) == (64, 48, 10)
    check_work(source, name="clip.mp4", max_pixels=CLIP_PIXELS)  # at the limit: taken
    with pytest.raises(TooLarge) as caught:
        check_work(source, name="clip.mp4", max_pixels=CLIP_PIXELS - 1)
    assert str(caught.value) == refusal("clip.mp4", 10, "64x48", CLIP_PIXELS, CLIP_PIXELS - 1)


def test_a_segment_counts_its_own_frames_only(videos):
    source = probe(videos["film"])
    check_work(source, name="film.mp4", max_pixels=SEGMENT_PIXELS, seconds=3.0)
    with pytest.raises(TooLarge) as caught:
        check_work(source, name="film.mp4", max_pixels=SEGMENT_PIXELS - 1, seconds=3.0)
    assert str(caught.value) == refusal(
        "the 3 s segment of film.mp4", 30, "160x120", SEGMENT_PIXELS, SEGMENT_PIXELS - 1
    )


def test_a_transcode_over_the_limit_starts_no_ffmpeg_and_leaves_nothing(videos, tmp_path):
    with pytest.raises(TooLarge):
        transcode(src=videos["clip"], out_dir=tmp_path, stem="r", max_pixels=CLIP_PIXELS - 1)
    assert list(tmp_path.iterdir()) == []
    assert (
        transcode(src=videos["clip"], out_dir=tmp_path, stem="r", max_pixels=CLIP_PIXELS).frames
        == 10
    )


# --- upload and import --------------------------------------------------------------------


def upload(study, path: Path, name: str):
    client = APIClient()
    client.force_authenticate(UserFactory(is_staff=True))
    return client.post(
        f"/api/studies/{study.slug}/stimuli/",
        {"file": SimpleUploadedFile(name, path.read_bytes())},
        format="multipart",
    )


@pytest.mark.django_db
def test_an_upload_over_the_limit_is_refused_and_nothing_stored(videos, settings):
    # given
    study = make_study()
    settings.MOSAIC_MAX_DECODED_PIXELS = CLIP_PIXELS - 1
    # when
    response = upload(study, videos["clip"], "bomb.mp4")
    # then
    assert response.status_code == 400
    assert response.json()["detail"] == refusal(
        "bomb.mp4", 10, "64x48", CLIP_PIXELS, CLIP_PIXELS - 1
    )
    assert not Stimulus.objects.exists()
    assert files_under(Path(settings.MEDIA_ROOT)) == []
    # and at the limit it is taken
    settings.MOSAIC_MAX_DECODED_PIXELS = CLIP_PIXELS
    assert upload(study, videos["clip"], "bomb.mp4").status_code == 201


def write_manifest(folder: Path, rows: list[dict]) -> Path:
    manifest = folder / "manifest.csv"
    with open(manifest, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return manifest


@pytest.mark.django_db
def test_an_import_over_the_limit_refuses_the_row_and_imports_nothing(videos, tmp_path, settings):
    # given
    study = make_study()
    manifest = write_manifest(tmp_path, [{"path": str(videos["clip"]), "role": "stimulus"}])
    settings.MOSAIC_MAX_DECODED_PIXELS = CLIP_PIXELS - 1
    # when
    with pytest.raises(ImportFailed) as refused:
        study_import_manifest(study=study, manifest=manifest)
    # then
    assert refused.value.errors == [
        (2, refusal("clip.mp4", 10, "64x48", CLIP_PIXELS, CLIP_PIXELS - 1))
    ]
    assert not Stimulus.objects.exists()
    # and at the limit it is imported
    settings.MOSAIC_MAX_DECODED_PIXELS = CLIP_PIXELS
    assert len(study_import_manifest(study=study, manifest=manifest).created) == 1


@pytest.mark.django_db
def test_a_segment_row_is_limited_by_its_segment_not_the_whole_film(videos, tmp_path, settings):
    # given: a propose-then-verify study cuts 3 s around each keyframe
    tiny = tiny_propose_study(stimuli=0)
    row = {"path": str(videos["film"]), "role": "stimulus", "keyframe": "2", "x1": "0.1",
           "y1": "0.2", "x2": "0.5", "y2": "0.9", "person_id": "0"}  # fmt: skip
    manifest = write_manifest(tmp_path, [row])
    settings.MOSAIC_MAX_DECODED_PIXELS = SEGMENT_PIXELS - 1
    # when / then: over the limit by its segment
    with pytest.raises(ImportFailed) as refused:
        study_import_manifest(study=tiny.study, manifest=manifest)
    assert refused.value.errors == [
        (
            2,
            refusal(
                "the 3 s segment of film.mp4", 30, "160x120", SEGMENT_PIXELS, SEGMENT_PIXELS - 1
            ),
        )
    ]
    # at the segment's own count it is imported, though the whole film is twice that
    settings.MOSAIC_MAX_DECODED_PIXELS = SEGMENT_PIXELS
    assert FILM_PIXELS > SEGMENT_PIXELS
    assert len(study_import_manifest(study=tiny.study, manifest=manifest).created) == 1


# --- the transcode job --------------------------------------------------------------------


@pytest.mark.django_db
def test_a_video_over_a_limit_lowered_since_its_upload_fails_its_job_clearly(
    videos, settings, caplog
):
    # given: a video taken before the limit was lowered
    stimulus = stimulus_of(videos["clip"], original_name="my clip.mp4")
    settings.MOSAIC_MAX_DECODED_PIXELS = CLIP_PIXELS - 1
    # when
    with caplog.at_level(logging.WARNING, logger="media_pipeline.services.transcode_jobs"):
        job = run_job(stimulus)
    # then: failed at once (no retry would help), with the reason, logged; nothing written
    expected = refusal("my clip.mp4", 10, "64x48", CLIP_PIXELS, CLIP_PIXELS - 1)
    assert (job.status, job.attempts, job.error) == ("failed", 1, expected)
    assert (stimulus.status, stimulus.processing_error) == ("failed", expected)
    assert f"transcode of stimulus {stimulus.pk} failed: {expected}" in caplog.messages
    media_root = Path(settings.MEDIA_ROOT)
    assert [f for f in files_under(media_root) if not f.startswith("sources/")] == []
