"""The side-by-side preference tutorial: worked examples, each a pair the experts judged,
which video they chose and why, shown before the qualification test.

A worked example is a content of the manifest's tutorial rows, as a golden pair is: one
`best` and one `worst` video (content_errors checks that). The best video's row names
the question the example is about (`tutorial_dimension`; it may be left out in a study
of one question) and may say why the experts chose it (`note`); both are kept as that
video's ExpertLabel (value "best"). The rater sees the pair as an item shows it, the
better video on the left in every other example, with the reference between them where
the question asks about one and the example's content has one.

Tutorial pairs of the generated/real kind (TutorialPair), made in the admin, are still
shown beside them."""

from __future__ import annotations

from annotation.designs.base import no_extra
from annotation.designs.tutorial_examples import tutorial_pairs
from annotation.dimensions import dimensions_of
from annotation.media_urls import media_urls
from annotation.models import ExpertLabel, Stimulus

MANIFEST_COLUMNS = ("tutorial_dimension", "note")


def check_manifest_extra(*, study, role: str, extra: dict) -> dict:
    """A tutorial row's question and note (see the module docstring); a note on any other
    row, or on the worse video of an example, is refused."""
    no_extra(study=study, role=role, extra=extra)
    columns = extra.get("columns", {})
    note, question = columns.get("note", ""), columns.get("tutorial_dimension", "")
    if role != Stimulus.Role.TUTORIAL:
        if note:
            raise ValueError(f"a {role} row takes no note (a note says why the experts chose)")
        return {}
    if extra.get("labels", {}).get("expected") != "best":
        if note or question:
            raise ValueError("a worked example's question and note go on its best video's row")
        return {}
    keys = [dimension.key for dimension in dimensions_of(study.pk)]
    if not question and len(keys) == 1:
        question = keys[0]
    if question not in keys:
        raise ValueError(
            f"tutorial_dimension {question!r} is not one of the study's questions "
            f"({', '.join(keys)}): the best video's row names the question it shows"
        )
    return {"label": {"question": question, "note": note}}


def store_manifest_extra(*, stimulus: Stimulus, extra: dict, dimensions: dict) -> None:
    label = extra.get("label")
    if label:
        ExpertLabel.objects.create(
            stimulus=stimulus,
            dimension=dimensions[label["question"]],
            value="best",
            note=label["note"],
        )


def tutorial_payload(*, study) -> dict:
    """``exemplars``: per worked example (in the order imported), the left video's media
    with ``right`` (and ``reference``, or None), the prompt, and the experts' answer to
    its question: ``left`` or ``right``, and why; ``pairs``: the study's tutorial
    pairs."""
    videos = Stimulus.objects.filter(study=study, role=Stimulus.Role.TUTORIAL).exclude(content="")
    contents: dict[str, dict[str, Stimulus]] = {}
    for video in videos.order_by("pk"):
        contents.setdefault(video.content, {})[video.expected] = video
    labels = {
        label.stimulus_id: label
        for label in ExpertLabel.objects.filter(
            stimulus__in=[ends["best"] for ends in contents.values() if "best" in ends]
        ).select_related("dimension")
    }
    references = {
        video.content: video
        for video in Stimulus.objects.filter(
            study=study, role=Stimulus.Role.REFERENCE, content__in=list(contents)
        )
    }
    exemplars = []
    for content, ends in contents.items():
        best, worst = ends.get("best"), ends.get("worst")
        label = labels.get(best.pk) if best else None
        if worst is None or label is None:
            continue  # half an example (the rest to come)
        left, right = (best, worst) if len(exemplars) % 2 == 0 else (worst, best)
        reference = references.get(content) if label.dimension.shows_reference else None
        exemplars.append(
            {
                **media_urls(left),
                "right": media_urls(right),
                "reference": media_urls(reference) if reference else None,
                "prompt": best.prompt,
                "answers": [
                    {
                        "question": label.dimension.key,
                        "value": "left" if left is best else "right",
                        "note": label.note,
                    }
                ],
            }
        )
    return {"pairs": tutorial_pairs(study_id=study.pk), "exemplars": exemplars, "questions": []}
