"""Paying raters: the approved session payments of a study, once, as the marketplace's
bulk bonus lines.

A session a rater finishes gets a pending payment (session_answers); an admin approves
or rejects it (admin_actions.payment_decide; a questionnaire batch's audit decides it
too). A marketplace pays the participant for taking part; MOSaic's per-session payments
are paid on top of that, through its bonus: Prolific's "Bulk bonus payment" takes one
line per participant, ``<participant id>,<amount>``, in the study's currency. Paying out
turns the approved payments not yet paid out into those lines, one per participant
(their payments summed), and marks each with ``paid_out_at`` in the same transaction,
under a lock: a payment is in one file only, however often or by however many admins
this is asked. Raters who came without a marketplace id (signed-in accounts) are left
out and counted: pay them another way (a demo's simulated raters likewise).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from annotation.errors import ValidationFailed
from annotation.models import Payment

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Payout:
    """What one pay-out paid: ``lines`` (participant id, amount) sorted by id, their
    currency, how many payments they sum, and the payments left out for want of a
    participant id."""

    lines: list[tuple[str, Decimal]]
    currency: str
    payments: int
    without_participant_id: int = 0
    study: str = ""
    paid_at: datetime | None = None

    def bonus_lines(self) -> str:
        """Prolific's bulk bonus text: ``id,amount`` per line, two decimals."""
        return "".join(f"{pid},{amount:.2f}\n" for pid, amount in self.lines)


@transaction.atomic
def payments_pay_out(*, payment_ids, by) -> Payout:
    """Pay out the approved, not yet paid out payments among ``payment_ids`` (see the
    module docstring). They must be of one study and one currency (a bonus file is
    paid in one marketplace study): otherwise nothing is paid out and ValidationFailed
    says why. A payment already paid out, pending or rejected is passed over."""
    payments = list(
        Payment.objects.select_for_update(of=("self",))
        .filter(pk__in=list(payment_ids), status=Payment.Status.APPROVED, paid_out_at=None)
        .select_related("assignment__rater", "assignment__session__study")
        .order_by("pk")
    )
    studies = sorted({p.assignment.session.study.slug for p in payments})
    currencies = sorted({p.currency for p in payments})
    if len(studies) > 1:
        raise ValidationFailed(
            f"the payments are of several studies ({', '.join(studies)}): a bonus file "
            "is paid in one study, so pay each study's out on its own"
        )
    if len(currencies) > 1:
        raise ValidationFailed(
            f"the payments are in several currencies ({', '.join(currencies)}): pay each "
            "currency out on its own"
        )
    totals: dict[str, Decimal] = defaultdict(Decimal)
    paid, without_id = [], 0
    for payment in payments:
        rater = payment.assignment.rater
        if not rater.external_id or rater.is_simulated:  # a demo's made-up id pays nobody
            without_id += 1
            continue
        participant = rater.external_id
        totals[participant] += payment.amount
        paid.append(payment.pk)
    now = timezone.now()
    Payment.objects.filter(pk__in=paid).update(paid_out_at=now)
    payout = Payout(
        lines=sorted(totals.items()),
        currency=currencies[0] if currencies else "",
        payments=len(paid),
        without_participant_id=without_id,
        study=studies[0] if studies else "",
        paid_at=now,
    )
    logger.info(
        "user %s paid out %d payment(s) of study %s to %d participant(s), %s %s in all",
        by.pk,
        payout.payments,
        payout.study or "-",
        len(payout.lines),
        sum((amount for _, amount in payout.lines), Decimal(0)),
        payout.currency,
    )
    return payout
