"""The propose-then-verify tutorial: worked examples (the manifest's tutorial rows), each
a person's segment with their box and the experts' complete labels, and why; the rater
sees them before the qualification test, as a questionnaire's exemplars."""

from __future__ import annotations

from annotation.designs.propose_study import PROPOSE, vocabulary_of
from annotation.media_urls import media_urls
from annotation.models import Dimension, ExpertLabel, Stimulus


def tutorial_payload(*, study) -> dict:
    """``exemplars``: per tutorial segment, its media, the person's box and the experts'
    labels (name and group, in the vocabulary's order) with their note; ``questions``:
    the propose stage's question, which names the examples' group."""
    vocabulary = vocabulary_of(study.pk)
    groups = {group.key: group.label for group in vocabulary.groups}
    order = {action_id: index for index, action_id in enumerate(vocabulary.actions)}
    labels = ExpertLabel.objects.filter(
        stimulus__study=study, stimulus__role=Stimulus.Role.TUTORIAL, dimension__key=PROPOSE
    ).select_related("stimulus")
    exemplars = []
    for label in sorted(labels, key=lambda label: label.stimulus_id):
        video = label.stimulus
        known = sorted((a for a in label.value if a in vocabulary.actions), key=order.get)
        actions = [
            {
                "id": action_id,
                "name": vocabulary.actions[action_id].name,
                "group": groups[vocabulary.group_of[action_id]],
            }
            for action_id in known
        ]
        exemplars.append(
            {
                **media_urls(video),
                "prompt": video.prompt,
                "box": (video.segment or {}).get("box") or [0.0, 0.0, 1.0, 1.0],
                "answers": [{"question": PROPOSE, "value": actions, "note": label.note}],
            }
        )
    stage = Dimension.objects.filter(study=study, key=PROPOSE).first()
    questions = [{"key": PROPOSE, "label": stage.label, "text": stage.help_text}] if stage else []
    return {"pairs": [], "exemplars": exemplars, "questions": questions}


def readiness(*, study) -> list[tuple[str, str]]:
    """The worked examples the tutorial shows (annotation.readiness)."""
    if Stimulus.objects.filter(study=study, role=Stimulus.Role.TUTORIAL).exists():
        return []
    return [
        (
            "no_exemplars",
            "no worked examples: raters see no person labelled by the experts before the "
            "test (manifest rows of role tutorial, with expert_actions and a note)",
        )
    ]
