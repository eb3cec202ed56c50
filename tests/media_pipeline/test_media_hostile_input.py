"""Hostile input to the media pipeline: files that are not what they claim, damaged in
ways the other tests' bad files are not, too large, oddly named, swapped while being
worked on. The standard: each ends with a clear message on its job and stimulus, is
logged, leaves no half-written file, does not stop the other videos, and a second run
does no work again (test_ffmpeg.py, test_jobs.py and test_job_recovery.py have the
plainer bad files and failures)."""

import logging
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.files import File
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from annotation.models import Stimulus
from media_pipeline.ffmpeg import TooLarge, demux, probe, sha256_file, transcode
from media_pipeline.ffmpeg.synth import make_clip
from media_pipeline.models import ProcessingJob
from media_pipeline.services.transcode_jobs import transcode_job_run
from tests.factories import UserFactory, make_study

# The module, not the function media_pipeline.ffmpeg exports under the same name.
transcode_module = sys.modules["media_pipeline.ffmpeg.transcode"]


def ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", *args], check=True)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> dict[str, Path]:
    """Tiny hostile files, each made in well under a second."""
    folder = tmp_path_factory.mktemp("hostile")
    files = {}
    plain = make_clip(path=folder / "plain.mp4", width=64, height=48, fps=10, seconds=1.0).path
    faststart = folder / "faststart.mp4"  # index first, so a cut keeps it whole
    ffmpeg("-i", str(plain), "-c", "copy", "-movflags", "+faststart", str(faststart))
    data = faststart.read_bytes()
    files["header_only.mp4"] = folder / "header_only.mp4"  # the ftyp box and nothing more
    files["header_only.mp4"].write_bytes(data[:32])
    files["tail_cut.mp4"] = folder / "tail_cut.mp4"  # index whole, the last frame cut short
    files["tail_cut.mp4"].write_bytes(data[:-50])
    files["zero_frames.avi"] = folder / "zero_frames.avi"  # a video stream without frames
    ffmpeg(
        "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=10", "-frames:v", "0", "-c:v", "mpeg4",
        str(files["zero_frames.avi"]),
    )  # fmt: skip
    # 32 KB declaring a 16000x16000 video: one 1-bit PNG frame in a MOV
    files["huge.mov"] = folder / "huge.mov"
    ffmpeg(
        "-f", "lavfi", "-i", "color=black:s=16000x16000:r=1", "-frames:v", "1",
        "-pix_fmt", "monob", "-c:v", "png", str(files["huge.mov"]),
    )  # fmt: skip
    files["anim.webp"] = folder / "anim.webp"  # 5 frames of animated WebP
    ffmpeg(
        "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=10", "-frames:v", "5",
        "-c:v", "libwebp_anim", "-loop", "0", str(files["anim.webp"]),
    )  # fmt: skip
    files["single.mp4"] = make_clip(
        path=folder / "single.mp4", width=64, height=48, fps=10, seconds=0.1
    ).path
    # 4:2:0 at an odd size (VP9 allows it, H.264 does not): chroma is 51x39 in the source
    files["odd420.webm"] = make_clip(
        path=folder / "odd420.webm", width=101, height=77, fps=10, seconds=1.0
    ).path
    # a WebM whose header declares 10 hours for its 10 frames (1 s)
    webm = bytearray(files["odd420.webm"].read_bytes())
    at = webm.index(b"\x44\x89\x88")  # Segment Duration, an 8-byte float in ms
    webm[at + 3 : at + 11] = struct.pack(">d", 10 * 3600 * 1000.0)
    files["ten_hours.webm"] = folder / "ten_hours.webm"
    files["ten_hours.webm"].write_bytes(bytes(webm))
    files["plain.mp4"] = plain
    return files


def stimulus_of(path: Path, original_name: str | None = None) -> Stimulus:
    stimulus = Stimulus(
        study=make_study(),
        role="stimulus",
        checksum=sha256_file(path),
        original_name=original_name or path.name,
    )
    with open(path, "rb") as handle:
        stimulus.source_file.save(path.name, File(handle), save=False)
    stimulus.save()
    return stimulus


def run_job(stimulus: Stimulus) -> ProcessingJob:
    job = ProcessingJob.objects.create(stimulus=stimulus, kind="transcode")
    transcode_job_run(job_id=job.pk)
    job.refresh_from_db()
    stimulus.refresh_from_db()
    return job


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


# --- jobs: each bad file fails alone, clearly, logged, once -------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("name", "start"),
    [
        (
            "header_only.mp4",
            "corrupt video: my clip.mp4 has a MP4/MOV header but cannot be read, probably "
            "truncated or damaged",
        ),
        ("tail_cut.mp4", "corrupt video: decoding failed part-way (my clip.mp4: corrupt input"),
        (
            "zero_frames.avi",
            "corrupt video: my clip.mp4 has a video stream without readable frames",
        ),
        ("huge.mov", "video too large: my clip.mp4 is 16000x16000 pixels, more than any browser"),
        (  # ComfyUI's default for animations; libav reads it as one (still) picture
            "anim.webp",
            "not a video: my clip.mp4 is an animated WebP, which ffmpeg cannot decode (its WebP "
            "decoder reads still pictures only); export it as MP4, WebM or GIF",
        ),
    ],
)
def test_a_hostile_file_fails_its_job_alone_with_a_clear_logged_message(
    hostile, settings, caplog, name, start
):
    # given: the hostile file and a good video queued behind it
    bad = stimulus_of(hostile[name], original_name="my clip.mp4")
    good = stimulus_of(hostile["plain.mp4"])
    media_root = Path(settings.MEDIA_ROOT)
    # when
    with caplog.at_level(logging.WARNING, logger="media_pipeline.services.transcode_jobs"):
        job = run_job(bad)
    # then: failed at once with the admin's message, on the job and on the stimulus
    assert (job.status, job.attempts) == ("failed", 1)
    assert job.error.startswith(start), job.error
    assert bad.status == "failed" and bad.processing_error == job.error
    assert str(media_root) not in job.error  # named as uploaded, not by a server path
    assert f"transcode of stimulus {bad.pk} failed: {job.error}" in caplog.messages
    # nothing of it is served or left half-written
    assert not bad.rendition and not bad.poster
    assert [f for f in files_under(media_root) if not f.startswith("sources/")] == []
    # a second delivery of its message does no work again
    transcode_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert (job.status, job.attempts) == ("failed", 1)
    # and the next video is processed as if nothing had happened
    assert run_job(good).status == "done"
    good.refresh_from_db()
    assert good.status == "ready" and (media_root / good.rendition.name).is_file()


def test_enormous_dimensions_are_refused_before_a_frame_is_decoded(hostile, monkeypatch):
    def no_decoding(*args, **kwargs):
        raise AssertionError("a frame of a too large video was decoded")

    monkeypatch.setattr(demux, "_read_video", no_decoding)
    with pytest.raises(TooLarge) as caught:
        probe(hostile["huge.mov"])
    assert str(caught.value) == (
        "video too large: huge.mov is 16000x16000 pixels, more than any browser plays "
        "(H.264: at most 8192x4320 or as many pixels, 16880 a side)"
    )


@pytest.mark.parametrize(
    ("width", "height", "refused"),
    [
        (8192, 4320, False),  # 8K, H.264 level 6.2's own example
        (4320, 8192, False),
        (16880, 128, False),  # the longest side level 6.2 allows
        (16896, 16, True),
        (8192, 4352, False),  # 512 x 272 = 139264 macroblocks, the most
        (8192, 4368, True),  # one row of 512 macroblocks more
        (11776, 11776, True),
    ],
)
def test_the_size_limit_is_h264_level_6_2(width, height, refused):
    assert demux.too_large(width, height) is refused


def test_an_upload_of_enormous_dimensions_is_refused_and_nothing_stored(hostile, db):
    client = APIClient()
    client.force_authenticate(UserFactory(is_staff=True))
    study = make_study()
    response = client.post(
        f"/api/studies/{study.slug}/stimuli/",
        {"file": SimpleUploadedFile("bomb.mp4", hostile["huge.mov"].read_bytes())},
        format="multipart",
    )
    assert response.status_code == 400
    assert response.json()["detail"].startswith("video too large: bomb.mp4 is 16000x16000")
    assert not Stimulus.objects.exists()


# --- odd but valid videos are handled, not refused ----------------------------------------


@pytest.mark.django_db
def test_a_single_frame_video_gets_a_rendition_and_a_poster(hostile, settings):
    stimulus = stimulus_of(hostile["single.mp4"])
    job = run_job(stimulus)
    assert (job.status, stimulus.status, stimulus.frame_count) == ("done", "ready", 1)
    assert job.result["frames"] == 1
    assert (Path(settings.MEDIA_ROOT) / stimulus.poster.name).stat().st_size > 0


def test_an_odd_sized_420_source_is_padded_by_one_pixel_without_losing_a_frame(hostile, tmp_path):
    result = transcode(src=hostile["odd420.webm"], out_dir=tmp_path, stem="r")
    assert (result.source.width, result.source.height, result.source.pix_fmt) == (
        101,
        77,
        "yuv420p",
    )
    assert (result.width, result.height, result.pad_right, result.pad_bottom) == (102, 78, 1, 1)
    assert result.frames == 10
    assert probe(tmp_path / "r.mp4").pix_fmt == "yuv420p"


def test_a_duration_declared_far_longer_than_the_frames_does_not_stretch_the_transcode(
    hostile, tmp_path
):
    # given: 10 frames (1 s) in a file whose header says 10 hours
    progress = []
    # when
    result = transcode(
        src=hostile["ten_hours.webm"],
        out_dir=tmp_path,
        stem="r",
        on_progress=progress.append,
        timeout_s=60,
    )
    # then: the rendition holds the frames there are, timed as they are
    assert (result.frames, result.duration) == (10, 1.0)
    assert result.source.frame_span == pytest.approx(0.9)
    assert result.source.duration == 1.0  # the frames' own end, not the header's 10 hours
    assert progress[-1] == 1.0 and progress == sorted(progress)
    assert result.elapsed_s < 30


@pytest.mark.django_db
def test_a_stimulus_stores_the_duration_that_plays_not_the_one_its_header_claims(hostile):
    stimulus = stimulus_of(hostile["ten_hours.webm"])
    job = run_job(stimulus)
    assert job.status == "done", job.error
    assert (stimulus.frame_count, stimulus.duration_s) == (10, 1.0)


# --- names and paths ----------------------------------------------------------------------


def test_relative_names_are_files_not_ffmpeg_options_or_libav_protocols(
    hostile, tmp_path, monkeypatch
):
    # given: in the working folder, a one-frame "a.mp4" and a 10-frame video named as
    # libav's concat protocol over it, and an output folder whose name starts with a dash
    monkeypatch.chdir(tmp_path)
    Path("a.mp4").write_bytes(hostile["single.mp4"].read_bytes())
    Path("concat:a.mp4|a.mp4").write_bytes(hostile["plain.mp4"].read_bytes())
    Path("x:y.mp4").write_bytes(hostile["plain.mp4"].read_bytes())
    # when / then: each name is read as the file it names, its own 10 frames
    assert probe("concat:a.mp4|a.mp4").frames == 10
    result = transcode(src="x:y.mp4", out_dir="-out", stem="r")
    assert result.frames == 10
    assert sorted(os.listdir("-out")) == ["r.jpg", "r.mp4"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "name",
    [
        "clip." + "x" * 250,  # 251-byte extension: over 255 bytes as <sha256>.<ext>
        "clip." + "漢" * 100,  # 100 characters, 300 bytes
        '-rf "it\'s"\nnew line é.mp4',
    ],
    ids=["long-extension", "cjk-extension", "dash-quotes-newline"],
)
def test_an_upload_with_a_hostile_name_is_stored_safely_under_its_checksum(hostile, settings, name):
    client = APIClient()
    client.force_authenticate(UserFactory(is_staff=True))
    study = make_study()
    response = client.post(
        f"/api/studies/{study.slug}/stimuli/",
        {"file": SimpleUploadedFile(name, hostile["plain.mp4"].read_bytes())},
        format="multipart",
    )
    assert response.status_code == 201, response.content
    stimulus = Stimulus.objects.get()
    suffix = ".mp4" if name.endswith(".mp4") else ".bin"
    assert (
        stimulus.source_file.name == f"sources/{stimulus.checksum[:2]}/{stimulus.checksum}{suffix}"
    )
    assert stimulus.original_name == name.replace("\n", "")  # multipart drops the newline
    assert (Path(settings.MEDIA_ROOT) / stimulus.source_file.name).is_file()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("gone", "not a video: my clip.mp4 does not exist"),
        ("/dev/zero", "not a video: my clip.mp4 is not a regular file"),
    ],
)
def test_a_source_that_is_a_dangling_or_device_symlink_fails_at_once(
    hostile, tmp_path, target, message
):
    # given: the stored source replaced by a symlink out of the media root, to a file
    # since removed, or to an endless device (reading it would never end)
    stimulus = stimulus_of(hostile["plain.mp4"], original_name="my clip.mp4")
    source = Path(stimulus.source_file.path)
    source.unlink()
    source.symlink_to(tmp_path / target if target == "gone" else target)
    # when
    job = run_job(stimulus)
    # then
    assert (job.status, job.error, stimulus.processing_error) == ("failed", message, message)


# --- a source swapped while it is worked on ----------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("swap", "expected"),
    [
        (
            "same-shape",  # 10 frames of 64x48 too: only the content differs
            "transcode failed: my clip.mp4 was replaced or changed while it was being "
            "transcoded; nothing was kept",
        ),
        (
            "one-frame",
            "transcode failed: my clip.mp4 was replaced or changed while it was being "
            "transcoded; nothing was kept",
        ),
        ("removed", "transcode failed: ffmpeg exited with code 1: my clip.mp4: No such file"),
    ],
)
def test_a_source_changed_between_probe_and_transcode_fails_and_serves_nothing(
    hostile, settings, monkeypatch, caplog, tmp_path, swap, expected
):
    # given: right after the probe, the source is rewritten with another video or removed
    stimulus = stimulus_of(hostile["plain.mp4"], original_name="my clip.mp4")
    other = {
        "same-shape": lambda: make_clip(
            path=tmp_path / "bars.mp4", width=64, height=48, fps=10, seconds=1.0,
            pattern="smptebars",
        ).path,
        "one-frame": lambda: hostile["single.mp4"],
        "removed": lambda: None,
    }[swap]()  # fmt: skip
    real_probe = transcode_module.probe

    def probe_then_swap(path, **options):
        probed = real_probe(path, **options)
        if other is None:
            Path(path).unlink()
        else:
            Path(path).write_bytes(other.read_bytes())
        return probed

    monkeypatch.setattr(transcode_module, "probe", probe_then_swap)
    # when
    with caplog.at_level(logging.WARNING, logger="media_pipeline.services.transcode_jobs"):
        job = run_job(stimulus)
    # then: failed with the reason, logged, and no rendition of either version served
    assert (job.status, job.attempts, stimulus.status) == ("failed", 1, "failed")
    assert job.error.startswith(expected), job.error
    assert f"transcode of stimulus {stimulus.pk} failed: {job.error}" in caplog.messages
    assert not stimulus.rendition and not stimulus.poster
    assert [f for f in files_under(Path(settings.MEDIA_ROOT)) if f.startswith("renditions/")] == []
