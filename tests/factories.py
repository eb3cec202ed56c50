"""factory_boy factories for the annotation models."""

import hashlib
import itertools

import factory
from django.contrib.auth.models import User
from django.core.files.base import ContentFile

from annotation.models import (
    Dimension,
    ExpertScore,
    Rater,
    Stimulus,
    Study,
)
from annotation.services.studies import study_create

_counter = itertools.count()


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.django.Password("pw")


class RaterFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Rater

    user = factory.SubFactory(UserFactory)


def make_study(**settings) -> Study:
    """A study with GAIA's three dimensions; settings override protocol defaults."""
    n = next(_counter)
    settings.setdefault("name", f"Study {n}")
    settings.setdefault("slug", f"study-{n}")
    return study_create(**settings)


class StimulusFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Stimulus

    study = factory.LazyFunction(make_study)
    role = Stimulus.Role.STIMULUS
    checksum = factory.Sequence(lambda n: hashlib.sha256(f"video{n}".encode()).hexdigest())
    source_file = factory.LazyAttribute(lambda o: ContentFile(b"not a real video", name="v.mp4"))
    status = Stimulus.Status.READY
    prompt = "A girl arranges daisies."
    action = "Arranging Flowers"
    action_class = "whole-body"
    source_model = "ModelScope"


def add_expert_scores(stimulus: Stimulus, mean: float = 50.0, sigma: float = 10.0) -> None:
    for dimension in Dimension.objects.filter(study=stimulus.study):
        ExpertScore.objects.create(stimulus=stimulus, dimension=dimension, mean=mean, sigma=sigma)
