"""The side-by-side preference demo study (WYD's design): four synthetic "models" that
differ visibly (a crisp one, a soft one, a grainy one, a blocky one) on the same
contents, compared in pairs; golden and qualification pairs are a clean video against a
heavily blurred copy of itself, made by the media pipeline (media_pipeline.ffmpeg.degrade).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from annotation.models import Study
from frontend.demo.common import (
    MANIFEST_COLUMNS,
    MODELS,
    PATTERNS,
    clip,
    compared_demo_create,
    degraded,
    model_rows,
    needed_share,
    write_manifest,
)

SLUG = "preference-demo"
CONTENTS = 6
GOLDEN_CONTENTS = 3
QUALIFICATION_CONTENTS = 2
# The tutorial's worked examples: a clean video against a degraded copy, and why.
EXAMPLES = (
    ("blur", 6.0, "The other video is blurred: its edges and fine detail are smeared."),
    ("blocks", 12.0, "The other video is blocky: the picture breaks into coarse squares."),
)


def _write_manifest(clip_dir: Path) -> Path:
    from frontend.demo.gaia import gaia_prompts

    prompts = gaia_prompts()
    rows = []
    for content in range(CONTENTS + GOLDEN_CONTENTS + QUALIFICATION_CONTENTS):
        prompt = prompts[content * 37]
        clean = clip(
            clip_dir / f"content{content:02d}.mp4", PATTERNS[content % len(PATTERNS)], prompt.action
        )
        labels = {"prompt": prompt.prompt, "action": prompt.action}
        if content < CONTENTS:
            stem, content_id = f"content{content:02d}", f"c{content:02d}"
            rows += model_rows(clip_dir, clean, stem=stem, content=content_id, labels=labels)
            continue
        role = "golden" if content < CONTENTS + GOLDEN_CONTENTS else "qualification"
        worst = degraded(clean, clip_dir / f"content{content:02d}-worst.mp4", "blur", 9.0)
        for path, expected in ((clean, "best"), (worst, "worst")):
            rows.append(
                {"path": path.name, "role": role, "content": f"g{content:02d}",
                 "expected": expected, **labels}
            )  # fmt: skip
    rows += _example_rows(clip_dir, prompts)
    return write_manifest(clip_dir, rows, columns=[*MANIFEST_COLUMNS, "note"])


def _example_rows(clip_dir: Path, prompts: list) -> list[dict]:
    """The worked examples' rows: each a content's best (with the note on why) and worst
    video, about the study's one question."""
    rows = []
    for index, (kind, strength, note) in enumerate(EXAMPLES):
        prompt = prompts[(CONTENTS + GOLDEN_CONTENTS + QUALIFICATION_CONTENTS + index) * 37]
        pattern = PATTERNS[1 + 2 * index]  # mandelbrot, smptehdbars: the damage shows
        best = clip(clip_dir / f"example{index}.mp4", pattern, prompt.action)
        worst = degraded(best, clip_dir / f"example{index}-worst.mp4", kind, strength)
        labels = {"role": "tutorial", "content": f"e{index}", "prompt": prompt.prompt}
        rows.append({"path": best.name, "expected": "best", "note": note, **labels})
        rows.append({"path": worst.name, "expected": "worst", **labels})
    return rows


def create_study(*, clip_dir: Path, stimuli: int = 24) -> Study:
    """Create (or return) the preference demo: 4 models x 6 contents (6 pairs each), 3
    golden and 2 qualification pairs, 2 worked examples, sessions of 3 judgments of every
    pair."""
    from annotation.designs.preference import settings_of

    def configure(study: Study) -> None:
        preference = settings_of(study)
        preference.judgments_per_pair = 3
        preference.bootstrap = 300
        preference.save()

    return compared_demo_create(
        slug=SLUG,
        name="Side-by-side preference demo",
        design="preference",
        instructions=(
            "Each task shows two short videos of the same scene made by two different "
            "video generators. Watch both to the end, then choose the one of higher "
            "quality, or “Equally good/bad”."
        ),
        clip_dir=clip_dir,
        manifest=_write_manifest,
        configure=configure,
    )


# The simulated raters: how often they say "equal", how much they favour the left side.
PROFILES = [
    {"ties": 0.15, "left": 0.0},
    {"ties": 0.25, "left": 0.0},
    {"ties": 0.10, "left": 0.05},
    {"ties": 0.20, "left": -0.05},
    {"ties": 0.15, "left": 0.0},
    # always "left" once past the test: screened out for position bias
    {"ties": 0.0, "left": 1.0, "in_test": {"ties": 0.15, "left": 0.0}},
]


def simulate(study: Study) -> None:
    """Judgments from Bradley-Terry preferences with the models' true strengths (ties
    drawn aside); golden pairs judged right; the last simulated rater always says left."""
    from annotation.designs.preference import Choice
    from frontend.demo.simulate import simulate_raters

    def values(item, layout, profile, rng: np.random.Generator):
        left, right = layout[0], layout[1]
        if profile["left"] >= 1.0:
            return Choice("left")
        expected = {m.stimulus_id: m.expected for m in item.members.all() if m.expected}
        if expected:
            return Choice("left" if expected.get(left.pk) == "best" else "right")
        if rng.random() < profile["ties"]:
            return Choice("equal")
        a, b = MODELS[left.condition][1], MODELS[right.condition][1]
        p_left = 1 / (1 + np.exp(b - a)) + profile["left"]
        return Choice("left" if rng.random() < p_left else "right")

    simulate_raters(study=study, profiles=PROFILES, values=values, seed=2)


def how_to_qualify(study: Study) -> str:
    """What a newcomer rating the demo must do to pass its qualification test."""
    return (
        f"pick the sharper video of each test pair ({needed_share(study, 'pairs')} must be right)"
    )
