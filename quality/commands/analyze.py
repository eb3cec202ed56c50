"""``python -m quality analyze RATINGS.csv --out DIR``: the study analysis from a CSV.

Reads the long ratings CSV (``rater_id,video_id,dimension,score[,session_id]``), runs
``quality.stats.analysis.run_analysis`` and writes DIR/mos.csv, DIR/all_combined.csv and
DIR/summary.json (all at once: quality.commands.io).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from quality.commands.io import add_out, bad_input, csv_text, finish, json_ready, left_out
from quality.stats.analysis import AnalysisSettings, run_analysis
from quality.stats.mos import MOS_COLUMNS
from quality.stats.ratings import RatingsError
from quality.stats.ratings_csv import read_ratings_csv
from quality.stats.subjective.registry import SUBJECTIVE_MODELS

NAME = "analyze"
HELP = "MOS, alpha, SRCC curve from a ratings CSV"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "ratings",
        type=Path,
        help="long CSV: rater_id,video_id,dimension,score[,session_id] (a raw ratings.csv "
        "export as it is: rows with a rule in its excluded column are left out)",
    )
    add_out(parser, writes=("mos.csv", "all_combined.csv", "summary.json", "subjective_*.csv"))
    defaults = AnalysisSettings()
    parser.add_argument(
        "--draws",
        type=int,
        default=defaults.draws,
        help="bootstrap draws per group size of the SRCC curve (default %(default)s)",
    )
    parser.add_argument(
        "--seed", type=int, default=defaults.seed, help="seed of those draws (default %(default)s)"
    )
    parser.add_argument(
        "--line-click-share",
        type=float,
        default=defaults.line_click_share,
        help="exclude a rater whose most frequent score (rounded to --slider-step) covers "
        "MORE than this share of their ratings; 1 turns the rule off (default %(default)s, "
        "GAIA's)",
    )
    parser.add_argument(
        "--slider-step",
        type=float,
        default=defaults.slider_step,
        help="scores are rounded to this step before a rater's equal scores are counted "
        "(default %(default)s)",
    )
    parser.add_argument(
        "--srcc-max-n",
        type=int,
        default=defaults.srcc_max_n,
        help="largest group size of the SRCC curve (default: half the raters)",
    )
    parser.add_argument(
        "--confidence",
        type=float,
        default=defaults.confidence,
        help="level of the MOS intervals (the ci95_*_raw columns keep their name) and of "
        "the SRCC curve's percentile intervals (default %(default)s)",
    )
    parser.add_argument(
        "--subjective-model",
        action="append",
        default=[],
        metavar="NAME",
        help="also fit a subjective model per dimension (mos, zscore_mos, bt500, p913, "
        "p910_annex_e, mle); writes DIR/subjective_NAME.csv; repeatable",
    )


def _check_settings(args: argparse.Namespace) -> AnalysisSettings:
    if args.draws < 1:
        raise RatingsError("--draws must be at least 1")
    if not 0.0 < args.line_click_share <= 1.0:
        raise RatingsError("--line-click-share must be in (0, 1]")
    if not 0.0 < args.slider_step < math.inf:
        raise RatingsError("--slider-step must be a positive finite number")
    if args.seed < 0:
        raise RatingsError("--seed must be 0 or more")
    if args.srcc_max_n is not None and args.srcc_max_n < 1:
        raise RatingsError("--srcc-max-n must be at least 1")
    if not 0.0 < args.confidence < 1.0:
        raise RatingsError("--confidence must be in (0, 1)")
    unknown = [name for name in args.subjective_model if name not in SUBJECTIVE_MODELS]
    if unknown:  # before the analysis, which may take a while, rather than after it
        known = ", ".join(SUBJECTIVE_MODELS)
        raise RatingsError(f"unknown subjective model {unknown[0]!r}; known: {known}")
    return AnalysisSettings(
        line_click_share=args.line_click_share,
        slider_step=args.slider_step,
        draws=args.draws,
        seed=args.seed,
        srcc_max_n=args.srcc_max_n,
        confidence=args.confidence,
    )


def subjective_model_csv(ratings, name: str) -> str:
    """One row per (video, dimension) with the model's quality score and its std (NaN,
    an empty cell, where the model gives none), fitted on every rating read.

    Raises ValueError where the fit gives a video no score (the MLE model on ratings
    that are all equal, or on one video: its rater inconsistency is zero or cannot be
    told from the content's), rather than writing an empty quality score."""
    import numpy as np
    import pandas as pd

    from quality.stats.subjective import fit_subjective_model, pivot_scores

    frames = []
    for dimension, part in ratings.groupby("dimension", observed=True, sort=False):
        matrix = pivot_scores(
            rater_ids=part["rater_id"].astype(str).to_numpy(),
            video_ids=part["video_id"].astype(str).to_numpy(),
            scores=part["score"].to_numpy(float),
        )
        fit = fit_subjective_model(name=name, scores=matrix.scores)
        if np.isnan(fit.quality_scores).any():
            video = matrix.video_ids[int(np.argmax(np.isnan(fit.quality_scores)))]
            why = (
                ": every score is equal"
                if part["score"].nunique() == 1
                else ": it has one video only"
                if len(matrix.video_ids) == 1
                else ""
            )
            raise ValueError(
                f"--subjective-model {name} gives no quality score for video {video!r}: "
                f"the model cannot be fitted on dimension {dimension!r}{why}; leave the "
                "model out, or use mos"
            )
        std = fit.quality_scores_std
        frames.append(
            pd.DataFrame(
                {
                    "video_id": matrix.video_ids,
                    "dimension": dimension,
                    "quality_score": fit.quality_scores,
                    "quality_score_std": std if std is not None else np.nan,
                }
            )
        )
    return csv_text(pd.concat(frames))


def run(args: argparse.Namespace) -> int:
    try:
        settings = _check_settings(args)
        ratings = read_ratings_csv(path=args.ratings)
        result = run_analysis(ratings=ratings, settings=settings)
    except (RatingsError, FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        return bad_input(exc)
    try:
        models = {name: subjective_model_csv(ratings, name) for name in args.subjective_model}
    except ValueError as exc:
        return bad_input(exc)
    summary = json_ready(result.summary_dict())
    files = {
        **{f"subjective_{name}.csv": text for name, text in models.items()},
        "mos.csv": csv_text(result.mos, MOS_COLUMNS),
        "all_combined.csv": csv_text(result.all_combined),
        "summary.json": json.dumps(summary, indent=1, allow_nan=False) + "\n",
    }
    return finish(
        args.out,
        files,
        f"{result.n_ratings_kept} of {result.n_ratings} ratings kept "
        f"({len(result.exclusions)} rater(s) excluded)"
        f"{left_out(ratings)}; wrote {args.out}",
        own=["subjective_*.csv"],
    )
