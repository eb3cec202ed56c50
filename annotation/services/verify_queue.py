"""Propose-then-verify's second stage fills itself (AVA): once a segment's proposals are
in, its candidate labels (the union of the proposals) become a verify item, and verify
items go into sessions.

Once and only once per segment, however many proposals arrive at once: the propose
item's row is locked and its StageLink (one per propose item) is made under the lock.
The task that calls this after each proposal is also swept periodically
(annotation.tasks.fill_verify_queues), so a task lost with a broker that was down
leaves no segment unverified.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.db.models import Count, Q

from annotation.counting import counts_q
from annotation.designs.propose import verify_item_make
from annotation.designs.propose_study import PROPOSE, settings_of
from annotation.models import (
    Answer,
    Item,
    Proposal,
    ProposalFlags,
    SessionItem,
    StageLink,
    Study,
)
from annotation.services.studies import study_build_sessions

logger = logging.getLogger(__name__)


def _proposals(item: Item) -> list[Answer]:
    """The item's stage-1 answers that count (annotation.counting): not in an excluded
    session, nor of a rater excluded from the study, nor in a session that failed its
    golden gate (unless the study keeps those). A proposal that stops counting before
    its segment's verify item is made frees its place for another proposer."""
    counted = counts_q(item.study, "assignment__")
    return list(Answer.objects.filter(counted, item=item, assignment__isnull=False).order_by("pk"))


def verify_queue_fill(*, item_id: int) -> StageLink | None:
    """Make the segment's verify item if its proposals are in and it has none; then put
    waiting verify items into sessions when a session's worth waits or no proposal is
    still to come (a segment set aside for staff may be the last one that was awaited,
    so that check follows every link made). Returns the link made now, or None."""
    with transaction.atomic():
        item = (
            Item.objects.select_for_update()
            .select_related("study", "dimension")
            .filter(pk=item_id, dimension__key=PROPOSE)
            .first()
        )
        if item is None or StageLink.objects.filter(propose_item=item).exists():
            return None
        link = _link_make(item)
    if link is not None:
        _sessions_when_due(item.study)
    return link


def _link_make(item: Item) -> StageLink | None:
    """The segment's StageLink from its first proposals, under the item's row lock: set
    aside when a majority flagged it or nobody proposed a label, else its verify item."""
    chosen = settings_of(item.study)
    answers = _proposals(item)
    if len(answers) < chosen.proposers_per_item:
        return None
    answers = answers[: chosen.proposers_per_item]
    flags = ProposalFlags.objects.filter(answer__in=answers)
    counts = {
        "inappropriate": flags.filter(inappropriate=True).count(),
        "bad_box": flags.filter(bad_box=True).count(),
    }
    majority = len(answers) // 2 + 1
    labels = sorted(
        set(Proposal.objects.filter(answer__in=answers).values_list("action__action_id", flat=True))
    )
    if any(count >= majority for count in counts.values()) or not labels:
        logger.info("segment item %s set aside for staff: %s", item.pk, counts)
        return StageLink.objects.create(
            propose_item=item, set_aside=True, flags=counts, proposals=[a.pk for a in answers]
        )
    logger.info("segment item %s: %d candidates to verify", item.pk, len(labels))
    return verify_item_make(
        propose_item=item, action_ids=labels, flags=counts, proposals=[a.pk for a in answers]
    )


def _sessions_when_due(study: Study) -> None:
    """New sessions of the waiting verify items, once a session's worth waits or every
    regular segment has its verify item (or was set aside)."""
    waiting = (
        Item.objects.filter(study=study, role=Item.Role.STIMULUS, propose_link__isnull=False)
        .exclude(pk__in=SessionItem.objects.filter(session__study=study).values("item_id"))
        .count()
    )
    if not waiting:
        return
    open_segments = Item.objects.filter(
        study=study, role=Item.Role.STIMULUS, dimension__key=PROPOSE, verify_link__isnull=True
    ).exists()
    if waiting >= study.session_size or not open_segments:
        made = study_build_sessions(study=study)
        logger.info("study %s: %d verify session(s)", study.slug, len(made))


def verify_queues_sweep() -> int:
    """Fill what a lost task left: every regular propose item with its proposals in and
    no link yet, then each study's waiting verify items into sessions. Returns the
    number of links made."""
    made = 0
    for study in Study.objects.filter(design="propose_verify", state=Study.State.RUNNING):
        counted = Count(
            "answers",
            filter=Q(answers__assignment__isnull=False) & counts_q(study, "answers__assignment__"),
        )
        due = (
            Item.objects.filter(
                study=study,
                role=Item.Role.STIMULUS,
                dimension__key=PROPOSE,
                verify_link__isnull=True,
            )
            .annotate(proposals=counted)
            .filter(proposals__gte=settings_of(study).proposers_per_item)
            .values_list("pk", flat=True)
        )
        for item_id in due:  # each with its proposals in: a link is made under its lock
            made += verify_queue_fill(item_id=item_id) is not None
        _sessions_when_due(study)
    return made
