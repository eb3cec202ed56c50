from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from annotation.services.demo import DEMO_PASSWORD, demo_accounts, demo_study_create


class Command(BaseCommand):
    help = "Create the demo study (synthetic videos, real GAIA prompts) and demo accounts."

    def add_arguments(self, parser):
        parser.add_argument("--stimuli", type=int, default=24)

    def handle(self, *args, stimuli: int, **options):
        accounts = demo_accounts()
        study = demo_study_create(clip_dir=Path(settings.VAR_DIR) / "demo_clips", stimuli=stimuli)
        self.stdout.write(
            self.style.SUCCESS(
                f"demo study '{study.name}' ({study.stimuli.count()} videos, "
                f"{study.sessions.count()} sessions, state {study.state})"
            )
        )
        for role in accounts:
            self.stdout.write(f"  {role:<10} user '{role}', password '{DEMO_PASSWORD}'")
        self.stdout.write(
            f"  marketplace link: /r/{study.slug}/?token={study.entry_token}"
            "&PROLIFIC_PID=demo1&STUDY_ID=demo&SESSION_ID=s1"
        )
        self.stdout.write(
            f"  as a rater, answer {study.qualification_pass_share:.0%} of the "
            f"{study.qualification_size} qualification videos within "
            f"{study.qualification_tolerance_sigma:g} sigma of the experts to go on rating; "
            "their scores are on each video's page in /admin/ (Stimuli)"
        )
