"""The tutorial of the compared designs (side-by-side preference, ranking): worked
examples, each a set of videos the experts judged, their verdict and why, shown before
the qualification test.

A worked example is a content of the manifest's tutorial rows, as a golden item is: one
`best` and one `worst` video (a ranking example may have others in between: `expected`
empty), checked by content_errors. The best video's row names the question the example
is about (`tutorial_dimension`; it may be left out in a study of one question) and may
say why the experts judged so (`note`); both are kept as that video's ExpertLabel (value
"best"). A preference example is shown as an item shows its pair, the better video on
the left in every other example, with the reference between them where the question
asks about one and the example's content has one; a ranking example shows its videos in
the experts' order, best first.

Tutorial pairs of the generated/real kind (TutorialPair), made in the admin, are still
shown beside them."""

from __future__ import annotations

from dataclasses import dataclass

from annotation.designs.base import CHECKED_ENDS, no_extra
from annotation.designs.tutorial_examples import READY, tutorial_pairs
from annotation.media_urls import media_urls
from annotation.models import Dimension, ExpertLabel, Stimulus

MANIFEST_COLUMNS = ("tutorial_dimension", "note")
# The roles whose contents need one best and one worst video (content_errors).
ENDS = (*CHECKED_ENDS, Stimulus.Role.TUTORIAL)


def check_manifest_extra(*, study, role: str, extra: dict) -> dict:
    """A tutorial row's question and note (see the module docstring); a note on any other
    row, or on another video than an example's best, is refused."""
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
    # read afresh (not dimensions_of's cache): a question added a moment ago counts
    keys = list(
        Dimension.objects.filter(study=study).order_by("order").values_list("key", flat=True)
    )
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


@dataclass(frozen=True)
class WorkedExample:
    best: Stimulus
    between: list[Stimulus]  # in the order imported
    worst: Stimulus
    label: ExpertLabel  # the best video's: the question and why
    reference: Stimulus | None  # the content's, where the question asks about one


def worked_examples(study) -> list[WorkedExample]:
    """The study's complete worked examples whose videos are all ready, in the order
    imported (half of one, the rest to come in a later import, is left out)."""
    videos = Stimulus.objects.filter(study=study, role=Stimulus.Role.TUTORIAL).exclude(content="")
    contents: dict[str, list[Stimulus]] = {}
    for video in videos.order_by("pk"):
        contents.setdefault(video.content, []).append(video)
    # an example with a video not ready waits whole: without it, it would say less
    contents = {
        content: members
        for content, members in contents.items()
        if all(video.status == READY for video in members)
    }
    labels = {
        label.stimulus_id: label
        for label in ExpertLabel.objects.filter(
            stimulus__in=[v for members in contents.values() for v in members if v.expected]
        ).select_related("dimension")
    }
    references = {
        video.content: video
        for video in Stimulus.objects.filter(
            study=study, role=Stimulus.Role.REFERENCE, content__in=list(contents), status=READY
        )
    }
    examples = []
    for content, members in contents.items():
        ends = {video.expected: video for video in members if video.expected}
        best, worst = ends.get("best"), ends.get("worst")
        label = labels.get(best.pk) if best else None
        if worst is None or label is None:
            continue
        shows = label.dimension.shows_reference
        examples.append(
            WorkedExample(
                best=best,
                between=[video for video in members if not video.expected],
                worst=worst,
                label=label,
                reference=references.get(content) if shows else None,
            )
        )
    return examples


def _answer(example: WorkedExample, value) -> dict:
    return {"question": example.label.dimension.key, "value": value, "note": example.label.note}


def preference_payload(*, study) -> dict:
    """``exemplars``: per worked example, the left video's media with ``right`` (and
    ``reference``, or None), the prompt, and the experts' answer to its question:
    ``left`` or ``right``, and why; ``pairs``: the study's tutorial pairs."""
    exemplars = []
    for index, example in enumerate(worked_examples(study)):
        best_left = index % 2 == 0
        left, right = (example.best, example.worst) if best_left else (example.worst, example.best)
        reference = example.reference
        exemplars.append(
            {
                **media_urls(left),
                "right": media_urls(right),
                "reference": media_urls(reference) if reference else None,
                "prompt": example.best.prompt,
                "answers": [_answer(example, "left" if best_left else "right")],
            }
        )
    return {"pairs": tutorial_pairs(study_id=study.pk), "exemplars": exemplars, "questions": []}


def ranking_payload(*, study) -> dict:
    """``exemplars``: per worked example, its videos in the experts' order (``videos``,
    each with its ``place``: best, between or worst; the first's media also at the top
    level), the prompt, and the experts' answer to its question: the places in that
    order, and why; ``pairs``: the study's tutorial pairs."""
    exemplars = []
    for example in worked_examples(study):
        ordered = [
            ("best", example.best),
            *(("between", video) for video in example.between),
            ("worst", example.worst),
        ]
        exemplars.append(
            {
                **media_urls(example.best),
                "videos": [{**media_urls(video), "place": place} for place, video in ordered],
                "prompt": example.best.prompt,
                "answers": [_answer(example, [place for place, _ in ordered])],
            }
        )
    return {"pairs": tutorial_pairs(study_id=study.pk), "exemplars": exemplars, "questions": []}
