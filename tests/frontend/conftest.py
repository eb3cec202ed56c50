"""Fixtures of the rater-page tests: real playable clips, a tiny study, real Chromium."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.core.files.base import ContentFile

from annotation.models import Dimension, ExpertLabel, Stimulus, TutorialPair
from tests.annotation.rater_fixtures import TinyStudy, tiny_study
from tests.factories import StimulusFactory, add_expert_scores
from tests.live_requests import close_context

# Playwright's sync API keeps an event loop in the test thread; the ORM calls the tests
# make beside it are still synchronous, so Django's async guard would refuse them.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

MARKET = "https://market.example/"
CLIP_SIZE = (64, 48)


@dataclass(frozen=True)
class Clip:
    video: bytes
    poster: bytes


@pytest.fixture(scope="session")
def clip(tmp_path_factory) -> Clip:
    """A 0.5 s H.264 clip (so that 'watched to the end' takes half a second) and a poster."""
    folder = tmp_path_factory.mktemp("clips")
    video, poster = folder / "clip.mp4", folder / "poster.png"
    width, height = CLIP_SIZE
    source = f"testsrc2=size={width}x{height}:rate=10"
    subprocess.run(
        ["ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi", "-i", source, "-t", "0.5",
         "-pix_fmt", "yuv420p", "-c:v", "libx264", str(video)],
        check=True,
    )  # fmt: skip
    subprocess.run(
        ["ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi", "-i", source, "-frames:v", "1",
         str(poster)],
        check=True,
    )  # fmt: skip
    return Clip(Path(video).read_bytes(), Path(poster).read_bytes())


def attach_clip(stimulus: Stimulus, clip: Clip) -> None:
    name = str(stimulus.public_id)
    stimulus.source_file.save(f"{name}.mp4", ContentFile(clip.video), save=False)
    stimulus.rendition.save(f"renditions/{name}.mp4", ContentFile(clip.video), save=False)
    stimulus.poster.save(f"posters/{name}.png", ContentFile(clip.poster), save=False)
    stimulus.width, stimulus.height = CLIP_SIZE
    stimulus.duration_s = 0.5
    stimulus.save()


def worked_example(tiny: TinyStudy, clip: Clip, *, ends: str, question, note: str):
    """A compared design's worked example with real clips: a tutorial video of content
    "e1" per letter of `ends` in that order (b best, w worst, m in between), the best's
    ExpertLabel naming `question` and `note`; the videos by their end ("best", ...)."""
    names = {"b": "best", "w": "worst", "m": ""}
    videos = {}
    for letter in ends:
        video = StimulusFactory(
            study=tiny.study, role=Stimulus.Role.TUTORIAL, content="e1", expected=names[letter]
        )
        attach_clip(video, clip)
        videos[names[letter] or "between"] = video
    ExpertLabel.objects.create(stimulus=videos["best"], dimension=question, value="best", note=note)
    return videos


def add_tutorial(tiny: TinyStudy, clip: Clip) -> list[TutorialPair]:
    """Three pairs: two for subject quality, one for action completeness."""
    study = tiny.study
    pairs = []
    for order, (key, expert) in enumerate([("subject", 35.0), ("subject", 70.0),
                                           ("completeness", 60.0)]):  # fmt: skip
        generated, real = StimulusFactory.create_batch(2, study=study, role=Stimulus.Role.TUTORIAL)
        add_expert_scores(generated, mean=expert, sigma=5.0)
        for stimulus in (generated, real):
            attach_clip(stimulus, clip)
        pairs.append(
            TutorialPair.objects.create(
                study=study,
                dimension=Dimension.objects.get(study=study, key=key),
                label=f"Example {order + 1}",
                generated=generated,
                real=real,
                caption=f"A person does thing {order + 1}.",
                explanation=f"Why example {order + 1} is rated so.",
                order=order,
            )
        )
    return pairs


@pytest.fixture
def rater_study(clip):
    """Build the tiny study (6 stimuli, 2 golden, a 2 s break every 3, a 2-item
    qualification) with real clips and a tutorial; keyword arguments override settings."""

    def build(**settings) -> TinyStudy:
        settings.setdefault("instructions", "Watch each video to the end, then rate it.")
        settings.setdefault("consent_text", "I agree that my ratings are used for research.")
        tiny = tiny_study(**settings)
        for stimulus in Stimulus.objects.filter(study=tiny.study):
            attach_clip(stimulus, clip)
        add_tutorial(tiny, clip)
        return tiny

    return build


@pytest.fixture
def context(browser):
    # The pages' Content-Security-Policy forbids evaluating strings, which Playwright's
    # wait_for_function does: bypassed here, enforced in test_csp_browser.py.
    context = browser.new_context(viewport={"width": 1280, "height": 800}, bypass_csp=True)
    # The marketplace is not reachable from tests: answer its pages here.
    context.route(
        f"{MARKET}**",
        lambda route: route.fulfill(status=200, content_type="text/html", body="<p>market</p>"),
    )
    context.set_default_timeout(15_000)
    yield context
    close_context(context)


@pytest.fixture
def page(context):
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.js_errors = errors
    yield page
    assert errors == [], f"JavaScript errors on the page: {errors}"


def with_clips(make, clip: Clip, instructions: str):
    """A builder of a tiny study made by `make(**settings)`, every video a real clip."""

    def build(**settings) -> TinyStudy:
        settings.setdefault("instructions", instructions)
        settings.setdefault("consent_text", "I agree that my answers are used for research.")
        tiny = make(**settings)
        for stimulus in Stimulus.objects.filter(study=tiny.study):
            attach_clip(stimulus, clip)
        return tiny

    return build


@pytest.fixture
def preference_study(clip):
    """The tiny preference study (three conditions on two contents, golden and
    qualification pairs) with real clips; keyword arguments override settings."""
    from tests.annotation.design_fixtures import tiny_preference_study

    return with_clips(tiny_preference_study, clip, "Watch both videos, then choose the better one.")


@pytest.fixture
def ranking_study(clip):
    """The tiny ranking study (three conditions on two prompts, two criteria; golden and
    qualification prompts of a best, a middling and a worst video) with real clips."""
    from tests.annotation.design_fixtures import tiny_ranking_study

    return with_clips(tiny_ranking_study, clip, "Play every video, then order them.")


@pytest.fixture
def questionnaire_study(clip):
    """The tiny questionnaire study (the small question set of every kind; four regular
    videos, the last asked only the score and the tags; golden, qualification and
    exemplar videos with the experts' answers) with real clips."""
    from tests.annotation.design_fixtures import tiny_questionnaire_study

    return with_clips(
        tiny_questionnaire_study, clip, "Watch each video, then answer the questions about it."
    )
