"""A tiny configured study for the rater flow: 6 stimuli, 2 golden, 2 qualification items."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.contrib.auth.models import User
from rest_framework.test import APIClient

from annotation.models import Rater, Rating, Stimulus, Study
from annotation.services.studies import study_build_sessions
from tests.factories import StimulusFactory, UserFactory, add_expert_scores, make_study


@dataclass
class TinyStudy:
    study: Study
    golden: list[Stimulus]
    qualification: list[Stimulus]

    @property
    def base(self) -> str:
        return f"/api/rater/studies/{self.study.slug}/"


def tiny_study(*, stimuli: int = 6, **settings) -> TinyStudy:
    defaults = dict(
        session_size=6,
        golden_per_session=2,
        rest_every=3,
        rest_seconds=2,
        qualification_size=2,
        completion_url="https://market.example/done",
        screenout_url="https://market.example/screenout",
        state=Study.State.RUNNING,
        # these tests drive the journey; entering through the link is tested on its own
        open_to_signed_in=True,
    )
    study = make_study(**{**defaults, **settings})
    StimulusFactory.create_batch(stimuli, study=study)
    golden = StimulusFactory.create_batch(2, study=study, role=Stimulus.Role.GOLDEN)
    add_expert_scores(golden[0], mean=20.0, sigma=10.0)
    add_expert_scores(golden[1], mean=80.0, sigma=10.0)
    qualification = StimulusFactory.create_batch(2, study=study, role=Stimulus.Role.QUALIFICATION)
    for stimulus in qualification:
        add_expert_scores(stimulus, mean=50.0, sigma=10.0)
    study_build_sessions(study=study)
    return TinyStudy(study, golden, qualification)


def rater_client(user: User | None = None) -> tuple[APIClient, User]:
    user = user or UserFactory()
    Rater.objects.get_or_create(user=user)
    client = APIClient()
    client.force_authenticate(user)
    return client, user


def answer(item: str, value: float | dict = 50.0, **extra) -> dict:
    scores = (
        value
        if isinstance(value, dict)
        else {"subject": value, "completeness": value, "interaction": value}
    )
    return {
        "client_uuid": str(uuid.uuid4()),
        "item": item,
        "scores": scores,
        "shown_at": "2026-11-22T10:00:00Z",
        "answered_at": "2026-11-22T10:00:05Z",
        "watch_time_ms": 4000,
        "plays": 1,
        "stalls": 0,
        **extra,
    }


def consent_and_tutorial(client: APIClient, tiny: TinyStudy) -> dict:
    """Consent and the tutorial done; the state after the tutorial."""
    consent = {"accept": True, "viewport_width": 1280, "viewport_height": 800, "pixel_ratio": 1}
    assert client.post(tiny.base + "consent/", consent, format="json").status_code == 200
    done = client.post(tiny.base + "tutorial/done/")
    assert done.status_code == 200
    return done.json()


def onboard(client: APIClient, tiny: TinyStudy) -> None:
    """Consent, tutorial and a passing qualification."""
    consent_and_tutorial(client, tiny)
    for _ in range(2):
        item = client.get(tiny.base + "next/").json()["item"]
        assert (
            client.post(tiny.base + "answers/", answer(item["id"], 52.0), format="json").status_code
            == 201
        )


def session_ratings():
    """The slider rating rows of session answers (qualification answers' rows are not)."""
    return Rating.objects.filter(answer__assignment__isnull=False)


def qualification_ratings():
    """The slider rating rows of qualification answers."""
    return Rating.objects.filter(answer__attempt__isnull=False)
