"""``python -m quality analyze RATINGS.csv --out DIR``: the study analysis from a CSV.

Reads the long ratings CSV (``rater_id,video_id,dimension,score[,session_id]``), runs
``quality.stats.analysis.run_analysis`` and writes DIR/mos.csv, DIR/all_combined.csv and
DIR/summary.json. Files are written only after everything was computed, into a temporary
folder beside DIR, then moved in (one rename when DIR is new, else one atomic replace per
file), so a failed run leaves nothing partial in DIR. Their text cells follow the web
exports' rule (quality/export.py): one that a spreadsheet would run as a formula (a
dimension key ``=HYPERLINK(...)``, a video id ``@v1``) gets a leading single quote
(``spreadsheet_safe``); numbers, negative ones too, are written as numbers.

Exit codes: 0 done, 2 unusable input or arguments (message on stderr), 1 output failure.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from quality.stats.analysis import AnalysisSettings, run_analysis
from quality.stats.mos import MOS_COLUMNS
from quality.stats.ratings import RatingsError
from quality.stats.ratings_csv import read_ratings_csv, spreadsheet_safe

EXIT_BAD_INPUT = 2
EXIT_OUTPUT_FAILED = 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m quality", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    analyze = commands.add_parser("analyze", help="MOS, alpha, SRCC curve from a ratings CSV")
    analyze.add_argument("ratings", type=Path, help="long CSV: rater_id,video_id,dimension,score")
    analyze.add_argument("--out", type=Path, required=True, help="output folder")
    defaults = AnalysisSettings()
    analyze.add_argument("--draws", type=int, default=defaults.draws)
    analyze.add_argument("--seed", type=int, default=defaults.seed)
    analyze.add_argument("--line-click-share", type=float, default=defaults.line_click_share)
    analyze.add_argument("--slider-step", type=float, default=defaults.slider_step)
    analyze.add_argument("--srcc-max-n", type=int, default=defaults.srcc_max_n)
    analyze.add_argument("--confidence", type=float, default=defaults.confidence)
    analyze.add_argument(
        "--subjective-model",
        action="append",
        default=[],
        metavar="NAME",
        help="also fit a subjective model per dimension (mos, zscore_mos, bt500, p913, "
        "p910_annex_e, mle); writes DIR/subjective_NAME.csv; repeatable",
    )
    return parser


def _json_ready(value):
    """JSON has no NaN or infinity: undefined statistics become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_ready(v) for v in value]
    return value


def _csv_text(frame, columns: Sequence[str] | None = None) -> str:
    """``frame`` (only ``columns``, if given) as CSV, text cells made safe for spreadsheets
    (``spreadsheet_safe``, the web exports' rule), numbers as they are."""
    frame = (frame if columns is None else frame[list(columns)]).copy()
    for name in frame.columns:
        if frame[name].dtype.kind not in "biufc":  # text (object, string or category)
            frame[name] = frame[name].map(
                lambda value: spreadsheet_safe(value) if isinstance(value, str) else value
            )
    return frame.to_csv(index=False)


def _check_settings(args: argparse.Namespace) -> AnalysisSettings:
    if args.draws < 1:
        raise RatingsError("--draws must be at least 1")
    if not 0.0 < args.line_click_share <= 1.0:
        raise RatingsError("--line-click-share must be in (0, 1]")
    if not args.slider_step > 0:
        raise RatingsError("--slider-step must be positive")
    if not 0.0 < args.confidence < 1.0:
        raise RatingsError("--confidence must be in (0, 1)")
    return AnalysisSettings(
        line_click_share=args.line_click_share,
        slider_step=args.slider_step,
        draws=args.draws,
        seed=args.seed,
        srcc_max_n=args.srcc_max_n,
        confidence=args.confidence,
    )


def _write_outputs(out: Path, files: dict[str, str]) -> None:
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for name, text in files.items():
            (staging / name).write_text(text, encoding="utf-8")
        if not out.exists():
            os.rename(staging, out)
            return
        for name in files:
            os.replace(staging / name, out / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def subjective_model_csv(ratings, name: str) -> str:
    """One row per (video, dimension) with the model's quality score and its std, plus
    each rater's bias and inconsistency where the model estimates them."""
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
    return _csv_text(pd.concat(frames))


def analyze(args: argparse.Namespace) -> int:
    try:
        settings = _check_settings(args)
        ratings = read_ratings_csv(path=args.ratings)
        result = run_analysis(ratings=ratings, settings=settings)
    except (RatingsError, FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        models = {name: subjective_model_csv(ratings, name) for name in args.subjective_model}
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    summary = _json_ready(result.summary_dict())
    files = {
        **{f"subjective_{name}.csv": text for name, text in models.items()},
        "mos.csv": _csv_text(result.mos, MOS_COLUMNS),
        "all_combined.csv": _csv_text(result.all_combined),
        "summary.json": json.dumps(summary, indent=1, allow_nan=False) + "\n",
    }
    try:
        _write_outputs(args.out, files)
    except OSError as exc:
        print(f"error: cannot write {args.out}: {exc}", file=sys.stderr)
        return EXIT_OUTPUT_FAILED
    print(
        f"{result.n_ratings_kept} of {result.n_ratings} ratings kept "
        f"({len(result.exclusions)} rater(s) excluded); wrote {args.out}"
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "analyze":
        return analyze(args)
    return EXIT_BAD_INPUT  # pragma: no cover (argparse requires a command)
