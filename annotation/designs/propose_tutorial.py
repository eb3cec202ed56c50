"""The propose-then-verify tutorial: worked examples (the manifest's tutorial rows), each
a person's segment with their box and the experts' complete labels, and why; the rater
sees them before the qualification test, as a questionnaire's exemplars (readiness when
there are none: annotation.designs.tutorial_examples)."""

from __future__ import annotations

from annotation.designs.propose_study import PROPOSE, vocabulary_of
from annotation.designs.tutorial_examples import READY
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
        stimulus__study=study,
        stimulus__role=Stimulus.Role.TUTORIAL,
        stimulus__status=READY,
        dimension__key=PROPOSE,
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
