"""`manage.py erase_rater PARTICIPANT_ID [--withdraw]`: a participant's request to erase
their personal data (annotation.services.erasure): what identifies them goes, their
answers stay, anonymous; with --withdraw, their answers also leave every result."""

from django.core.management.base import BaseCommand, CommandError
from django.db.models import Q

from annotation.models import Rater
from annotation.services.erasure import rater_erase


class Command(BaseCommand):
    help = "Erase a participant's personal data (their answers stay, anonymous)."

    def add_arguments(self, parser):
        parser.add_argument(
            "participant",
            help="the marketplace's participant id (PROLIFIC_PID), or the account's user "
            "name, or the rater's pseudonym as the exports show it (R00042)",
        )
        parser.add_argument(
            "--withdraw",
            action="store_true",
            help="also withdraw them from every study: their answers leave every result",
        )

    def handle(self, *args, participant: str, withdraw: bool, **options):
        rater = _rater_named(participant)
        already = rater.erased_at is not None
        rater = rater_erase(rater=rater, withdraw=withdraw)
        done = "was erased already" if already else "erased"
        also = "; withdrawn from every study" if withdraw else ""
        self.stdout.write(f"{rater.pseudonym}: personal data {done}{also}")


def _rater_named(name: str) -> Rater:
    found = Rater.objects.filter(Q(external_id=name) | Q(user__username=name))
    if name[:1] == "R" and name[1:].isascii() and name[1:].isdigit():  # not "R²"
        found = found | Rater.objects.filter(pk=int(name[1:]))
    raters = list(found.distinct()[:2])
    if len(raters) != 1:
        raise CommandError(
            f"no rater is named {name!r}" if not raters else f"{name!r} names several raters"
        )
    return raters[0]
