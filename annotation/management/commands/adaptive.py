"""`manage.py adaptive SLUG --on|--off [--width 8.6] [--min 15] [--cap 80] [--fixed 35]
[--plan two_stage|group_sequential|anytime] [--looks 10,20,35] [--alpha 0.05]`: switch
a single-stimulus study's adaptive collection on or off and set its numbers
(docs/admins.md, "Adaptive collection"); without --on or --off it shows the settings and
the monitor's figures."""

from django.core.management.base import BaseCommand, CommandError

from annotation.errors import ValidationFailed
from annotation.management.study_argument import study_named
from annotation.models import AdaptiveSettings
from annotation.models.adaptive import ADAPTIVE_DESIGN
from annotation.services.adaptive import adaptive_configure
from annotation.services.adaptive_summary import adaptive_summary


class Command(BaseCommand):
    help = "Switch adaptive collection of a single-stimulus study on or off, and set it."

    def add_arguments(self, parser):
        parser.add_argument("study", help="slug of the study")
        switch = parser.add_mutually_exclusive_group()
        switch.add_argument("--on", action="store_true", help="serve only open videos")
        switch.add_argument("--off", action="store_true", help="serve every video again")
        parser.add_argument("--width", type=float, help="target half-width, in scale points")
        parser.add_argument("--min", type=int, dest="min_ratings", help="ratings before a stop")
        parser.add_argument("--cap", type=int, dest="max_ratings", help="ratings at most")
        parser.add_argument(
            "--fixed", type=int, dest="fixed_ratings", help="the fixed design's ratings per video"
        )
        parser.add_argument("--plan", choices=AdaptiveSettings.Plan.values)
        parser.add_argument("--looks", help="group-sequential looks, e.g. 10,20,35")
        parser.add_argument("--alpha", type=float, help="error rate of each interval")

    def handle(self, *args, study: str, on: bool, off: bool, **options):
        found = study_named(
            study,
            design=ADAPTIVE_DESIGN,
            serves="adaptive collection is for single-stimulus slider studies",
        )
        changes = {
            "enabled": True if on else (False if off else None),
            "target_half_width": options["width"],
            "min_ratings": options["min_ratings"],
            "max_ratings": options["max_ratings"],
            "fixed_ratings": options["fixed_ratings"],
            "plan": options["plan"],
            "looks": options["looks"],
            "alpha": options["alpha"],
        }
        try:
            settings = adaptive_configure(study=found, **changes)
        except ValidationFailed as error:
            raise CommandError(error.message) from error
        state = "on" if settings.enabled else "off"
        looks = f", looks {settings.looks}" if settings.plan == "group_sequential" else ""
        self.stdout.write(
            f"{found.slug}: adaptive collection {state} (plan {settings.plan}{looks}, "
            f"target +-{settings.target_half_width:g}, min {settings.min_ratings}, "
            f"cap {settings.max_ratings}, alpha {settings.alpha:g})"
        )
        summary = adaptive_summary(study=found)
        if summary is not None:
            self.stdout.write(
                f"  {summary['videos_settled']} of {summary['videos']} videos settled; "
                f"{summary['sentence']}"
            )
            self.stdout.write(f"  sessions: {summary['sessions_note']}")
