"""Paying raters (annotation.services.payouts and the payments' admin): approved session
payments become the marketplace's bulk bonus lines once, one line per participant."""

from decimal import Decimal

import pytest
from django.test import Client

from annotation.errors import ValidationFailed
from annotation.models import Assignment, Payment, Rater, Session
from annotation.services.payouts import payments_pay_out
from tests.annotation.rater_fixtures import tiny_study
from tests.annotation.test_questionnaire_design import run_at_once
from tests.factories import RaterFactory, UserFactory

pytestmark = pytest.mark.django_db


def paid_for(rater: Rater, session: Session, status: str, amount="12.00", currency="USD"):
    assignment = Assignment.objects.create(
        rater=rater, session=session, order_seed=1, state=Assignment.State.FINISHED
    )
    return Payment.objects.create(
        assignment=assignment, amount=Decimal(amount), currency=currency, status=status
    )


@pytest.fixture
def payments():
    """Rater PA: two approved sessions; PB: one approved (5.50), one pending, one
    rejected; a signed-in rater without a marketplace id and a demo's simulated rater:
    one approved each."""
    study = tiny_study(stimuli=18, session_size=6).study
    first, second, third = Session.objects.filter(study=study).order_by("index")[:3]
    a = RaterFactory(external_id="PA")
    b = RaterFactory(external_id="PB")
    account = RaterFactory(external_id=None)
    simulated = RaterFactory(external_id="SIM-demo-01", is_simulated=True)
    return {
        "simulated": paid_for(simulated, first, "approved"),
        "a1": paid_for(a, first, "approved"),
        "a2": paid_for(a, second, "approved"),
        "b1": paid_for(b, first, "approved", amount="5.50"),
        "b2": paid_for(b, second, "pending"),
        "b3": paid_for(b, third, "rejected"),
        "account": paid_for(account, first, "approved"),
    }


def test_approved_payments_are_paid_out_once_one_line_per_participant(payments):
    admin = UserFactory(is_staff=True)
    # when
    payout = payments_pay_out(payment_ids=[p.pk for p in payments.values()], by=admin)
    # then
    assert payout.lines == [("PA", Decimal("24.00")), ("PB", Decimal("5.50"))]
    assert payout.bonus_lines() == "PA,24.00\nPB,5.50\n"
    assert (payout.currency, payout.payments, payout.without_participant_id) == ("USD", 3, 2)
    paid = set(Payment.objects.exclude(paid_out_at=None).values_list("pk", flat=True))
    assert paid == {payments[k].pk for k in ("a1", "a2", "b1")}
    assert {p.paid_out_at for p in Payment.objects.filter(pk__in=paid)} == {payout.paid_at}
    # and a second pay-out pays nobody again
    again = payments_pay_out(payment_ids=[p.pk for p in payments.values()], by=admin)
    assert (again.lines, again.payments, again.without_participant_id) == ([], 0, 2)


@pytest.mark.parametrize("mixed", ["study", "currency"])
def test_a_pay_out_across_studies_or_currencies_is_refused_whole(payments, mixed):
    # given: one more approved payment, of another study or in another currency
    other_study = tiny_study().study
    session = Session.objects.filter(
        study=other_study if mixed == "study" else payments["a1"].assignment.session.study
    ).order_by("-index")[0]
    odd = paid_for(
        RaterFactory(external_id="PC"),
        session,
        "approved",
        currency="USD" if mixed == "study" else "GBP",
    )
    ids = [p.pk for p in payments.values()] + [odd.pk]
    # when / then
    with pytest.raises(
        ValidationFailed, match=f"several {'studies' if mixed == 'study' else 'currencies'}"
    ):
        payments_pay_out(payment_ids=ids, by=UserFactory(is_staff=True))
    assert not Payment.objects.exclude(paid_out_at=None).exists()


@pytest.mark.django_db(transaction=True)
def test_two_admins_paying_out_at_once_pay_each_payment_once(payments):
    ids = [p.pk for p in payments.values()]
    first, second = (UserFactory(is_staff=True) for _ in range(2))
    # when
    payouts = run_at_once(
        lambda: payments_pay_out(payment_ids=ids, by=first),
        lambda: payments_pay_out(payment_ids=ids, by=second),
    )
    # then: one pays all three, the other none
    assert not [p for p in payouts if isinstance(p, Exception)]
    assert sorted(p.payments for p in payouts) == [0, 3]
    lines = [line for p in payouts for line in p.lines]
    assert lines == [("PA", Decimal("24.00")), ("PB", Decimal("5.50"))]


# --- the payments' admin --------------------------------------------------------------------


@pytest.fixture
def superuser():
    client = Client()
    client.force_login(UserFactory(is_staff=True, is_superuser=True, username="treasurer"))
    return client


def act(client, action: str, payments: list[Payment], **extra):
    data = {"action": action, "_selected_action": [p.pk for p in payments]}
    return client.post("/admin/annotation/payment/", data, **extra)


@pytest.mark.parametrize(("action", "status"), [("approve", "approved"), ("reject", "rejected")])
def test_the_admin_decides_the_pending_ones_and_leaves_the_decided(
    payments, superuser, action, status
):
    # when: a pending payment and two decided ones (one rejected, one approved)
    chosen = [payments["b2"], payments["b3"], payments["a1"]]
    response = act(superuser, action, chosen, follow=True)
    # then
    assert f"1 payment(s) {status}; 2 were decided already and are left as they are." in (
        response.content.decode()
    )
    b2, b3, a1 = (Payment.objects.get(pk=payments[k].pk) for k in ("b2", "b3", "a1"))
    assert (b2.status, b3.status, a1.status) == (status, "rejected", "approved")
    assert b2.decided_at is not None and b3.decided_at is None


def test_the_admin_pays_out_as_a_file_of_bonus_lines_once(payments, superuser):
    chosen = list(payments.values())
    # when
    response = act(superuser, "pay_out", chosen)
    # then: the file, named for the study, the currency and the moment
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    slug = payments["a1"].assignment.session.study.slug
    assert response["Content-Disposition"].startswith(f'attachment; filename="bonus-{slug}-USD-')
    assert response.content.decode() == "PA,24.00\nPB,5.50\n"
    page = superuser.get("/admin/annotation/payment/").content.decode()
    assert f"Paid out 3 payment(s) of {slug} to 2 participant(s), 29.50 USD in all" in page
    assert (
        "2 approved payment(s) of raters without a marketplace id (or simulated) were left out"
        in page
    )
    # and a second time, nothing
    again = act(superuser, "pay_out", chosen, follow=True)
    assert "Nothing to pay out: no approved payment among those chosen" in again.content.decode()


def test_the_payment_form_shows_the_decision_but_does_not_change_it(payments, superuser):
    page = superuser.get(f"/admin/annotation/payment/{payments['b2'].pk}/change/")
    body = page.content.decode()
    assert page.status_code == 200
    assert 'name="status"' not in body and "Pending approval" in body
