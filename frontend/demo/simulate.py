"""Simulated raters for the demo studies, so that a newcomer finds the monitor and the
results pages full at once. Every simulated rater is marked as such (Rater.is_simulated,
external ids SIM-...), their answers go through the study's design like a real rater's
(the qualification test through the rater's own service, then its layout, its value
rows, its golden gate), and nothing here is used outside the demo.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable

import numpy as np
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from annotation.designs import design_of, values_digest
from annotation.models import Answer, Assignment, Item, Participation, Rater, Session, Study
from annotation.selectors import item_layout, items_by_pk
from annotation.services.answers import Envelope, layout_ids
from annotation.services.participation import participation_tutorial_done
from annotation.services.qualification import (
    qualification_answer_submit,
    qualification_items,
    qualification_seed,
)

# values(item, layout, rater profile, rng) -> the design's Values for that answer
Simulate = Callable[[Item, list, dict, np.random.Generator], object]


def simulated_raters_of(study: Study):
    return Rater.objects.filter(is_simulated=True, participations__study=study)


@transaction.atomic
def simulate_raters(
    *,
    study: Study,
    profiles: list[dict],
    values: Simulate,
    seed: int = 0,
    sessions=None,
    first_number: int = 1,
) -> list[Rater]:
    """One simulated rater per profile, numbered from `first_number`. Each takes the
    study's qualification test (with the profile's "in_test" profile where it has one: a
    rater careful in the test who slacks after, as real ones do), and once passed answers
    every session of the study (or of `sessions`: its ready items, in their own shuffled
    order) until a session fails the golden gate. Does nothing when the study has
    simulated raters numbered so already."""
    if simulated_raters_of(study).filter(external_id=f"SIM-{study.slug}-{first_number:02d}"):
        return []
    design = design_of(study)
    rng = np.random.default_rng(seed)
    now = timezone.now()
    made = []
    for number, profile in enumerate(profiles, start=first_number):
        name = f"SIM-{study.slug}-{number:02d}"
        user = User.objects.create(username=name.lower())
        user.set_unusable_password()
        user.save(update_fields=["password"])
        rater = Rater.objects.create(user=user, external_id=name, is_simulated=True)
        participation = Participation.objects.create(
            rater=rater,
            study=study,
            consent_at=now,
            # seeded like the sessions' orders: the demo's answers, and so its run's
            # numbers, are the same at every start (the rng's draws follow the order)
            qualification_order_seed=random.Random(f"{name}:test").randrange(2**62),
        )
        made.append(rater)
        if not _qualified(participation, values, profile.get("in_test", profile), rng):
            continue
        answered = 0
        chosen = sessions if sessions is not None else Session.objects.filter(study=study)
        for session in chosen.order_by("index"):
            items = list(
                session.items.exclude(item__members__stimulus__status="failed")
                .order_by("item_id")  # PostgreSQL's DISTINCT has no order of its own
                .values_list("item_id", flat=True)
                .distinct()
            )
            if not items:
                continue
            order_seed = random.Random(f"{name}:{session.index}").randrange(2**62)
            random.Random(order_seed).shuffle(items)
            assignment = Assignment.objects.create(
                rater=rater,
                session=session,
                order_seed=order_seed,
                order=items,
                position=len(items),
                answered_before=answered,
                last_activity_at=now,
                finished_at=now,
                state=Assignment.State.FINISHED,
            )
            found = items_by_pk(items)
            for pk in items:
                item = found[pk]
                layout = item_layout(item, order_seed)
                answer_values = values(item, layout, profile, rng)
                answer = Answer.objects.create(
                    item=item,
                    participation=participation,
                    assignment=assignment,
                    layout=layout_ids(layout),
                    values_digest=values_digest(answer_values.canonical()),
                    shown_at=now,
                    answered_at=now,
                    watch_time_ms=int(rng.integers(3000, 9000)),
                    plays=1,
                )
                design.store_values(answer=answer, item=item, layout=layout, values=answer_values)
            gate = design.golden_gate(study=study, assignment=assignment)
            assignment.golden_agreement, assignment.eligible_for_next = gate.agreement, gate.passed
            assignment.save(update_fields=["golden_agreement", "eligible_for_next"])
            answered += len(items)
            if not gate.passed:  # as a real rater, stopped at the gate: no next session
                break
    return made


def _qualified(
    participation: Participation, values: Simulate, profile: dict, rng: np.random.Generator
) -> bool:
    """The rater takes the qualification test through the service a real rater's answers
    go through (attempt after attempt, as the study allows): True when passed."""
    participation = participation_tutorial_done(participation=participation)
    while participation.qualification_state == Participation.Qualification.IN_PROGRESS:
        items = qualification_items(participation=participation)
        if not items:
            raise RuntimeError(f"{participation}: the qualification test is not ready")
        found = items_by_pk(items)
        for pk in items:
            item = found[pk]
            layout = item_layout(item, qualification_seed(participation))
            envelope = Envelope(
                client_uuid=uuid.uuid4(),
                item=item.public_id,
                shown_at=timezone.now(),
                answered_at=timezone.now(),
                watch_time_ms=int(rng.integers(3000, 9000)),
                plays=1,
                stalls=0,
            )
            answer_values = values(item, layout, profile, rng)
            qualification_answer_submit(
                participation=participation,
                envelope=envelope,
                item=item,
                values_of=lambda _item, checked=answer_values: checked,
            )
        participation.refresh_from_db()
    return participation.qualification_state == Participation.Qualification.PASSED


def finished_run(study: Study):
    """A finished analysis run of the study as it is now (computed here and now)."""
    from quality.services import analysis_run_execute, analysis_run_request

    run = analysis_run_request(study=study)
    analysis_run_execute(run_id=run.pk)  # a run the commit already ran is left alone
    run.refresh_from_db()
    return run
