"""The propose-then-verify demo study (AVA's design): two synthetic "films" in which
coloured boxes stand for people, segments of 3 s around keyframes at 2, 4 and 6 s, one
item per person and keyframe, AVA's 80-class vocabulary; golden and qualification
segments carry the experts' labels, and two tutorial segments are the tutorial's worked
examples (the experts' labels and why).

Three simulated proposers label every segment; their proposals fill the verify queue
(the union of each segment's proposals, annotation.services.verify_queue); three other
simulated raters verify them, so the finished run keeps the labels at least two verify.
A real rater gets the demo's qualification, then whichever stage has room."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import numpy as np

from annotation.models import Study
from frontend.demo.common import compared_demo_create, write_manifest

SLUG = "propose-verify-demo"
KEYFRAMES = (2.0, 4.0, 6.0)
# film -> its people: (box x1, y1, x2, y2 as shares of the frame, colour, true labels:
# a pose and the interactions the experts would give, AVA action ids)
FILMS = {
    "street": [
        ((0.10, 0.25, 0.30, 0.90), "red", (14, 17)),  # walk, carry/hold (an object)
        ((0.60, 0.20, 0.80, 0.90), "blue", (12, 79, 80)),  # stand, talk to, watch (a person)
    ],
    "reading-room": [((0.35, 0.30, 0.65, 0.85), "green", (11, 48))],  # sit, read
    "golden": [((0.20, 0.20, 0.55, 0.95), "yellow", (12, 17))],  # stand, carry/hold
    "qualification": [((0.40, 0.15, 0.75, 0.90), "magenta", (11, 61))],  # sit, watch (TV)
    # the tutorial's worked examples: two people, each labelled in full, and why
    "tutorial": [
        ((0.08, 0.20, 0.36, 0.92), "cyan", (12, 79)),  # stand, talk to
        ((0.58, 0.30, 0.88, 0.90), "orange", (11, 80, 17)),  # sit, watch (a person), hold
    ],
}
WHY = {
    ("tutorial", 0): "One pose (standing) always; they speak to the seated person, so talk "
    "to; nothing in their hands, so no object interaction.",
    ("tutorial", 1): "Seated, holding a cup and looking at the speaker: one pose and every "
    "interaction that can be seen, with objects and with people.",
}
COLUMNS = ["path", "role", "video_id", "keyframe", "x1", "y1", "x2", "y2", "person_id",
           "expert_actions", "note"]  # fmt: skip
# Everyone takes the qualification test (proposing and verifying, pass share 0.5) with
# care, and is less careful in the sessions after it.
CAREFUL = {"recall": 0.95, "noise": 0.05, "yes_right": 0.95, "yes_wrong": 0.05}
PROPOSERS = [{"recall": 0.95, "noise": 0.1, "in_test": CAREFUL},
             {"recall": 0.9, "noise": 0.15, "in_test": CAREFUL},
             {"recall": 0.85, "noise": 0.2, "in_test": CAREFUL}]  # fmt: skip
VERIFIERS = [{"yes_right": 0.95, "yes_wrong": 0.1, "in_test": CAREFUL},
             {"yes_right": 0.9, "yes_wrong": 0.15, "in_test": CAREFUL},
             {"yes_right": 0.85, "yes_wrong": 0.2, "in_test": CAREFUL}]  # fmt: skip


def _film(clip_dir: Path, name: str) -> Path:
    from media_pipeline.ffmpeg.synth import make_clip

    path = clip_dir / f"{name}.mp4"
    if not path.exists():
        shapes = tuple((*box, colour) for box, colour, _ in FILMS[name])
        make_clip(path=path, width=320, height=240, fps=12, seconds=8.0, pattern="smptehdbars",
                  shapes=shapes)  # fmt: skip
    return path


def _write_manifest(clip_dir: Path) -> Path:
    rows = []
    for name, people in FILMS.items():
        role = name if name in ("golden", "qualification", "tutorial") else "stimulus"
        path = _film(clip_dir, name)
        keyframes = {"stimulus": KEYFRAMES, "tutorial": KEYFRAMES[1:2]}.get(role, KEYFRAMES[:2])
        for keyframe in keyframes:
            for person, (box, _, truth) in enumerate(people):
                row = {"path": path.name, "role": role, "video_id": name, "keyframe": keyframe,
                       "x1": box[0], "y1": box[1], "x2": box[2], "y2": box[3],
                       "person_id": person}  # fmt: skip
                if role != "stimulus":
                    row["expert_actions"] = "|".join(str(action) for action in truth)
                    row["note"] = WHY.get((role, person), "")
                rows.append(row)
    return write_manifest(clip_dir, rows, columns=COLUMNS)


def create_study(*, clip_dir: Path, stimuli: int = 24) -> Study:
    """Create (or return) the demo: 9 segments of two films, 2 golden and 2
    qualification segments, 2 worked examples for the tutorial, AVA's vocabulary, 3
    proposers and 3 verifiers a segment."""
    from annotation.services.vocabularies import read_vocabulary, template_path, vocabulary_apply

    def configure(study: Study) -> None:
        vocabulary_apply(study=study, vocabulary=read_vocabulary(template_path("ava")))
        # Sessions of 6: the first is labelled and verified by simulated raters, the
        # second waits for a real proposer (then its verify session for real verifiers).
        Study.objects.filter(pk=study.pk).update(qualification_pass_share=0.5, session_size=6)

    return compared_demo_create(
        slug=SLUG,
        name="Propose-then-verify demo",
        design="propose_verify",
        instructions=(
            "Each task shows a 3-second clip and, beside it, its middle frame with one "
            "person's box. Proposing: choose what that person does (one pose, and any "
            "interactions with objects or people). Verifying: say yes or no to each "
            "action others proposed."
        ),
        clip_dir=clip_dir,
        manifest=_write_manifest,
        configure=configure,
    )


def _truth(video) -> tuple[int, ...]:
    segment = video.segment
    return FILMS[segment["video_id"]][segment["person_id"]][2]


def simulate(study: Study) -> None:
    """Proposals, then (once the verify queue made the verify items) verdicts."""
    from annotation.designs.propose import Proposed, Verified
    from annotation.designs.propose_study import vocabulary_of
    from annotation.models import Candidate, Session
    from annotation.services.verify_queue import verify_queues_sweep
    from frontend.demo.simulate import simulate_raters

    actions = sorted(vocabulary_of(study.pk).actions)
    group_of = vocabulary_of(study.pk).group_of

    def propose(item, layout, profile, rng: np.random.Generator):
        truth = _truth(layout[0])
        labels = [truth[0]] + [a for a in truth[1:] if rng.random() < profile["recall"]]
        if rng.random() < profile["noise"]:
            wrong = int(rng.choice([a for a in actions if group_of[a] != "pose"]))
            labels.append(wrong)
        return Proposed(
            tuple(sorted(set(labels))), "", (("inappropriate", False), ("bad_box", False))
        )

    def verify(item, layout, profile, rng: np.random.Generator):
        truth = set(_truth(layout[0]))
        ids = Candidate.objects.filter(item=item).values_list("action__action_id", flat=True)
        verdicts = tuple(
            (a, bool(rng.random() < profile["yes_right" if a in truth else "yes_wrong"]))
            for a in sorted(ids)
        )
        return Verified(verdicts)

    def values(item, layout, profile, rng):
        stage = verify if item.dimension.key == "verify" else propose
        return stage(item, layout, profile, rng)

    proposing = list(
        Session.objects.filter(study=study, items__item__dimension__key="propose")
        .distinct()
        .order_by("index")
    )
    first = Session.objects.filter(pk=proposing[0].pk)
    every = Session.objects.filter(pk__in=[session.pk for session in proposing])
    # Two proposers label every segment, the third only the first session's: the second
    # session's segments wait for one more (real) proposer.
    # The proposers came first, then the verifiers (timed so on the monitor).
    first_two = dict(sessions=every, ended_ago=timedelta(hours=1))
    if simulate_raters(study=study, profiles=PROPOSERS[:2], values=values, seed=9, **first_two):
        third = dict(sessions=first, first_number=3, ended_ago=timedelta(minutes=40))
        simulate_raters(study=study, profiles=PROPOSERS[2:], values=values, seed=11, **third)
        verify_queues_sweep()  # the tasks run once this commits; here and now instead
    verifying = Session.objects.filter(
        study=study, items__is_golden=False, items__item__dimension__key="verify"
    ).distinct()
    simulate_raters(study=study, profiles=VERIFIERS, values=values, seed=10,
                    sessions=verifying, first_number=len(PROPOSERS) + 1)  # fmt: skip


def how_to_qualify(study: Study) -> str:
    """What a newcomer rating the demo must do to pass its qualification test: the
    actions of the test's person, by name."""
    from annotation.designs.propose_study import vocabulary_of

    actions = vocabulary_of(study.pk).actions
    ((_, colour, truth),) = FILMS["qualification"]
    names = " and ".join(actions[action_id].name for action_id in truth)
    return (
        f"the person in the {colour} box of the test segments does: {names}; propose "
        "those, and when verifying say yes to them and no to the others (a mean recall "
        f"or agreement of {study.qualification_pass_share:.0%} passes)"
    )
