"""`manage.py demo_study`: the demo accounts and every design's demo study (frontend/demo),
with simulated answers and a finished analysis run; a second call changes nothing."""

from django.conf import settings
from django.core.management.base import BaseCommand

from annotation.designs import design_of
from frontend.demo import DEMO_PASSWORD, DEMOS, demo_accounts, demo_studies_create, gaia


class Command(BaseCommand):
    help = "Create the demo studies (one per design, synthetic videos) and demo accounts."

    def add_arguments(self, parser):
        parser.add_argument("--stimuli", type=int, default=24, help="videos of the GAIA demo")
        parser.add_argument(
            "--adaptive",
            action="store_true",
            help="adaptive collection on for the GAIA demo (docs/admins.md)",
        )

    def handle(self, *args, stimuli: int, adaptive: bool = False, **options):
        accounts = demo_accounts()
        demos = {demo.SLUG: demo for demo in DEMOS}
        for study in demo_studies_create(var_dir=settings.VAR_DIR, stimuli=stimuli):
            if adaptive and study.slug == gaia.SLUG:
                settled = gaia.adaptive_on(study)
                self.stdout.write(
                    f"adaptive collection on for '{study.name}': {settled} videos settled "
                    f"(python manage.py adaptive {study.slug} --off switches it off)"
                )
            self.stdout.write(
                self.style.SUCCESS(
                    f"demo study '{study.name}' ({design_of(study).label}: "
                    f"{study.stimuli.count()} videos, {_sessions(study.sessions.count())}, "
                    f"state {study.state}, simulated answers and an analysis run)"
                )
            )
            self.stdout.write(
                f"  rater link: /r/{study.slug}/?token={study.entry_token}"
                "&PROLIFIC_PID=demo1&STUDY_ID=demo&SESSION_ID=s1"
            )
            self.stdout.write(f"  to qualify: {demos[study.slug].how_to_qualify(study)}")
            self.stdout.write(
                f"  monitor: /studies/{study.slug}/monitor/   "
                f"results: /studies/{study.slug}/results/"
            )
        for role in accounts:
            self.stdout.write(f"  {role:<10} user '{role}', password '{DEMO_PASSWORD}'")


def _sessions(count: int) -> str:
    return f"{count} session" if count == 1 else f"{count} sessions"
