"""Does a rater's answer agree with the experts' on an exemplar (VGA-Bench's rating
boundaries, "defined through both textual descriptions and example videos")?

Per kind, with the study's tolerances:

- score: |answer - expert| <= score_tolerance;
- ordinal: the same level, or (``adjacent``) a level next to it in the question's order
  of levels; "invalid" agrees only with "invalid";
- tags: the Jaccard index |A ∩ E| / |A ∪ E| of the two tag sets is at least
  ``tags_jaccard`` (Jaccard, "Étude comparative de la distribution florale", 1901); two
  empty sets agree.

The share of agreeing answers is what the qualification test and the golden gate of a
questionnaire study compare with their thresholds. ``agreeing`` states the same rule for
one expert answer as data (the scores, the levels, the Jaccard index that agree), so
that the tutorial can tell a rater trying an exemplar whether the test would count
their answer, without a second copy of the rule's numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

INVALID = "invalid"


@dataclass(frozen=True)
class Tolerances:
    score_tolerance: float = 1.0
    adjacent: bool = True
    tags_jaccard: float = 0.5


def jaccard(first: Sequence[str], second: Sequence[str]) -> float:
    """|A ∩ B| / |A ∪ B| of the two sets; 1.0 for two empty sets."""
    a, b = set(first), set(second)
    union = a | b
    return len(a & b) / len(union) if union else 1.0


def answer_agrees(
    *,
    kind: str,
    answer: object,
    expert: object,
    levels: Sequence[float] = (),
    tolerances: Tolerances = Tolerances(),
) -> bool:
    """Whether `answer` agrees with `expert` (see the module docstring). `levels`: an
    ordinal question's levels in order; values are numbers, "invalid", or tag lists."""
    if kind == "score":
        return abs(float(answer) - float(expert)) <= tolerances.score_tolerance + 1e-9
    if kind == "ordinal":
        if answer == INVALID or expert == INVALID:
            return answer == expert
        order = [float(level) for level in levels]
        distance = abs(order.index(float(answer)) - order.index(float(expert)))
        return distance <= (1 if tolerances.adjacent else 0)
    if kind == "tags":
        return jaccard(answer, expert) >= tolerances.tags_jaccard - 1e-12
    raise ValueError(f"no agreement rule for answers of kind {kind!r}")


def agreeing(
    *,
    kind: str,
    expert: object,
    levels: Sequence[float] = (),
    tolerances: Tolerances = Tolerances(),
) -> dict:
    """The answers that agree with ``expert`` (``answer_agrees``), as data: a score in
    ``{"low", "high"}``; an ordinal answer among ``{"levels"}`` (the agreeing levels in
    the question's order, or ``["invalid"]``); a tag set whose Jaccard index with the
    experts' is at least ``{"jaccard"}``."""
    if kind == "score":
        return {
            "low": float(expert) - tolerances.score_tolerance,
            "high": float(expert) + tolerances.score_tolerance,
        }
    if kind == "ordinal":
        if expert == INVALID:
            return {"levels": [INVALID]}
        order = [float(level) for level in levels]
        if float(expert) not in order:  # a level the question no longer has: itself only
            return {"levels": [float(expert)]}
        at = order.index(float(expert))
        reach = 1 if tolerances.adjacent else 0
        return {"levels": order[max(0, at - reach) : at + reach + 1]}
    if kind == "tags":
        return {"jaccard": tolerances.tags_jaccard}
    raise ValueError(f"no agreement rule for answers of kind {kind!r}")
