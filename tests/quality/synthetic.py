"""Small synthetic rating studies for the quality.stats tests (seeded, deterministic)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def study(
    *,
    n_videos: int = 40,
    n_raters: int = 12,
    dimensions: tuple[str, ...] = ("subject", "completeness", "interaction"),
    sessions: int = 1,
    coverage: float = 0.8,
    seed: int = 0,
) -> pd.DataFrame:
    """Long table: each rater rates a random `coverage` share of the videos on every
    dimension, whole-number scores 0-100, videos split into `sessions` sessions."""
    rng = np.random.default_rng(seed)
    truth = rng.uniform(10, 90, size=(len(dimensions), n_videos))
    bias = rng.normal(0, 8, size=n_raters)
    session_of = rng.integers(0, sessions, size=n_videos)
    rows = []
    for rater in range(n_raters):
        seen = np.flatnonzero(rng.random(n_videos) < coverage)
        for d, dimension in enumerate(dimensions):
            noise = rng.normal(0, 10, size=seen.size)
            score = np.clip(np.rint(truth[d, seen] + bias[rater] + noise), 0, 100)
            for video, value in zip(seen, score, strict=True):
                rows.append((f"r{rater}", f"v{video:03d}", dimension, value, session_of[video]))
    return pd.DataFrame(rows, columns=["rater_id", "video_id", "dimension", "score", "session_id"])
