"""Active pair choice in a running preference study (adaptive collection, PROTOCOL.md
3.1): with `active_pairs` on, a rater's session is made when they start it, of the pairs
that teach the scale most now, instead of the next balanced session.

Per question, the Thurstone scale with a tie band is fitted (Laplace posterior,
quality.stats.adaptive.scaling) to the judgments that count so far: regular items, in
sessions not excluded. The pairs shown in other raters' sessions and not answered yet
are taken as pending (quality.stats.adaptive.pairs.with_pending), so raters starting
one after another get different pairs without waiting for each other's answers; then
choose_pairs (ASAP's batch mode: spanning trees of the graph of condition pairs weighted
by each pair's expected reduction of the scale's posterior variance) gives the rater
their pairs, never one condition pair more than `pair_repeat_limit` times per
question over the study. Each chosen condition pair becomes an item of that pair whose
content the rater has not seen, the least-used first, so contents are spread evenly.

Sides: which video goes left is the design's layout (alternating over the items of one
pair in the session, from a side drawn with the rater's seed), as in balanced sessions.
The session's golden items are drawn as for any session. The study row is locked while
a session is made: the choices of two raters starting at once see each other.
"""

from __future__ import annotations

import logging
import random
import secrets
from collections import Counter, defaultdict
from dataclasses import dataclass

import numpy as np
from django.db.models import Count

from annotation.counting import counts_q
from annotation.designs.preference import settings_of
from annotation.models import (
    Answer,
    Assignment,
    Item,
    ItemMember,
    Participation,
    PreferenceJudgment,
    Session,
    SessionItem,
    Stimulus,
    Study,
)
from annotation.services.studies import next_session_index, session_make
from quality.stats.adaptive.pairs import choose_pairs, with_pending
from quality.stats.adaptive.scaling import fit_scale

logger = logging.getLogger(__name__)

OUTCOME = {"left": 1, "equal": 0, "right": -1}
IN_FLIGHT = (Assignment.State.ACTIVE, Assignment.State.PAUSED)


@dataclass(frozen=True)
class Catalogue:
    """The study's regular items that can be shown: per (question, condition pair) the
    item ids, and every item's (question, pair)."""

    conditions: list[str]
    items: dict[tuple[int, tuple[int, int]], list[int]]
    pair_of: dict[int, tuple[int, tuple[int, int]]]


def _catalogue(study: Study) -> Catalogue:
    """Items of two shown videos of two conditions, both ready."""
    shown = defaultdict(list)
    unready = set()
    rows = ItemMember.objects.filter(
        item__study=study, item__role=Item.Role.STIMULUS, part=ItemMember.Part.SHOWN
    ).values_list("item_id", "item__dimension_id", "stimulus__condition", "stimulus__status")
    for item_id, question, condition, status in rows:
        shown[(item_id, question)].append(condition)
        if status != Stimulus.Status.READY:
            unready.add(item_id)
    conditions = sorted({c for pair in shown.values() for c in pair if c})
    index = {c: k for k, c in enumerate(conditions)}
    items: dict[tuple[int, tuple[int, int]], list[int]] = defaultdict(list)
    pair_of = {}
    for (item_id, question), pair in sorted(shown.items()):
        if item_id in unready or len(pair) != 2 or not all(pair) or pair[0] == pair[1]:
            continue
        key = (question, tuple(sorted(index[c] for c in pair)))
        items[key].append(item_id)
        pair_of[item_id] = key
    return Catalogue(conditions, dict(items), pair_of)


def _posterior(study: Study, question: int, catalogue: Catalogue):
    """The Laplace posterior of the question's scale from its counted judgments: those
    the analysis counts, but for the run's own screening (annotation.counting: sessions
    and raters not excluded, sessions that failed the golden gate left out unless the
    study keeps them)."""
    index = {c: k for k, c in enumerate(catalogue.conditions)}
    rows = PreferenceJudgment.objects.filter(
        counts_q(study, "answer__assignment__"),
        dimension_id=question,
        answer__item__role=Item.Role.STIMULUS,
        answer__assignment__isnull=False,
        answer__item__study=study,
    ).values_list("left__condition", "right__condition", "choice")
    counted = [(index[a], index[b], OUTCOME[c]) for a, b, c in rows if a in index and b in index]
    left, right, outcome = np.array(counted, dtype=np.int64).reshape(-1, 3).T
    return fit_scale(
        n_conditions=len(catalogue.conditions), left=left, right=right, outcome=outcome
    )


def _pending(study: Study, catalogue: Catalogue) -> list[int]:
    """Regular items of sessions in flight (being rated or paused) that their rater has
    not answered yet, once per assignment."""
    flying = dict(
        Assignment.objects.filter(session__study=study, state__in=IN_FLIGHT).values_list(
            "pk", "session_id"
        )
    )
    answered = set(
        Answer.objects.filter(assignment_id__in=flying).values_list("assignment_id", "item_id")
    )
    by_session = defaultdict(list)
    for session, item in SessionItem.objects.filter(
        session_id__in=set(flying.values()), is_golden=False
    ).values_list("session_id", "item_id"):
        by_session[session].append(item)
    return [
        item
        for assignment, session in flying.items()
        for item in by_session[session]
        if (assignment, item) not in answered and item in catalogue.pair_of
    ]


def _seen_items(study: Study, rater: int) -> set[int]:
    return set(
        SessionItem.objects.filter(
            session__assignments__rater_id=rater, session__study=study, is_golden=False
        ).values_list("item_id", flat=True)
    )


def active_pairs_left(*, participation: Participation) -> bool:
    """Whether some pair may still be shown to the rater: one of a condition pair they
    have seen fewer than `pair_repeat_limit` times, with a content they have not seen."""
    study = participation.study
    limit = settings_of(study).pair_repeat_limit
    catalogue = _catalogue(study)
    seen = _seen_items(study, participation.rater_id)
    times = Counter(catalogue.pair_of[i] for i in seen if i in catalogue.pair_of)
    return any(times[key] < limit and not set(ids) <= seen for key, ids in catalogue.items.items())


def active_session_make(*, participation: Participation) -> Session | None:
    """The rater's next session of actively chosen pairs (module docstring), or None when
    they have seen every pair as often as the study allows or no item is left for them.
    The caller holds the transaction; the study row is locked here."""
    study = Study.objects.select_for_update().get(pk=participation.study_id)
    chosen = settings_of(study)
    catalogue = _catalogue(study)
    if len(catalogue.conditions) < 2 or not catalogue.items:
        return None
    rater = participation.rater_id
    seen_items = _seen_items(study, rater)
    questions = sorted({question for question, _ in catalogue.items})
    # The session's size shared over the questions, round robin from the first.
    wanted = Counter(questions[k % len(questions)] for k in range(study.session_size))
    pending = _pending(study, catalogue)
    used = Counter(
        dict(
            SessionItem.objects.filter(session__study=study, is_golden=False)
            .values_list("item_id")
            .annotate(n=Count("pk"))
        )
    )
    rng = random.Random(secrets.randbits(62))
    picked: list[int] = []
    for question in questions:
        posterior = with_pending(
            _posterior(study, question, catalogue),
            [catalogue.pair_of[i][1] for i in pending if catalogue.pair_of[i][0] == question],
        )
        history = [
            (rater, *catalogue.pair_of[i][1])
            for i in sorted(seen_items)
            if i in catalogue.pair_of and catalogue.pair_of[i][0] == question
        ]
        # a pair none of whose items is left for the rater counts as fully seen
        exhausted = [
            pair
            for (q, pair), ids in catalogue.items.items()
            if q == question and not set(ids) - seen_items
        ]
        history += [(rater, *pair) for pair in exhausted for _ in range(chosen.pair_repeat_limit)]
        picks = choose_pairs(
            posterior=posterior,
            requests={rater: wanted[question]},
            history=history,
            repeat_limit=chosen.pair_repeat_limit,
            seed=rng.randrange(2**32),
        )
        for pick in picks:
            key = (question, (min(pick.left, pick.right), max(pick.left, pick.right)))
            left = [i for i in catalogue.items.get(key, ()) if i not in seen_items]
            if not left:
                continue
            fewest = min(used[i] for i in left)
            item = rng.choice([i for i in left if used[i] == fewest])
            picked.append(item)
            seen_items.add(item)
            used[item] += 1
    if not picked:
        return None
    golden = list(
        Item.objects.filter(study=study, role=Item.Role.GOLDEN)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    session = session_make(
        study=study,
        index=next_session_index(study),
        seed=rng.randrange(2**62),
        items=picked,
        golden_pool=golden,
    )
    logger.info(
        "rater %s: active session %s of %d pairs (%d pending elsewhere)",
        rater, session, len(picked), len(pending),
    )  # fmt: skip
    return session
