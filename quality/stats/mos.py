"""Mean opinion scores per (video, dimension) and GAIA's All-Combined score.

- ``mos``: mean of the raters' z-scores (see ``zscore``), rescaled per dimension by
  min-max over all videos of that dimension to [0, 100]:
  mos = 100 * (zmos - min zmos) / (max zmos - min zmos) (GAIA Sec. 3.3: MOS_s, MOS_c,
  MOS_i "after Z-score normalisation"; the min-max map is this project's documented
  choice of the linear rescale). A dimension where every video has the same z-MOS gets
  50 everywhere.
- ``mos_raw``: mean of the raw scores; ``std``: their sample standard deviation (ddof=1,
  NaN for a single rating); ``n``: number of ratings.
- ``ci95_low_raw``/``ci95_high_raw``: mos_raw -+ t_{(1+c)/2, n-1} * std / sqrt(n) (the
  confidence interval of ITU-R BT.500's mean score, with Student's t rather than 1.96 so
  that small n is honest); NaN for n < 2. It bounds ``mos_raw`` on the raw 0-100 scale,
  not the z-scored ``mos`` (which may lie outside it): the names say so.
- All-Combined (GAIA Tab. 5): the sum of a video's dimension MOS, min-max rescaled to
  [0, 100] over the videos that have every dimension.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import special

from quality.stats.ratings import RatingsTable

MOS_COLUMNS = (
    "video_id",
    "dimension",
    "mos",
    "mos_raw",
    "std",
    "n",
    "ci95_low_raw",
    "ci95_high_raw",
)


def rescale_min_max(values: np.ndarray) -> np.ndarray:
    """100 * ((v - min) / (max - min)); 50 everywhere when all values are equal.

    Dividing before multiplying makes the ends exact (the maximum maps to 1.0 * 100, never
    100.00000000000001) and, rounding being monotone, every value lies in [0, 100].
    """
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return values.copy()
    low, high = values.min(), values.max()
    if high == low:
        return np.full(values.shape, 50.0)
    return 100.0 * ((values - low) / (high - low))


def mos_table(*, table: RatingsTable, z: np.ndarray, confidence: float = 0.95) -> pd.DataFrame:
    """One row per (video, dimension) with at least one rating in ``table``.

    ``z`` holds the z-score of every rating of ``table`` (same order). Rows are ordered
    by dimension (study order), then video id.
    """
    n_videos = len(table.videos)
    cell = table.dimension * n_videos + table.video
    n_cells = len(table.dimensions) * n_videos
    count = np.bincount(cell, minlength=n_cells)
    rated = np.flatnonzero(count)
    n = count[rated]
    zmos = np.bincount(cell, weights=z, minlength=n_cells)[rated] / n
    raw_sum = np.bincount(cell, weights=table.score, minlength=n_cells)
    mean_full = raw_sum / np.maximum(count, 1)
    deviation = table.score - mean_full[cell]
    ss = np.bincount(cell, weights=deviation**2, minlength=n_cells)[rated]
    mos_raw = mean_full[rated]
    with np.errstate(invalid="ignore", divide="ignore"):
        std = np.where(n > 1, np.sqrt(ss / np.maximum(n - 1, 1)), np.nan)
        # stdtrit(df, p): the Student t quantile (what scipy.stats.t.ppf evaluates).
        quantile = special.stdtrit(np.maximum(n - 1, 1), (1.0 + confidence) / 2.0)
        half = quantile * std / np.sqrt(n)
    half = np.where(n > 1, half, np.nan)
    dimension_code, video_code = np.divmod(rated, n_videos)
    mos = np.empty(rated.size)
    for d in np.unique(dimension_code):
        part = dimension_code == d
        mos[part] = rescale_min_max(zmos[part])
    return pd.DataFrame(
        {
            "video_id": table.videos.take(video_code),
            "dimension": np.asarray(table.dimensions.take(dimension_code), dtype=object),
            "mos": mos,
            "mos_raw": mos_raw,
            "std": std,
            "n": n.astype(np.int64),
            "ci95_low_raw": mos_raw - half,
            "ci95_high_raw": mos_raw + half,
        }
    )


def all_combined(*, mos: pd.DataFrame, dimensions: list) -> pd.DataFrame:
    """Columns video_id, all_combined: sum of the dimension MOS, min-max rescaled to [0, 100].

    Only videos with a MOS in every one of ``dimensions`` take part.
    """
    wide = mos.pivot(index="video_id", columns="dimension", values="mos")
    wide = wide.reindex(columns=list(dimensions)).dropna()
    total = wide.to_numpy().sum(axis=1)
    return pd.DataFrame({"video_id": wide.index.to_numpy(), "all_combined": rescale_min_max(total)})
