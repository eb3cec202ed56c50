"""The demo study: real GAIA prompts on synthetic videos, ready to rate in minutes."""

from __future__ import annotations

import csv
import random
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from django.contrib.auth.models import Group, User
from django.db import transaction

from annotation.models import GAIA_DIMENSIONS, Dimension, Rater, Study
from annotation.services.studies import study_build_sessions, study_create
from annotation.services.study_import import study_import_manifest

DEMO_SLUG = "gaia-demo"
DEMO_PASSWORD = "mosaic-demo"
# (width, height, fps): GAIA's range of shapes, odd sizes included, kept tiny.
DEMO_SHAPES = [
    (256, 256, 8),
    (320, 240, 24),
    (257, 255, 12),
    (480, 272, 50),
    (384, 216, 4),
    (352, 288, 30),
    (288, 512, 16),
    (400, 300, 25),
]
DEMO_MODELS = ["ModelScope", "ZeroScope", "VideoCrafter2", "Show-1", "Gen-2", "Pika"]


@dataclass(frozen=True)
class GaiaPrompt:
    action: str
    prompt: str
    action_class: str
    action_subclass: str


def gaia_prompts() -> list[GaiaPrompt]:
    """The 510 GAIA prompts with their action classes (annotation/data/gaia, Apache-2.0)."""
    data = resources.files("annotation") / "data" / "gaia"
    classes = {}
    with (data / "action_classes.csv").open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            classes[row["action"]] = (row["action_class"], row["action_subclass"])
    prompts = []
    with (data / "prompts_all.csv").open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle, delimiter=";"):
            action = row["Action"].strip()
            action_class, subclass = classes.get(action.lower(), ("unknown", ""))
            prompts.append(GaiaPrompt(action, row["Scene"].strip(), action_class, subclass))
    return prompts


def _write_demo_manifest(clip_dir: Path, *, counts: dict[str, int], seed: int) -> Path:
    from media_pipeline.ffmpeg.synth import make_clip

    rng = random.Random(seed)
    prompts = rng.sample(gaia_prompts(), k=sum(counts.values()) + 6)
    keys = [key for key, *_ in GAIA_DIMENSIONS]
    rows = []
    index = 0
    for role, count in counts.items():
        for _ in range(count):
            gaia = prompts[index]
            width, height, fps = DEMO_SHAPES[index % len(DEMO_SHAPES)]
            path = clip_dir / f"{role}_{index:03d}.mp4"
            if not path.exists():
                make_clip(
                    path=path, width=width, height=height, fps=fps, seconds=2.0, text=gaia.action
                )
            row = {
                "path": path.name,
                "role": role,
                "prompt": gaia.prompt,
                "action": gaia.action,
                "action_class": gaia.action_class,
                "action_subclass": gaia.action_subclass,
                "source_model": "real" if role == "golden" else DEMO_MODELS[index % 6],
            }
            if role in ("golden", "qualification"):
                for key in keys:
                    row[f"{key}_mean"] = f"{rng.uniform(15, 90):.1f}"
                    row[f"{key}_sigma"] = f"{rng.uniform(8, 16):.1f}"
            rows.append(row)
            index += 1
    for pair, (key, label, _) in enumerate(GAIA_DIMENSIONS):
        gaia = prompts[index + pair]
        for kind, pattern in (("generated", "smptebars"), ("real", "testsrc2")):
            path = clip_dir / f"tutorial_{key}_{kind}.mp4"
            if not path.exists():
                make_clip(
                    path=path,
                    width=320,
                    height=240,
                    fps=24,
                    seconds=2.0,
                    text=f"{gaia.action} ({kind})",
                    pattern=pattern,
                )
            rows.append(
                {
                    "path": path.name,
                    "role": "tutorial",
                    "prompt": gaia.prompt,
                    "action": gaia.action,
                    "action_class": gaia.action_class,
                    "tutorial_dimension": key,
                    "tutorial_pair": f"{key}-1",
                    "tutorial_kind": kind,
                    "caption": gaia.prompt,
                    "explanation": f"{label}: the real video shows what a convincing rendering "
                    f"of '{gaia.action}' looks like; compare the generated one.",
                }
            )
    manifest = clip_dir / "manifest.csv"
    columns = sorted({column for row in rows for column in row}, key=lambda c: (c != "path", c))
    with open(manifest, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    return manifest


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


@transaction.atomic  # a stop midway leaves no half-made demo study to be returned next time
def demo_study_create(*, clip_dir: Path, stimuli: int = 24, seed: int = 7) -> Study:
    """Create (or return) the demo study: small sessions, short breaks, GAIA dimensions.
    Its videos are transcoded once it is stored (in-process: before this returns)."""
    existing = Study.objects.filter(slug=DEMO_SLUG).first()
    if existing is not None:
        return existing
    clip_dir.mkdir(parents=True, exist_ok=True)
    manifest = _write_demo_manifest(
        clip_dir, counts={"stimulus": stimuli, "golden": 4, "qualification": 6}, seed=seed
    )
    from media_pipeline.services.transcode_jobs import stimuli_enqueue_processing

    study = study_create(
        name="GAIA demo",
        slug=DEMO_SLUG,
        session_size=12,
        golden_per_session=2,
        rest_every=7,
        rest_seconds=30,
        qualification_size=6,
        payment_per_session="2.00",
        instructions=(
            "You will watch short AI-generated videos of people doing an action. For each, "
            "rate three things in order: how well the subject is rendered, whether the action "
            "is complete, and whether the scene reacts plausibly. Use the whole scale."
        ),
        consent_text=(
            "Your ratings are stored under a pseudonymous id and used for research on video "
            "quality. You may stop at any time."
        ),
    )
    assert Dimension.objects.filter(study=study).count() == 3
    study_import_manifest(study=study, manifest=manifest, on_commit=stimuli_enqueue_processing)
    study_build_sessions(study=study)
    Study.objects.filter(pk=study.pk).update(state=Study.State.RUNNING)
    study.refresh_from_db()
    return study
