"""The ranking demo study (VGA-Bench's user study design): four synthetic "models" that
differ visibly (crisp, soft, grainy, blocky) on the same prompts, each prompt's four
videos ordered from best to worst for VGA-Bench's two criteria; golden and qualification
items are a clean video, a grainy and a blocky copy, and a heavily blurred copy of one
source (four, as many as a regular item, so that nothing tells them apart), made by
the media pipeline (media_pipeline.ffmpeg.degrade). The GPU workers' weight-free metrics
score every video, so the finished run compares the people's consensus with the ranking
of the sharpness metric (Recall@K)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from annotation.designs.ranking import VGA_CRITERIA
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

SLUG = "ranking-demo"
PROMPTS = 5
GOLDEN_PROMPTS = 2
QUALIFICATION_PROMPTS = 2


def _write_manifest(clip_dir: Path) -> Path:
    from frontend.demo.gaia import gaia_prompts

    prompts = gaia_prompts()
    rows = []
    for content in range(PROMPTS + GOLDEN_PROMPTS + QUALIFICATION_PROMPTS):
        prompt = prompts[content * 41 + 7]
        pattern = PATTERNS[(content + 2) % len(PATTERNS)]
        clean = clip(clip_dir / f"prompt{content:02d}.mp4", pattern, prompt.action)
        labels = {"prompt": prompt.prompt, "action": prompt.action}
        if content < PROMPTS:
            stem, content_id = f"prompt{content:02d}", f"p{content:02d}"
            rows += model_rows(clip_dir, clean, stem=stem, content=content_id, labels=labels)
            continue
        role = "golden" if content < PROMPTS + GOLDEN_PROMPTS else "qualification"
        # as many videos as a regular item (one per model), or raters could tell it
        grainy = degraded(clean, clip_dir / f"prompt{content:02d}-grainy.mp4", "noise", 30.0)
        blocky = degraded(clean, clip_dir / f"prompt{content:02d}-blocky.mp4", "blocks", 6.0)
        worst = degraded(clean, clip_dir / f"prompt{content:02d}-worst.mp4", "blur", 9.0)
        for path, expected in ((clean, "best"), (grainy, ""), (blocky, ""), (worst, "worst")):
            rows.append(
                {"path": path.name, "role": role, "content": f"g{content:02d}",
                 "expected": expected, **labels}
            )  # fmt: skip
    rows += _example_rows(clip_dir, prompts)
    return write_manifest(clip_dir, rows, columns=[*MANIFEST_COLUMNS, "tutorial_dimension", "note"])


def _example_rows(clip_dir: Path, prompts: list) -> list[dict]:
    """The worked example's rows: a clean video, a grainy and a blocky copy in between,
    and a blurred one, ordered by the experts for the first criterion, and why."""
    prompt = prompts[(PROMPTS + GOLDEN_PROMPTS + QUALIFICATION_PROMPTS) * 41 + 7]
    best = clip(clip_dir / "example.mp4", "mandelbrot", prompt.action)
    videos = (
        (best, "best"),
        (degraded(best, clip_dir / "example-grainy.mp4", "noise", 30.0), ""),
        (degraded(best, clip_dir / "example-blocky.mp4", "blocks", 6.0), ""),
        (degraded(best, clip_dir / "example-worst.mp4", "blur", 9.0), "worst"),
    )
    note = (
        "The sharp video is best and the blurred one worst; grain and blocks spoil the "
        "other two less than blur, which hides every detail."
    )
    rows = []
    for path, expected in videos:
        row = {"path": path.name, "role": "tutorial", "content": "e0", "expected": expected,
               "prompt": prompt.prompt}  # fmt: skip
        if expected == "best":
            row |= {"tutorial_dimension": VGA_CRITERIA[0][0], "note": note}
        rows.append(row)
    return rows


def create_study(*, clip_dir: Path, stimuli: int = 24) -> Study:
    """Create (or return) the ranking demo: 4 models x 5 prompts x 2 criteria, 2 golden
    and 2 qualification prompts, a worked example."""
    from annotation.designs.ranking import settings_of

    def configure(study: Study) -> None:
        ranking = settings_of(study)
        ranking.bootstrap = 200
        ranking.against_metric = "sharpness"  # the crisp model's videos are the sharpest
        ranking.save()

    return compared_demo_create(
        slug=SLUG,
        name="Ranking demo",
        design="ranking",
        instructions=(
            "Each task shows the videos that four video generators made for one prompt. "
            "Play every video (two can play side by side), then order them from best to "
            "worst for the question asked."
        ),
        clip_dir=clip_dir,
        manifest=_write_manifest,
        configure=configure,
    )


# The simulated raters: how noisy their view of the models' true strengths is; the last
# orders at random (screened out by the random-ranker rule).
PROFILES = [
    {"noise": 0.3},
    {"noise": 0.5},
    {"noise": 0.4},
    {"noise": 0.6},
    {"noise": None, "in_test": {"noise": 0.3}},
]


def simulate(study: Study) -> None:
    """Rankings by the models' true strengths plus Gumbel noise (a Plackett-Luce draw);
    golden items ordered as expected; the last simulated rater orders at random."""
    from annotation.designs.ranking import Ranking
    from frontend.demo.simulate import simulate_raters

    def values(item, layout, profile, rng: np.random.Generator):
        ids = [str(video.public_id) for video in layout]
        expected = {m.stimulus_id: m.expected for m in item.members.all()}
        if any(expected.values()) and profile["noise"] is not None:
            place = {"best": 0, "": 1, "worst": 2}
            order = sorted(layout, key=lambda v: place[expected.get(v.pk, "")])
            return Ranking(tuple((str(v.public_id),) for v in order), tuple(sorted(ids)))
        if profile["noise"] is None:
            order = list(rng.permutation(len(layout)))
        else:
            strength = np.array([MODELS[v.condition][1] if v.condition else 0 for v in layout])
            utility = strength + rng.gumbel(scale=profile["noise"], size=len(layout))
            order = list(np.argsort(-utility))
        return Ranking(tuple((ids[i],) for i in order), tuple(sorted(ids)))

    simulate_raters(study=study, profiles=PROFILES, values=values, seed=3)


def how_to_qualify(study: Study) -> str:
    """What a newcomer rating the demo must do to pass its qualification test."""
    return (
        "put the sharp video first and the blurred one last "
        f"({needed_share(study, 'orders')} must be right)"
    )
