"""Simulated side-by-side judgments from known strengths (for tests, benchmarks and
planning a study's size).

Each judgment: a pair, a content and a side placement (left/right, 1/2 each) are drawn;
with probability ``tie_share`` the answer is "equal", otherwise the left video is
preferred with probability 1 / (1 + exp(-(s_left - s_right + left_bias))) (Bradley-Terry
on natural-log strengths, plus a rater's pull to the left).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from quality.stats.preference.judgments import JUDGMENT_COLUMNS


def simulate_judgments(
    *,
    strengths: Sequence[float],
    raters: int,
    per_pair: int | None = None,
    per_rater: int | None = None,
    pairs: Sequence[tuple[int, int]] | None = None,
    tie_share: float = 0.2,
    contents: int = 100,
    left_bias: Sequence[float] | float = 0.0,
    question: str = "video quality",
    seed: int = 0,
) -> pd.DataFrame:
    """JUDGMENT_COLUMNS, conditions named ``m00``, ``m01``, ... in strength order given.

    Either ``per_pair`` (every rater judges every pair that many times) or ``per_rater``
    (every rater judges that many pairs drawn uniformly). ``pairs`` defaults to all
    pairs; ``left_bias`` is one log-odds pull per rater or one for all.
    """
    if (per_pair is None) == (per_rater is None):
        raise ValueError("give exactly one of per_pair and per_rater")
    rng = np.random.default_rng(seed)
    strengths = np.asarray(strengths, dtype=np.float64)
    if pairs is None:
        first, second = np.triu_indices(strengths.size, 1)
    else:
        first, second = (np.asarray(side) for side in zip(*pairs, strict=True))
    if per_pair is not None:
        pair = np.tile(np.repeat(np.arange(first.size), per_pair), raters)
        rater = np.repeat(np.arange(raters), first.size * per_pair)
    else:
        pair = rng.integers(0, first.size, size=raters * per_rater)
        rater = np.repeat(np.arange(raters), per_rater)
    size = pair.size
    swap = rng.random(size) < 0.5
    left = np.where(swap, second[pair], first[pair])
    right = np.where(swap, first[pair], second[pair])
    pull = np.broadcast_to(np.asarray(left_bias, dtype=np.float64), (raters,))[rater]
    p_left = 1.0 / (1.0 + np.exp(-(strengths[left] - strengths[right] + pull)))
    tie = rng.random(size) < tie_share
    chose_left = rng.random(size) < p_left
    choice = np.where(tie, "equal", np.where(chose_left, "left", "right"))
    width = len(str(strengths.size - 1))
    names = np.array([f"m{i:0{max(2, width)}d}" for i in range(strengths.size)], dtype=object)
    frame = pd.DataFrame(
        {
            "rater_id": np.array([f"r{i:03d}" for i in range(raters)], dtype=object)[rater],
            "question": question,
            "content_id": np.char.add("c", rng.integers(0, contents, size).astype(str)),
            "left": names[left],
            "right": names[right],
            "choice": choice,
        }
    )
    return frame[list(JUDGMENT_COLUMNS)]
