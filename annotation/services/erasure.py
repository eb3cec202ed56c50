"""A participant asks for their personal data to be erased: what identifies the person
goes, what they answered stays, anonymous.

MOSaic keeps little that identifies a rater: the marketplace's participant id (and the
user name made of it), the marketplace's study and session ids of each participation,
the browser's user agent of the viewing check, and an account's name and e-mail. Erasing
replaces or empties each of them, makes the account unable to sign in (its API tokens
deleted), and marks the rater ``erased_at``. Their answers, sessions, payments and
exclusions stay under the rater's pseudonym (``R00042``): every export and analysis
already shows only that, so the study's numbers do not change, and none of it can be
traced back to the person any more. A participant who also wants their answers left out
withdraws (``withdraw``: from every study they take part in, as annotation.services.
withdrawal does). A repeat changes nothing more.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.utils import timezone
from rest_framework.authtoken.models import Token

from annotation.models import Participation, Rater
from annotation.services.withdrawal import participation_withdraw

logger = logging.getLogger(__name__)


@transaction.atomic
def rater_erase(*, rater: Rater, withdraw: bool = False) -> Rater:
    """Erase the rater's identifying data (see the module docstring); with ``withdraw``,
    also withdraw them from every study they have not withdrawn from."""
    rater = Rater.objects.select_for_update().select_related("user").get(pk=rater.pk)
    if withdraw:
        for participation in Participation.objects.filter(rater=rater, withdrawn_at=None):
            participation_withdraw(participation=participation, data={"withdraw": True})
    if rater.erased_at is not None:
        return rater
    user = rater.user
    user.username = f"erased-{rater.pk}"
    user.first_name = user.last_name = user.email = ""
    user.is_active = False
    user.set_unusable_password()
    user.save(
        update_fields=["username", "first_name", "last_name", "email", "is_active", "password"]
    )
    Token.objects.filter(user=user).delete()
    for participation in Participation.objects.filter(rater=rater):
        participation.marketplace_study_id = participation.marketplace_session_id = ""
        participation.viewing_check = {
            k: v for k, v in participation.viewing_check.items() if k != "user_agent"
        }
        participation.save(
            update_fields=["marketplace_study_id", "marketplace_session_id", "viewing_check"]
        )
    rater.external_id = None
    rater.erased_at = timezone.now()
    rater.save(update_fields=["external_id", "erased_at"])
    logger.info("rater %s: personal data erased (withdrawn too: %s)", rater.pseudonym, withdraw)
    return rater
