"""Long rating table -> dense (videos x raters) score matrix with NaN for missing.

The subjective models work on a matrix ``scores[video, rater]``; the platform
stores ratings as a long table ``rater_id, video_id, dimension, score``. This
module pivots one dimension of that table. Ids are sorted (string order), so
the same ratings give the same matrix whatever the row order of the export.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True, eq=False)
class ScoreMatrix:
    """Scores of one dimension: ``scores[i, j]`` is rater ``rater_ids[j]`` on
    video ``video_ids[i]``, NaN where that rater did not rate that video."""

    video_ids: tuple[str, ...]
    rater_ids: tuple[str, ...]
    scores: np.ndarray


def pivot_scores(
    *,
    rater_ids: Sequence[str] | np.ndarray,
    video_ids: Sequence[str] | np.ndarray,
    scores: Sequence[float] | np.ndarray,
) -> ScoreMatrix:
    """Pivot parallel columns of a long table (one dimension) into a ScoreMatrix.

    Raises ValueError on a repeated (rater, video) pair: the models here assume
    one rating per pair (no repetitions), as the platform's unique constraint does.
    """
    raters = np.asarray(rater_ids).astype(str)
    videos = np.asarray(video_ids).astype(str)
    values = np.asarray(scores, dtype=np.float64)
    if not (raters.shape == videos.shape == values.shape) or raters.ndim != 1:
        raise ValueError("rater_ids, video_ids and scores must be 1-d and of equal length")
    if not np.all(np.isfinite(values)):
        raise ValueError("scores must be finite")
    video_order, video_index = np.unique(videos, return_inverse=True)
    rater_order, rater_index = np.unique(raters, return_inverse=True)
    flat = video_index * len(rater_order) + rater_index
    if np.unique(flat).size != flat.size:
        raise ValueError("a rater rated the same video more than once")
    matrix = np.full((len(video_order), len(rater_order)), np.nan)
    matrix.ravel()[flat] = values
    return ScoreMatrix(
        video_ids=tuple(video_order.tolist()),
        rater_ids=tuple(rater_order.tolist()),
        scores=matrix,
    )


def read_scores_csv(*, path: str | Path, dimension: str | None = None) -> ScoreMatrix:
    """Read a ``rater_id,video_id,dimension,score`` CSV and pivot one dimension.

    ``dimension`` may be omitted only when the file holds a single dimension.
    """
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    dimensions = sorted({row["dimension"] for row in rows})
    if dimension is None:
        if len(dimensions) != 1:
            raise ValueError(f"file holds dimensions {dimensions}: pass dimension=")
        dimension = dimensions[0]
    rows = [row for row in rows if row["dimension"] == dimension]
    if not rows:
        raise ValueError(f"no rating of dimension {dimension!r}")
    return pivot_scores(
        rater_ids=[row["rater_id"] for row in rows],
        video_ids=[row["video_id"] for row in rows],
        scores=[float(row["score"]) for row in rows],
    )
