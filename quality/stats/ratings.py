"""The long ratings table, checked once and encoded to integer codes.

Input: a DataFrame with columns ``rater_id, video_id, dimension, score`` and an optional
``session_id`` (one row per rating). Every statistic in ``quality.stats`` then works on
the parallel integer arrays of a :class:`RatingsTable`, never on the DataFrame again.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

REQUIRED_COLUMNS = ("rater_id", "video_id", "dimension", "score")
SESSION_COLUMN = "session_id"
# The largest score magnitude the command line reads. No rating scale comes near it, and
# far beyond it (about 1e154) the squared deviations behind a std, a z-score and alpha
# overflow to infinity: a stray 1e308 gave an infinite std and interval and no alpha.
LARGEST_SCORE = 1e12


class RatingsError(ValueError):
    """The ratings table cannot be analysed as it is (missing column, bad score, empty)."""


@dataclass(frozen=True, eq=False)
class RatingsTable:
    """Ratings as parallel arrays of codes into the label arrays.

    ``raters[rater[i]]`` gave ``score[i]`` to ``videos[video[i]]`` on
    ``dimensions[dimension[i]]``; ``session`` is None when the table has no session_id.
    Raters and videos are in sorted order (so the same ratings in another row order give
    the same codes, draws and results); dimensions in the order of the column's
    categories when it is categorical (the study order), else of first appearance.
    """

    rater: np.ndarray
    video: np.ndarray
    dimension: np.ndarray
    session: np.ndarray | None
    score: np.ndarray
    raters: pd.Index
    videos: pd.Index
    dimensions: pd.Index

    @property
    def n_ratings(self) -> int:
        return int(self.score.size)

    def subset(self, mask: np.ndarray) -> RatingsTable:
        """The same labels (codes keep their meaning), only the rows where mask is True."""
        return RatingsTable(
            rater=self.rater[mask],
            video=self.video[mask],
            dimension=self.dimension[mask],
            session=None if self.session is None else self.session[mask],
            score=self.score[mask],
            raters=self.raters,
            videos=self.videos,
            dimensions=self.dimensions,
        )


def _codes(column: pd.Series, *, sort: bool) -> tuple[np.ndarray, pd.Index]:
    codes, uniques = pd.factorize(column, sort=sort, use_na_sentinel=False)
    return codes.astype(np.int64, copy=False), pd.Index(uniques)


def encode_ratings(*, ratings: pd.DataFrame) -> RatingsTable:
    """Check the long table and factorize its id columns once.

    Raises RatingsError when a required column is missing, the table is empty, an id is
    missing, or a score is not a finite number.
    """
    missing = [c for c in REQUIRED_COLUMNS if c not in ratings.columns]
    if missing:
        raise RatingsError(f"missing column(s): {', '.join(missing)}")
    if len(ratings) == 0:
        raise RatingsError("no ratings")
    for column in ("rater_id", "video_id", "dimension"):
        if ratings[column].isna().any():
            row = int(np.flatnonzero(ratings[column].isna().to_numpy())[0])
            raise RatingsError(f"row {row}: {column} is missing")
    score = pd.to_numeric(ratings["score"], errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(score)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        value = ratings["score"].iloc[row]
        raise RatingsError(f"row {row}: score {value!r} is not a finite number")
    rater, raters = _codes(ratings["rater_id"], sort=True)
    video, videos = _codes(ratings["video_id"], sort=True)
    dimension_column = ratings["dimension"]
    if isinstance(dimension_column.dtype, pd.CategoricalDtype):
        # The caller's category order is the study order (unused categories dropped).
        dimension_column = dimension_column.cat.remove_unused_categories()
        dimension = dimension_column.cat.codes.to_numpy().astype(np.int64)
        dimensions = pd.Index([str(c) for c in dimension_column.cat.categories])
    else:
        dimension, dimensions = _codes(dimension_column.astype(str), sort=False)
    session = None
    if SESSION_COLUMN in ratings.columns:
        session, _ = _codes(ratings[SESSION_COLUMN], sort=False)
    return RatingsTable(
        rater=rater,
        video=video,
        dimension=dimension,
        session=session,
        score=score,
        raters=raters,
        videos=videos,
        dimensions=dimensions,
    )
