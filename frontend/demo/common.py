"""How the demos of the designs that compare videos (preference, ranking) are made: four
synthetic "models" that differ visibly on the same contents, golden videos made from
degraded copies (media_pipeline.ffmpeg.degrade), and a running study whose videos a
manifest names, with small sessions and a short rest."""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path

from django.db import transaction

from annotation.models import Study

# condition -> (how its videos are made from the clean source, its true strength). The
# strengths are far enough apart that the demo's few judgments (about 30 a pair) find
# their order in all but about 1 in 4,000 draws (0.92 with gaps of 0.6).
MODELS = {
    "Crisp": (None, 2.0),
    "Soft": (("blur", 2.0), 0.7),
    "Grainy": (("noise", 30.0), -0.6),
    "Blocky": (("blocks", 6.0), -1.9),
}
PATTERNS = ("testsrc2", "mandelbrot", "life", "smptehdbars", "rgbtestsrc", "cellauto")
MANIFEST_COLUMNS = ["path", "role", "condition", "content", "expected", "prompt", "action"]


def clip(path: Path, pattern: str, text: str) -> Path:
    from media_pipeline.ffmpeg.synth import make_clip

    if not path.exists():
        make_clip(path=path, width=320, height=240, fps=12, seconds=2.0, text=text, pattern=pattern)
    return path


def degraded(source: Path, path: Path, kind: str, strength: float) -> Path:
    from media_pipeline.ffmpeg.degrade import degrade

    if not path.exists():
        degrade(source=source, out=path, kind=kind, strength=strength)
    return path


def model_rows(clip_dir: Path, clean: Path, *, stem: str, content: str, labels: dict) -> list:
    """The manifest rows of one content's videos, one per model: the clean clip, or a
    degraded copy of it (`stem`-MODEL.mp4)."""
    rows = []
    for condition, (degradation, _) in MODELS.items():
        path = clean
        if degradation is not None:
            kind, strength = degradation
            path = degraded(clean, clip_dir / f"{stem}-{condition}.mp4", kind, strength)
        rows.append(
            {"path": path.name, "role": "stimulus", "condition": condition, "content": content,
             **labels}
        )  # fmt: skip
    return rows


def write_manifest(clip_dir: Path, rows: list[dict], *, columns: list[str] | None = None) -> Path:
    manifest = clip_dir / "manifest.csv"
    with open(manifest, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns or MANIFEST_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return manifest


CONSENT = (
    "Your answers are stored under a pseudonymous id and used for research on video "
    "quality. You may stop at any time."
)


@transaction.atomic  # a stop midway leaves no half-made demo study to be returned next time
def compared_demo_create(
    *,
    slug: str,
    name: str,
    design: str,
    instructions: str,
    clip_dir: Path,
    manifest: Callable[[Path], Path],
    configure: Callable[[Study], None],
) -> Study:
    """The demo study (or the one made before): its clips and manifest made by
    `manifest(clip_dir)`, its design settings set by `configure(study)`, its videos
    imported (and queued for transcoding and scoring), its sessions built, running."""
    existing = Study.objects.filter(slug=slug).first()
    if existing is not None:
        return existing
    from annotation.services.studies import study_build_sessions, study_create
    from annotation.services.study_import import study_import_manifest
    from media_pipeline.services.transcode_jobs import stimuli_enqueue_processing

    clip_dir.mkdir(parents=True, exist_ok=True)
    made = manifest(clip_dir)
    study = study_create(
        name=name,
        slug=slug,
        design=design,
        session_size=100,
        golden_per_session=2,
        rest_every=10,
        rest_seconds=30,
        qualification_size=2,
        qualification_pass_share=1.0,
        payment_per_session="2.00",
        # the demo's `rater` finds it on the home page, no link needed
        open_to_signed_in=True,
        instructions=instructions,
        consent_text=CONSENT,
    )
    configure(study)
    study_import_manifest(study=study, manifest=made, on_commit=stimuli_enqueue_processing)
    study_build_sessions(study=study)
    Study.objects.filter(pk=study.pk).update(state=Study.State.RUNNING)
    study.refresh_from_db()
    return study


def needed_share(study: Study, what: str) -> str:
    """How much of the qualification test must be right, for a demo's hint: "both test
    pairs", "75% of the 6 test videos"."""
    size, share = study.qualification_size, study.qualification_pass_share
    if share < 1:
        return f"{share:.0%} of the {size} test {what}"
    return {1: f"the test {what[:-1]}", 2: f"both test {what}"}.get(size, f"all {size} test {what}")
