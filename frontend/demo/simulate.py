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
from datetime import datetime, timedelta

import numpy as np
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotation.designs import design_of, values_digest
from annotation.models import (
    Answer,
    Assignment,
    Item,
    Participation,
    Rater,
    Session,
    Study,
)
from annotation.selectors import item_layout, items_by_pk
from annotation.services.answers import Envelope, layout_ids
from annotation.services.participation import participation_tutorial_done
from annotation.services.qualification import (
    qualification_answer_submit,
    qualification_items,
    qualification_seed,
)
from annotation.services.session_answers import payment_due

# values(item, layout, rater profile, rng) -> the design's Values for that answer
Simulate = Callable[[Item, list, dict, np.random.Generator], object]


class _Clock:
    """A simulated rater's own time, so that the monitor shows a pace (seconds per
    video), a last activity and an expected finish as a real study's would: it starts
    now and moves on with every answer (watching, then a few seconds to answer), a
    pause for the tutorial and the test, and a rest between sessions. ``backdate`` then
    moves everything the rater did back, to end in the half hour before ``ended``.
    Drawn from its own generator (seeded by the rater's name): the answers' values, and
    so the demo's numbers, do not depend on it."""

    def __init__(self, name: str) -> None:
        self.draw = random.Random(f"{name}:clock")
        self.start = self.now = timezone.now()

    def pause(self, low_s: float, high_s: float) -> None:
        self.now += timedelta(seconds=self.draw.uniform(low_s, high_s))

    def answer(self, watch_ms: int) -> tuple[datetime, datetime, datetime]:
        """(shown, answered, received) of the next answer."""
        shown = self.now
        answered = shown + timedelta(milliseconds=watch_ms + self.draw.uniform(2000, 9000))
        received = answered + timedelta(milliseconds=self.draw.uniform(50, 400))
        self.now = received + timedelta(milliseconds=self.draw.uniform(300, 1500))
        return shown, answered, received

    def backdate(self, *, participation: Participation, ended: datetime) -> None:
        """Move the rater's consent, tutorial, answers and sessions so that the last of
        them lies 1 to 30 minutes before ``ended``, drawn (raters finish at different
        times)."""
        shift = ended - timedelta(minutes=self.draw.uniform(1, 30)) - self.now
        moved = {name: F(name) + shift for name in ("shown_at", "answered_at", "received_at")}
        Answer.objects.filter(participation=participation).update(**moved)
        fields = ("started_at", "last_activity_at", "last_answered_at", "finished_at")
        Assignment.objects.filter(
            rater_id=participation.rater_id, session__study_id=participation.study_id
        ).update(**{name: F(name) + shift for name in fields})
        Participation.objects.filter(pk=participation.pk).update(
            consent_at=F("consent_at") + shift, tutorial_done_at=F("tutorial_done_at") + shift
        )


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
    ended_ago: timedelta = timedelta(0),
) -> list[Rater]:
    """One simulated rater per profile, numbered from `first_number`. Each takes the
    study's qualification test (with the profile's "in_test" profile where it has one: a
    rater careful in the test who slacks after, as real ones do), and once passed answers
    every session of the study (or of `sessions`: its ready items, in their own shuffled
    order) until a session fails the golden gate. Their answers and sessions are timed
    as a real rater's (``_Clock``), each rater's last answer in the half hour before
    ``ended_ago`` ago (a later stage's raters after an earlier's). Does nothing when the
    study has simulated raters numbered so already."""
    if simulated_raters_of(study).filter(external_id=f"SIM-{study.slug}-{first_number:02d}"):
        return []
    rng = np.random.default_rng(seed)
    now = timezone.now()
    made = []
    for number, profile in enumerate(profiles, start=first_number):
        name = f"SIM-{study.slug}-{number:02d}"
        user = User.objects.create(username=name.lower())
        user.set_unusable_password()
        user.save(update_fields=["password"])
        rater = Rater.objects.create(user=user, external_id=name, is_simulated=True)
        clock = _Clock(name)
        participation = Participation.objects.create(
            rater=rater,
            study=study,
            consent_at=clock.start,
            consented_text=study.consent_text,
            # seeded like the sessions' orders: the demo's answers, and so its run's
            # numbers, are the same at every start (the rng's draws follow the order)
            qualification_order_seed=random.Random(f"{name}:test").randrange(2**62),
        )
        made.append(rater)
        qualified = _qualified(participation, values, profile.get("in_test", profile), rng)
        clock.pause(180, 420)  # the tutorial and the test
        if qualified:
            _answer_sessions(study, sessions, participation, profile, values, rng, clock)
        clock.backdate(participation=participation, ended=now - ended_ago)
    return made


def _answer_sessions(
    study: Study,
    sessions,
    participation: Participation,
    profile: dict,
    values: Simulate,
    rng: np.random.Generator,
    clock: _Clock,
) -> None:
    """``simulate_raters``' sessions of one qualified rater."""
    design = design_of(study)
    rater, name = participation.rater, participation.rater.external_id
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
        if answered:
            clock.pause(120, 480)  # a rest between sessions
        order_seed = random.Random(f"{name}:{session.index}").randrange(2**62)
        random.Random(order_seed).shuffle(items)
        assignment = Assignment.objects.create(
            rater=rater,
            session=session,
            order_seed=order_seed,
            order=items,
            position=len(items),
            answered_before=answered,
            state=Assignment.State.FINISHED,
        )
        started, found, timed = clock.now, items_by_pk(items), []
        for pk in items:
            item = found[pk]
            layout = item_layout(item, order_seed)
            answer_values = values(item, layout, profile, rng)
            watch_ms = int(rng.integers(3000, 9000))
            shown, answered_at, received = clock.answer(watch_ms)
            answer = Answer.objects.create(
                item=item,
                participation=participation,
                assignment=assignment,
                layout=layout_ids(layout),
                values_digest=values_digest(answer_values.canonical()),
                shown_at=shown,
                answered_at=answered_at,
                watch_time_ms=watch_ms,
                plays=1,
            )
            answer.received_at = received  # auto_now_add: set once stored
            timed.append(answer)
            design.store_values(answer=answer, item=item, layout=layout, values=answer_values)
        Answer.objects.bulk_update(timed, ["received_at"])
        gate = design.golden_gate(study=study, assignment=assignment)
        assignment.golden_agreement, assignment.eligible_for_next = gate.agreement, gate.passed
        assignment.started_at = started
        assignment.last_activity_at = assignment.last_answered_at = received
        assignment.finished_at = received
        assignment.save(
            update_fields=[
                "golden_agreement",
                "eligible_for_next",
                "started_at",
                "last_activity_at",
                "last_answered_at",
                "finished_at",
            ]
        )
        payment_due(assignment=assignment, study=study)  # as a real rater's, to decide
        answered += len(items)
        if not gate.passed:  # as a real rater, stopped at the gate: no next session
            break


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
