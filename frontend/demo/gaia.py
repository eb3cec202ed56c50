"""The GAIA demo study: real GAIA prompts on synthetic videos, rated on sliders."""

from __future__ import annotations

import csv
import random
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from django.db import transaction

from annotation.models import GAIA_DIMENSIONS, Dimension, Study
from annotation.services.studies import study_build_sessions, study_create
from annotation.services.study_import import study_import_manifest
from frontend.demo.common import needed_share

SLUG = "gaia-demo"
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
            row = {
                "path": path.name,
                "role": "tutorial",
                "prompt": gaia.prompt,
                "action": gaia.action,
                "action_class": gaia.action_class,
                "tutorial_dimension": key,
                "tutorial_pair": f"{label}: an example",
                "tutorial_kind": kind,
                "caption": gaia.prompt,
                "explanation": f"{label}: the real video shows what a convincing rendering "
                f"of '{gaia.action}' looks like; compare the generated one.",
            }
            if kind == "generated":  # what the experts gave it, shown on request
                row[f"{key}_mean"] = f"{rng.uniform(25, 75):.1f}"
                row[f"{key}_sigma"] = f"{rng.uniform(8, 16):.1f}"
            rows.append(row)
    manifest = clip_dir / "manifest.csv"
    columns = sorted({column for row in rows for column in row}, key=lambda c: (c != "path", c))
    with open(manifest, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    return manifest


@transaction.atomic  # a stop midway leaves no half-made demo study to be returned next time
def create_study(*, clip_dir: Path, stimuli: int = 24, seed: int = 7) -> Study:
    """Create (or return) the demo study: small sessions, short breaks, GAIA dimensions.
    Its videos are transcoded once it is stored (in-process: before this returns)."""
    existing = Study.objects.filter(slug=SLUG).first()
    if existing is not None:
        return existing
    clip_dir.mkdir(parents=True, exist_ok=True)
    manifest = _write_demo_manifest(
        clip_dir, counts={"stimulus": stimuli, "golden": 4, "qualification": 6}, seed=seed
    )
    from media_pipeline.services.transcode_jobs import stimuli_enqueue_processing

    study = study_create(
        name="GAIA demo",
        slug=SLUG,
        session_size=12,
        golden_per_session=2,
        rest_every=7,
        rest_seconds=30,
        qualification_size=6,
        payment_per_session="2.00",
        # the demo's `rater` finds it on the home page, no link needed
        open_to_signed_in=True,
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


def simulated_scores(*, truth: dict, rater: dict, expert: dict | None, rng, study) -> dict:
    """A simulated rater's scores of one video: the video's true quality per dimension
    (or the experts' mean for a golden video) plus the rater's bias and noise, on the
    slider's steps."""
    scores = {}
    for key, centre in (expert or truth).items():
        value = centre + rater["bias"] + rng.normal(0, rater["noise"])
        value = min(study.slider_max, max(study.slider_min, value))
        steps = round((value - study.slider_min) / study.slider_step)
        scores[key] = study.slider_min + steps * study.slider_step
    return scores


# The simulated raters: (bias, noise) on the 0-100 slider; the last one clicks a line.
PROFILES = [
    {"bias": 0, "noise": 8},
    {"bias": 6, "noise": 10},
    {"bias": -5, "noise": 9},
    {"bias": 2, "noise": 12},
    {"bias": -3, "noise": 7},
    {"bias": 4, "noise": 11},
    {"bias": 0, "noise": 0, "line": 50.0, "in_test": {"bias": 0, "noise": 8}},
]
MODEL_QUALITY = dict(zip(DEMO_MODELS, (30, 40, 55, 60, 70, 78), strict=True))


def simulate(study: Study, *, profiles=None, first_number: int = 1, seed: int = 1) -> None:
    """Simulated ratings: each video's true quality follows its source model (so the
    results show a model ranking), a rater adds a bias and noise; golden videos are
    rated near the experts' means, so the gate passes; one rater clicks a line.
    `profiles` (default PROFILES) numbered from `first_number` add raters to a demo."""
    from annotation.designs.slider import Scores
    from annotation.models import ExpertScore
    from frontend.demo.simulate import simulate_raters

    keys = list(study.dimensions.order_by("order").values_list("key", flat=True))
    experts: dict[int, dict[str, float]] = {}
    for stimulus_id, key, mean in ExpertScore.objects.filter(stimulus__study=study).values_list(
        "stimulus_id", "dimension__key", "mean"
    ):
        experts.setdefault(stimulus_id, {})[key] = mean

    def values(item, layout, profile, rng):
        video = layout[0]
        if "line" in profile:
            return Scores(dict.fromkeys(keys, profile["line"]))
        centre = MODEL_QUALITY.get(video.source_model, 50) + (video.pk % 7) * 2 - 6
        truth = {key: centre + offset for key, offset in zip(keys, (4, 0, -4), strict=False)}
        return Scores(
            simulated_scores(
                truth=truth, rater=profile, expert=experts.get(video.pk), rng=rng, study=study
            )
        )

    simulate_raters(
        study=study,
        profiles=PROFILES if profiles is None else profiles,
        values=values,
        seed=seed,
        first_number=first_number,
    )


# Adaptive collection sized to the demo (`demo_study --adaptive`, docs/admins.md): the
# group-sequential plan looks at 5, 10 and 20 kept ratings; a video settles at +-15
# (at 10 ratings about half the demo's videos are known so well, at its per-video SD of
# about 10 points).
ADAPTIVE_DEMO = {
    "plan": "group_sequential",
    "looks": "5,10,20",
    "target_half_width": 15.0,
    "min_ratings": 5,
    "max_ratings": 20,
    "fixed_ratings": 20,  # the demo's own fixed design: every video at the cap
}


def adaptive_on(study: Study):
    """Adaptive collection on for the demo: four more simulated raters (numbered on from
    the first seven), so that each video has 10 kept ratings (the plan's second look;
    the line clicker's sessions fail the golden gate and do not count), then a review:
    the videos known to +-15 settle and stop being served, the others stay open for the
    raters who come next, and the monitor has a saving to show; then a new analysis run,
    whose results state each video's interval. Made once: a second call adds no rater and
    settles nothing new. Returns how many videos have settled."""
    from annotation.models import SettledStimulus
    from annotation.services.adaptive import adaptive_configure, adaptive_review
    from frontend.demo.simulate import finished_run

    simulate(study, profiles=PROFILES[:4], first_number=len(PROFILES) + 1, seed=2)
    adaptive_configure(study=study, enabled=True, **ADAPTIVE_DEMO)
    adaptive_review(study=study)
    finished_run(study)
    return SettledStimulus.objects.filter(stimulus__study=study).count()


def how_to_qualify(study: Study) -> str:
    """What a newcomer rating the demo must do to pass its qualification test."""
    return (
        f"rate {needed_share(study, 'videos')} within "
        f"{study.qualification_tolerance_sigma:g} sigma of the experts' scores (on each "
        "video's page in /admin/, Stimuli)"
    )
