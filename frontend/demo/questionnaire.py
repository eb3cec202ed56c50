"""The questionnaire demo study (VGA-Bench's labelling design): synthetic clips with GAIA
prompts, VGA-Bench's question set (annotation/data/questionnaires/vga-bench.yaml), each
video asked 3 to 5 of its questions as its prompt would name them, two exemplars with
the experts' answers and why, golden and qualification videos with the experts' answers.

Three simulated raters label the batch (three per video is the study's overlap): two
careful ones and a careless one. A simulated expert has audited two batches: a careful
rater's, accepted, and the careless rater's, rejected, so its videos are back in the
queue for a real rater; the other careful batch waits for the newcomer's own audit."""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
from django.contrib.auth.models import User

from annotation.models import Study
from frontend.demo.common import PATTERNS, clip, compared_demo_create, write_manifest

SLUG = "questionnaire-demo"
REGULAR = 12
# The questions a demo video may be asked (the overall score always): a prompt of GAIA's
# names its subject, action and scene, so these fit every one.
ASKED = (
    "aes_composition",
    "aes_lighting",
    "tag_shot_type",
    "tag_light_quality",
    "tag_composition_types",
    "gq_action_text_consistency",
    "gq_action_realism",
    "gq_video_clarity",
)
OVERALL = "aes_overall_score"
COMMENT = "comment"
# What a careful simulated rater sometimes writes in the optional comment.
COMMENTS = ("The hands blur when they move.", "The background flickers near the end.")
COLUMNS_BASE = ["path", "role", "prompt", "action", "questions", "note"]
NOTES = {
    "tutorial": "The experts' exemplar: read each answer against the question's definition.",
    "golden": "",
    "qualification": "",
}
# The careful raters' noise (score SD in points, chance of another level or tag); the
# last answers at random.
PROFILES = [
    {"noise": 0.8, "flip": 0.08},
    {"noise": 1.2, "flip": 0.12},
    {"noise": None, "in_test": {"noise": 0.8, "flip": 0.08}},
]


def _questions():
    from annotation.services.question_sets import read_question_set, template_path

    return {q.key: q for q in read_question_set(template_path("vga-bench")).questions}


def _truth(spec, video: str) -> object:
    """A video's true answer to a question (what the experts would say), the same
    wherever it is asked for: drawn from the video's and the question's names."""
    rng = np.random.default_rng(zlib.crc32(f"{video}:{spec.key}".encode()))
    if spec.kind == "score":
        return float(rng.integers(3, 9))
    values = [option["value"] for option in spec.options]
    if spec.kind == "ordinal":
        return values[int(rng.integers(max(len(values) - 2, 0), len(values)))]
    return [values[int(rng.integers(len(values)))]]


def _expert_text(value: object) -> str:
    if isinstance(value, list):
        return "|".join(value)
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _write_manifest(clip_dir: Path) -> Path:
    from frontend.demo.gaia import gaia_prompts

    specs = _questions()
    rng = np.random.default_rng(20)
    prompts = gaia_prompts()
    rows = []
    roles = ["stimulus"] * REGULAR + ["golden"] * 2 + ["qualification"] * 2 + ["tutorial"] * 2
    for index, role in enumerate(roles):
        prompt = prompts[index * 27 + 11]
        pattern = PATTERNS[index % len(PATTERNS)]
        path = clip(clip_dir / f"video{index:02d}.mp4", pattern, prompt.action)
        asked = [OVERALL, *rng.choice(ASKED, size=int(rng.integers(2, 5)), replace=False)]
        if role == "stimulus":
            asked.append(COMMENT)  # optional, and never checked: not on the checked videos
        row = {"path": path.name, "role": role, "prompt": prompt.prompt, "action": prompt.action,
               "questions": "|".join(asked)}  # fmt: skip
        if role != "stimulus":
            row.update(
                {f"{key}_expert": _expert_text(_truth(specs[key], path.name)) for key in asked}
            )
            row["note"] = NOTES[role]
        rows.append(row)
    columns = COLUMNS_BASE + sorted({c for row in rows for c in row if c.endswith("_expert")})
    return write_manifest(clip_dir, rows, columns=columns)


def create_study(*, clip_dir: Path, stimuli: int = 24) -> Study:
    """Create (or return) the questionnaire demo: 12 videos, 2 golden, 2 qualification
    and 2 exemplar videos, VGA-Bench's questions, three raters per video, a plan of
    n = 5, c = 1 for the audits."""
    from annotation.designs.questionnaire_study import settings_of
    from annotation.services.question_sets import (
        question_set_apply,
        read_question_set,
        template_path,
    )

    def configure(study: Study) -> None:
        question_set_apply(study=study, question_set=read_question_set(template_path("vga-bench")))
        chosen = settings_of(study)
        chosen.audit_sample_size, chosen.audit_acceptance_number = 5, 1
        chosen.score_tolerance = 2.0
        chosen.save()
        Study.objects.filter(pk=study.pk).update(qualification_pass_share=0.6)

    return compared_demo_create(
        slug=SLUG,
        name="Questionnaire demo",
        design="questionnaire",
        instructions=(
            "Each task shows one generated video and its prompt. Answer the questions "
            "shown (only those the prompt is about), following the experts' exemplars: "
            "scores from 0 to 10, a level for each quality question (or Invalid question "
            "when the prompt names no such thing), and the tags that fit."
        ),
        clip_dir=clip_dir,
        manifest=_write_manifest,
        configure=configure,
    )


def _answer(spec_kind: str, options: list, truth: object, profile: dict, rng) -> object:
    if profile["noise"] is None:  # the careless rater
        if spec_kind == "score":
            return float(rng.integers(0, 11))
        if spec_kind == "ordinal":
            return options[int(rng.integers(len(options)))]
        return [options[int(rng.integers(len(options)))]]
    if spec_kind == "score":
        return float(np.clip(np.round(truth + rng.normal(0, profile["noise"])), 0, 10))
    if rng.random() >= profile["flip"]:
        return truth
    if spec_kind == "ordinal":
        return options[int(rng.integers(len(options)))]
    return sorted({*truth, options[int(rng.integers(len(options)))]}, key=options.index)


def simulate(study: Study) -> None:
    """The three simulated raters' answers (each question answered near its true value,
    the careless rater at random), then the simulated expert's two audits."""
    from annotation.designs.questionnaire import Labels
    from annotation.designs.questionnaire_study import applicable, questions_of
    from frontend.demo.simulate import simulate_raters

    specs = _questions()

    def values(item, layout, profile, rng: np.random.Generator):
        video = layout[0]
        answers = {}
        for question in applicable(video, questions_of(study.pk)):
            key, kind = question.dimension.key, question.kind
            if kind == "comment":
                if profile["noise"] is not None and rng.random() < 0.25:
                    answers[key] = COMMENTS[int(rng.integers(len(COMMENTS)))]
                continue
            options = [option["value"] for option in question.options]
            truth = _truth(specs[key], video.original_name)
            answers[key] = _answer(kind, options, truth, profile, rng)
        return Labels(answers)

    if simulate_raters(study=study, profiles=PROFILES, values=values, seed=5):
        _audits(study)


def _audits(study: Study) -> None:
    """A simulated expert accepts the first careful rater's batch and rejects the
    careless one's (every sampled video wrong), as an expert checking them would."""
    from annotation.models import Assignment
    from annotation.services.audits import audit_decide, audit_open
    from frontend.demo.simulate import simulated_raters_of

    expert, made = User.objects.get_or_create(
        username=f"sim-{study.slug}-expert", defaults={"is_staff": True}
    )
    if made:
        expert.set_unusable_password()
        expert.save(update_fields=["password"])
    raters = list(simulated_raters_of(study).order_by("pk"))
    for rater, wrong in ((raters[0], False), (raters[-1], True)):
        batch = Assignment.objects.filter(rater=rater, session__study=study).first()
        audit = audit_open(assignment=batch, by=expert)
        findings = {
            str(item): {"wrong": wrong, "note": "answers do not match the video" if wrong else ""}
            for item in audit.sample
        }
        reason = "simulated expert: most sampled answers are random" if wrong else ""
        audit_decide(audit=audit, findings=findings, reason=reason, by=expert)


def how_to_qualify(study: Study) -> str:
    """What a newcomer rating the demo must do to pass its qualification test: its
    videos' true answers are drawn (``_truth``), so the experts' are looked up."""
    from annotation.designs.questionnaire_study import settings_of

    chosen = settings_of(study)
    level = "the same level or the next one" if chosen.ordinal_adjacent else "the same level"
    return (
        f"answer the questions of the {study.qualification_size} test videos so that "
        f"{study.qualification_pass_share:.0%} of the answers agree with the experts' (a "
        f"score within {chosen.score_tolerance:g} points, {level}, tags with a Jaccard "
        f"index of at least {chosen.tags_jaccard:g}); the exemplars show how, and the "
        "experts' answers are in /admin/, Expert labels"
    )
