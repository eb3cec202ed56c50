"""The settings of a ranking analysis (``analyse``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from quality.stats.ranking.rankings import RankingsError


@dataclass(frozen=True)
class RankingSettings:
    """bootstrap: rater-bootstrap replicates for the Plackett-Luce intervals and the
        per-rater Recall@K interval (0: no intervals); seed: their seed.
    screen: exclude the raters the random-ranker rule flags (``screening``) before the
        consensus; screen_alpha: the rule's one-sided level.
    pl_prior_weight: weight of the ghost-condition prior added to a Plackett-Luce fit whose
        maximum likelihood estimate does not exist (0: no prior, such a fit is NaN).
    recall_ks: the K of Recall@K (those above the number of conditions are skipped).
    """

    bootstrap: int = 1000
    seed: int = 0
    screen: bool = True
    screen_alpha: float = 0.05
    pl_prior_weight: float = 0.5
    recall_ks: tuple[int, ...] = (1, 3, 5)

    def check(self) -> None:
        if self.bootstrap < 0:
            raise RankingsError("bootstrap must be 0 or more")
        if self.seed < 0:
            raise RankingsError("seed must be 0 or more")
        if not 0.0 < self.screen_alpha < 1.0:
            raise RankingsError("screen_alpha must be in (0, 1)")
        if not (self.pl_prior_weight >= 0.0 and math.isfinite(self.pl_prior_weight)):
            raise RankingsError("pl_prior_weight must be a finite number, 0 or more")
        if not self.recall_ks or any(int(k) != k or k < 1 for k in self.recall_ks):
            raise RankingsError("recall_ks must be whole numbers of 1 or more")
