"""The whole post-collection analysis of a study (GAIA Sec. 3.3), in one call.

``run_analysis`` is the one entry point of the CLI (``python -m quality analyze``), the
Celery task (``quality.services.analysis_run_execute``) and ``bench/analysis.py``:

1. encode the long table (``ratings``);
2. exclude line clickers entirely (``screening``);
3. z-score each kept rater per (rater, session, dimension) (``zscore``);
4. MOS per (video, dimension), raw MOS, std, n, CI, All-Combined (``mos``);
5. Krippendorff's interval alpha per dimension on the kept raw scores (``reliability``);
6. the bootstrapped SRCC curve per dimension (``srcc_curve``);
7. Spearman / Kendall between the dimensions' MOS (``correlation``).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from quality.stats.correlation import DimensionCorrelation, dimension_correlation
from quality.stats.mos import MOS_COLUMNS, all_combined, mos_table
from quality.stats.ratings import RatingsTable, encode_ratings
from quality.stats.reliability import krippendorff_alpha_interval
from quality.stats.screening import LINE_CLICKER_REASON, RaterExclusion, line_clickers
from quality.stats.srcc_curve import dimension_stream, srcc_curve
from quality.stats.zscore import zscores

# Bump when a change to this package changes any number or name a stored run holds
# (1.1: interval columns ci95_*_raw, exact MOS ends, per-metric n, oriented pairs;
# 1.2: PLCC's logistic mapping only where its AICc beats the line's; the SRCC curve on a
# grid of group sizes past 30).
ANALYSIS_VERSION = "quality.stats/1.2"


@dataclass(frozen=True)
class AnalysisSettings:
    """Per-study analysis settings; defaults are GAIA's (PROTOCOL.md Sec. 1).

    line_click_share: a rater whose most frequent score covers MORE than this share of
        their ratings is excluded (1.0: rule off).
    slider_step: scores are rounded to this step before counting identical ratings.
    draws: bootstrap draws per group size of the SRCC curve; seed: their seed.
    srcc_max_n: largest group size of the curve (None: half the raters); the sizes are
        every n up to 30, then about 10% apart (``srcc_curve.group_sizes``).
    confidence: level of the MOS confidence intervals and the SRCC percentile intervals.
    """

    line_click_share: float = 0.40
    slider_step: float = 1.0
    draws: int = 100
    seed: int = 0
    srcc_max_n: int | None = None
    confidence: float = 0.95


@dataclass(frozen=True, eq=False)
class AnalysisResult:
    settings: AnalysisSettings
    dimensions: list[str]
    mos: pd.DataFrame  # MOS_COLUMNS
    all_combined: pd.DataFrame  # video_id, all_combined
    exclusions: list[RaterExclusion]
    alpha: dict[str, float]
    srcc_curve: dict[str, dict[int, dict[str, float]]]
    dimension_correlation: list[DimensionCorrelation]
    n_ratings: int
    n_ratings_kept: int
    n_raters: int
    n_raters_kept: int
    n_videos: int
    timings: dict[str, float] = field(default_factory=dict)  # seconds per step, not stored

    def summary_dict(self) -> dict:
        """JSON-ready summary (str keys; NaN stays float NaN, callers map it to null)."""
        return {
            "version": ANALYSIS_VERSION,
            "settings": asdict(self.settings),
            "dimensions": list(self.dimensions),
            "counts": {
                "ratings": self.n_ratings,
                "ratings_kept": self.n_ratings_kept,
                "raters": self.n_raters,
                "raters_kept": self.n_raters_kept,
                "videos": self.n_videos,
            },
            "line_clickers": [
                e.rater_id for e in self.exclusions if e.reason == LINE_CLICKER_REASON
            ],
            "exclusions": [asdict(e) for e in self.exclusions],
            "alpha": dict(self.alpha),
            "srcc_curve": {
                d: {str(n): point["mean"] for n, point in points.items()}
                for d, points in self.srcc_curve.items()
            },
            "srcc_curve_detail": {
                d: {str(n): dict(point) for n, point in points.items()}
                for d, points in self.srcc_curve.items()
            },
            "dimension_correlation": [asdict(c) for c in self.dimension_correlation],
            "all_combined": {
                str(video): float(value)
                for video, value in zip(
                    self.all_combined["video_id"].tolist(),
                    self.all_combined["all_combined"].tolist(),
                    strict=True,
                )
            },
        }


def _dimension_curves(
    kept: RatingsTable, settings: AnalysisSettings
) -> dict[str, dict[int, dict[str, float]]]:
    curves = {}
    for d, name in enumerate(kept.dimensions.tolist()):
        rows = kept.dimension == d
        if not rows.any():
            continue
        # Compact codes: the curve sees only the raters and videos of this dimension.
        raters, rater = np.unique(kept.rater[rows], return_inverse=True)
        videos, video = np.unique(kept.video[rows], return_inverse=True)
        curves[str(name)] = srcc_curve(
            rater=rater.ravel(),
            video=video.ravel(),
            score=kept.score[rows],
            n_raters=raters.size,
            n_videos=videos.size,
            draws=settings.draws,
            seed=settings.seed,
            stream=dimension_stream(name),
            max_n=settings.srcc_max_n,
            confidence=settings.confidence,
        )
    return curves


def run_analysis(*, ratings: pd.DataFrame, settings: AnalysisSettings) -> AnalysisResult:
    """Analyse a long ratings table (see ``ratings.encode_ratings``) with ``settings``.

    Raises ``ratings.RatingsError`` when the table cannot be analysed.
    """
    timings: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(step: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        timings[step] = now - clock
        clock = now

    table = encode_ratings(ratings=ratings)
    dimensions = [str(d) for d in table.dimensions.tolist()]
    lap("encode")
    exclusions = line_clickers(
        table=table,
        line_click_share=settings.line_click_share,
        slider_step=settings.slider_step,
    )
    excluded = np.zeros(len(table.raters), dtype=bool)
    excluded[[table.raters.get_loc(e.rater_id) for e in exclusions]] = True
    kept = table.subset(~excluded[table.rater])
    lap("screening")
    if kept.n_ratings:
        mos = mos_table(table=kept, z=zscores(kept), confidence=settings.confidence)
    else:
        mos = pd.DataFrame({c: [] for c in MOS_COLUMNS})
    combined = all_combined(mos=mos, dimensions=dimensions)
    lap("mos")
    alpha = {}
    for d, name in enumerate(dimensions):
        rows = kept.dimension == d
        if rows.any():
            alpha[name] = krippendorff_alpha_interval(
                units=kept.video[rows], values=kept.score[rows]
            )
    lap("alpha")
    curves = _dimension_curves(kept, settings)
    lap("srcc_curve")
    correlation = dimension_correlation(mos=mos, dimensions=dimensions)
    lap("correlation")
    return AnalysisResult(
        settings=settings,
        dimensions=dimensions,
        mos=mos,
        all_combined=combined,
        exclusions=exclusions,
        alpha=alpha,
        srcc_curve=curves,
        dimension_correlation=correlation,
        n_ratings=table.n_ratings,
        n_ratings_kept=kept.n_ratings,
        n_raters=len(table.raters),
        n_raters_kept=int(np.unique(kept.rater).size),
        n_videos=len(table.videos),
        timings=timings,
    )
