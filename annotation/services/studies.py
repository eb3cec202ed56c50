"""Creating studies and splitting them into sessions."""

from __future__ import annotations

import random

from django.db import transaction

from annotation.errors import ValidationFailed
from annotation.models import GAIA_DIMENSIONS, Dimension, Session, SessionItem, Stimulus, Study


@transaction.atomic
def study_create(*, name: str, slug: str, dimensions=GAIA_DIMENSIONS, **settings) -> Study:
    """A study with its dimensions in rating order; `settings` override protocol defaults."""
    if Study.objects.filter(slug=slug).exists():
        raise ValidationFailed(f"a study with slug '{slug}' already exists")
    study = Study(name=name, slug=slug, **settings)
    study.full_clean()
    study.save()
    Dimension.objects.bulk_create(
        Dimension(study=study, key=key, label=label, help_text=help_text, order=order)
        for order, (key, label, help_text) in enumerate(dimensions, start=1)
    )
    return study


@transaction.atomic
def study_build_sessions(*, study: Study) -> list[Session]:
    """Split the study's stimuli not yet in a session into new seeded sessions.

    The stimuli are shuffled with the study's split seed and cut into sessions of
    `session_size`, the last one smaller (GAIA: 9,180 = 30 x 300 + 180, 31 sessions).
    Each session gets `golden_per_session` golden stimuli drawn (seeded) from the
    study's golden pool; presentation order is shuffled per rater later. Calling it
    again after importing more stimuli appends sessions and leaves existing ones alone.
    """
    study = Study.objects.select_for_update().get(pk=study.pk)
    already = SessionItem.objects.filter(session__study=study, is_golden=False)
    pending = list(
        Stimulus.objects.filter(study=study, role=Stimulus.Role.STIMULUS)
        .exclude(pk__in=already.values("stimulus_id"))
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    if not pending:
        return []
    golden_pool = list(
        Stimulus.objects.filter(study=study, role=Stimulus.Role.GOLDEN)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    first_index = (
        study.sessions.order_by("-index").values_list("index", flat=True).first() or 0
    ) + 1
    rng = random.Random(f"{study.split_seed}:{first_index}")
    rng.shuffle(pending)
    sessions = []
    for offset, start in enumerate(range(0, len(pending), study.session_size)):
        index = first_index + offset
        seed = rng.randrange(2**62)
        session = Session.objects.create(study=study, index=index, seed=seed)
        chunk = pending[start : start + study.session_size]
        golden = random.Random(seed).sample(
            golden_pool, k=min(study.golden_per_session, len(golden_pool))
        )
        SessionItem.objects.bulk_create(
            [SessionItem(session=session, stimulus_id=pk) for pk in chunk]
            + [SessionItem(session=session, stimulus_id=pk, is_golden=True) for pk in golden]
        )
        sessions.append(session)
    return sessions
