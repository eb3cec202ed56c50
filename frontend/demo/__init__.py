"""The demo studies `scripts/start` creates: one per study design, each with synthetic
videos, clearly labelled simulated raters' answers and a finished analysis run, so a
newcomer finds the rater, monitor and results pages full at once. Each design's demo is
a module here with `SLUG`, `create_study(clip_dir=..., ...)`, `simulate(study)` and
`how_to_qualify(study)` (what `demo_study` prints for a newcomer who rates it)."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth.models import Group, User
from django.db import transaction

from annotation.models import Rater, Study
from frontend.demo import gaia, preference, propose_verify, questionnaire, ranking
from frontend.demo.gaia import gaia_prompts
from frontend.demo.simulate import finished_run

DEMO_PASSWORD = "mosaic-demo"
DEMOS = (gaia, preference, ranking, questionnaire, propose_verify)


def _demo_user(username: str, **flags) -> User:
    user, created = User.objects.get_or_create(username=username, defaults=flags)
    if created:
        user.set_password(DEMO_PASSWORD)
        user.save()
    return user


@transaction.atomic
def demo_accounts() -> dict[str, User]:
    admin = _demo_user("admin", is_staff=True, is_superuser=True)
    researcher = _demo_user("researcher")
    researcher.groups.add(Group.objects.get_or_create(name="researchers")[0])
    rater_user = _demo_user("rater")
    Rater.objects.get_or_create(user=rater_user)
    return {"admin": admin, "researcher": researcher, "rater": rater_user}


def demo_studies_create(*, var_dir: Path, stimuli: int = 24) -> list[Study]:
    """Every design's demo study (made once; a later call returns them as they are),
    with its simulated answers and, when it has none yet, a finished analysis run."""
    studies = []
    for demo in DEMOS:
        study = demo.create_study(
            clip_dir=Path(var_dir) / "demo_clips" / demo.SLUG, stimuli=stimuli
        )
        demo.simulate(study)
        if not study.analysis_runs.filter(status="done").exists():
            finished_run(study)
        studies.append(study)
    return studies


__all__ = ["DEMO_PASSWORD", "DEMOS", "demo_accounts", "demo_studies_create", "gaia_prompts"]
