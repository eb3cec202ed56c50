"""Benchmark: the study analysis at GAIA scale against a straightforward reference.

    .venv/bin/python bench/analysis.py            # GAIA scale (9,180 videos, ~960k ratings)
    .venv/bin/python bench/analysis.py --quick    # 1,800 videos, 20 raters
    .venv/bin/python bench/analysis.py --raters 3000   # crowdsourced: as many ratings,
                                                       # 3,000 raters of ~1 session each

A synthetic study with GAIA's shape: 9,180 videos in 31 sessions (30 x 300 + 180), 54
raters, each session rated by 35 of them on 3 dimensions (0-100 sliders, step 1), with a
few planted line clickers. ``--raters N`` gives the crowdsourced shape instead: the same
9,180 videos in sessions of 107, each session rated by 35 of N raters drawn anew per
session (at 3,000, each rater rates about one session: 107 videos, and the SRCC curve has
group sizes up to ~1,500, on the grid of ``srcc_curve.group_sizes``). Then, in the same
run:

(a) the CLI, ``python -m quality analyze ratings.csv --out DIR --draws 100``, in a
    subprocess: wall time (CSV parsing and interpreter start included) and peak memory
    (ru_maxrss of the child); plus ``run_analysis`` in-process for the time per step;
(b) a reference written the obvious way: pandas groupby for line clickers, z-scores and
    MOS; ``krippendorff.alpha`` per dimension on the (rater x video) matrix; for the SRCC
    curve, for every draw each group's MOS by a pandas groupby of its raters' ratings and
    ``scipy.stats.spearmanr``, at the project's group sizes. The reference curve runs only
    the first ``--reference-draws`` draws per group size (same permutations as the project
    code, see ``quality.stats.srcc_curve.rater_permutations``); its time is extrapolated
    linearly to ``draws`` and the project's curve is recomputed with that many draws to
    compare. (With ``--raters``, alpha's reference gives the package per-video value
    counts: its (rater x video) input would make a raters x videos x values array.)
(c) the curve as the project computed it before its grid (``bench/previous_srcc_curve``:
    every n, dense (rater x video) matrices) with ``--previous-draws`` draws (default:
    ``draws``; with ``--raters``, 7: one block of draws at 9,180 videos), extrapolated to
    ``draws``; its points at the grid's sizes are checked equal.

Everything is checked equal (1e-9), ratios are printed, and the last line is one JSON
object of the figures. Targets: CLI under 10 s, >= 5x faster than the reference, alpha
>= 100x faster than the package, CLI peak memory under 2 GB.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.previous_srcc_curve import dense_sums, previous_srcc_curve  # noqa: E402
from quality.stats.analysis import AnalysisSettings, run_analysis  # noqa: E402
from quality.stats.srcc_curve import (  # noqa: E402
    dimension_stream,
    group_sizes,
    rater_permutations,
    srcc_curve,
)

DIMENSIONS = ("subject_quality", "action_completeness", "action_scene_interaction")


def synthetic_study(
    *,
    n_videos: int,
    n_raters: int,
    session_size: int,
    raters_per_session: int,
    n_line_clickers: int,
    seed: int = 7,
) -> pd.DataFrame:
    """Long table of a GAIA-shaped study; the first ``n_line_clickers`` raters click 50 half
    the time. Scores: true quality + rater bias (per session drift) + scaled noise."""
    rng = np.random.default_rng(seed)
    truth = rng.uniform(15, 85, size=(len(DIMENSIONS), n_videos))
    bias = rng.normal(0, 8, size=n_raters)
    scale = rng.uniform(0.6, 1.4, size=n_raters)
    order = rng.permutation(n_videos)
    sessions = [order[s : s + session_size] for s in range(0, n_videos, session_size)]
    parts = []
    for s, videos in enumerate(sessions):
        raters = rng.choice(n_raters, size=raters_per_session, replace=False)
        drift = rng.normal(0, 3, size=raters.size)
        r = np.repeat(raters, videos.size * len(DIMENSIONS))
        d = np.tile(np.repeat(np.arange(len(DIMENSIONS)), videos.size), raters.size)
        v = np.tile(videos, raters.size * len(DIMENSIONS))
        drift_r = np.repeat(drift, videos.size * len(DIMENSIONS))
        noise = rng.normal(0, 12, size=r.size)
        score = truth[d, v] + bias[r] + drift_r + scale[r] * noise
        clicker = (r < n_line_clickers) & (rng.random(r.size) < 0.5)
        score = np.where(clicker, 50.0, score)
        score = np.clip(np.rint(score), 0, 100)
        parts.append(pd.DataFrame({"r": r, "v": v, "d": d, "score": score, "session_id": s}))
    frame = pd.concat(parts, ignore_index=True)
    return pd.DataFrame(
        {
            "rater_id": "r" + frame["r"].astype(str).str.zfill(2),
            "video_id": "v" + frame["v"].astype(str).str.zfill(5),
            "dimension": np.asarray(DIMENSIONS, dtype=object)[frame["d"].to_numpy()],
            "score": frame["score"],
            "session_id": frame["session_id"],
        }
    )


# --------------------------------------------------------------------------- reference


def reference_line_clickers(ratings: pd.DataFrame, share: float, step: float) -> set:
    rounded = np.floor(ratings["score"] / step + 0.5)
    counts = rounded.groupby(ratings["rater_id"]).value_counts()
    top = counts.groupby(level=0).max() / ratings.groupby("rater_id").size()
    return set(top[top > share].index)


def reference_mos(kept: pd.DataFrame, confidence: float) -> pd.DataFrame:
    from scipy import stats

    groups = kept.groupby(["rater_id", "session_id", "dimension"])["score"]
    mean, std = groups.transform("mean"), groups.transform(lambda s: s.std(ddof=0))
    z = ((kept["score"] - mean) / std).where(std > 0, 0.0)
    by = kept.assign(z=z).groupby(["video_id", "dimension"])
    out = by.agg(zmos=("z", "mean"), mos_raw=("score", "mean"), std=("score", "std"))
    out["n"] = by.size()
    out = out.reset_index()
    low = out.groupby("dimension")["zmos"].transform("min")
    high = out.groupby("dimension")["zmos"].transform("max")
    out["mos"] = 100 * (out["zmos"] - low) / (high - low)
    half = stats.t.ppf((1 + confidence) / 2, out["n"] - 1) * out["std"] / np.sqrt(out["n"])
    out["ci95_low_raw"] = out["mos_raw"] - half
    out["ci95_high_raw"] = out["mos_raw"] + half
    return out


def reference_alpha(kept: pd.DataFrame, *, value_counts: bool = False) -> dict[str, float]:
    import krippendorff

    alpha = {}
    for dimension, part in kept.groupby("dimension"):
        if value_counts:  # many raters: (video x value) counts instead of (rater x video)
            counts = pd.crosstab(part["video_id"], part["score"])
            options = dict(value_counts=counts.to_numpy(), value_domain=counts.columns.to_numpy())
        else:
            matrix = part.pivot(index="rater_id", columns="video_id", values="score")
            options = dict(reliability_data=matrix.to_numpy())
        alpha[dimension] = float(krippendorff.alpha(**options, level_of_measurement="interval"))
    return alpha


def reference_srcc(kept: pd.DataFrame, *, draws: int, seed: int, dimensions: list) -> dict:
    """Per dimension and n: the list of per-draw SRCCs (scipy.stats.spearmanr in a loop)."""
    from scipy import stats

    result = {}
    for dimension in dimensions:
        stream = dimension_stream(dimension)
        part = kept[kept["dimension"] == dimension]
        raters = np.unique(part["rater_id"].to_numpy())
        perm = rater_permutations(n_raters=raters.size, draws=draws, seed=seed, stream=stream)
        result[dimension] = {}
        for n in group_sizes(raters.size // 2):
            values = []
            for p in perm:
                mos_a = part[part["rater_id"].isin(raters[p[0 : 2 * n : 2]])].groupby("video_id")
                mos_b = part[part["rater_id"].isin(raters[p[1 : 2 * n : 2]])].groupby("video_id")
                both = pd.concat([mos_a["score"].mean(), mos_b["score"].mean()], axis=1).dropna()
                if len(both) >= 2:
                    rho = stats.spearmanr(both.iloc[:, 0], both.iloc[:, 1]).statistic
                    if np.isfinite(rho):
                        values.append(rho)
            result[dimension][n] = values
    return result


# --------------------------------------------------------------------------- run


def _dimension_codes(kept: pd.DataFrame, dimension: str) -> dict:
    """srcc_curve's rating arguments for one dimension of the long table."""
    part = kept[kept["dimension"] == dimension]
    raters, rater = np.unique(part["rater_id"].to_numpy(), return_inverse=True)
    videos, video = np.unique(part["video_id"].to_numpy(), return_inverse=True)
    score = part["score"].to_numpy(float)
    return dict(rater=rater, video=video, score=score, n_raters=raters.size, n_videos=videos.size)


def previous_curves(kept: pd.DataFrame, *, draws: int, seed: int) -> tuple[dict, float, float]:
    """The every-n dense curve per dimension, its time (the dense matrices included, the
    coding of ids not) and the largest pair of dense matrices in MB."""
    curves, seconds, largest = {}, 0.0, 0.0
    for dimension in DIMENSIONS:
        codes = _dimension_codes(kept, dimension)
        clock = time.perf_counter()
        sums, counts = dense_sums(**codes)
        curves[dimension] = previous_srcc_curve(
            sums=sums, counts=counts, draws=draws, seed=seed, stream=dimension_stream(dimension)
        )
        seconds += time.perf_counter() - clock
        largest = max(largest, (sums.nbytes + counts.nbytes) / 2**20)
        del sums, counts
    return curves, seconds, largest


def _close(a, b, tol=1e-9) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=0, atol=tol, equal_nan=True))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--draws", type=int, default=100)
    parser.add_argument("--reference-draws", type=int, default=None)
    parser.add_argument("--raters", type=int, default=None, help="crowdsourced shape")
    parser.add_argument("--previous-draws", type=int, default=None)
    args = parser.parse_args()
    if args.quick:
        shape = dict(n_videos=1800, n_raters=20, session_size=300, raters_per_session=12)
        ref_draws = args.reference_draws or 5
    elif args.raters:
        shape = dict(n_videos=9180, n_raters=args.raters, session_size=107, raters_per_session=35)
        ref_draws = args.reference_draws or 2
    else:
        shape = dict(n_videos=9180, n_raters=54, session_size=300, raters_per_session=35)
        ref_draws = args.reference_draws or 2
    settings = AnalysisSettings(draws=args.draws)
    clock = time.perf_counter()
    ratings = synthetic_study(**shape, n_line_clickers=4)
    print(
        f"synthetic study: {len(ratings):,} ratings, {shape} ({time.perf_counter() - clock:.1f} s)"
    )

    with tempfile.TemporaryDirectory() as tmp:
        csv_path, out = Path(tmp) / "ratings.csv", Path(tmp) / "out"
        ratings.to_csv(csv_path, index=False)
        command = [sys.executable, "-m", "quality", "analyze", str(csv_path), "--out", str(out)]
        command += ["--draws", str(args.draws)]
        clock = time.perf_counter()
        subprocess.run(command, check=True, cwd=Path(__file__).resolve().parent.parent)
        cli_s = time.perf_counter() - clock
        cli_peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        cli_mos = pd.read_csv(out / "mos.csv", dtype={"video_id": str})
        summary = json.loads((out / "summary.json").read_text())
    print(f"(a) CLI analysis: {cli_s:.2f} s, peak memory {cli_peak_mb:.0f} MB")

    result = run_analysis(ratings=ratings, settings=settings)
    steps = ", ".join(f"{k} {v:.2f}" for k, v in result.timings.items())
    print(f"    run_analysis in-process: {sum(result.timings.values()):.2f} s ({steps})")

    # (b) reference
    ref_t: dict[str, float] = {}
    clock = time.perf_counter()
    clickers = reference_line_clickers(ratings, settings.line_click_share, settings.slider_step)
    kept = ratings[~ratings["rater_id"].isin(clickers)]
    ref_t["screening"] = time.perf_counter() - clock
    clock = time.perf_counter()
    ref_mos = reference_mos(kept, settings.confidence)
    ref_t["mos"] = time.perf_counter() - clock
    clock = time.perf_counter()
    ref_alpha = reference_alpha(kept, value_counts=bool(args.raters))
    ref_t["alpha"] = time.perf_counter() - clock
    clock = time.perf_counter()
    ref_srcc = reference_srcc(
        kept, draws=ref_draws, seed=settings.seed, dimensions=list(DIMENSIONS)
    )
    ref_t["srcc_curve_measured"] = time.perf_counter() - clock
    ref_t["srcc_curve"] = ref_t["srcc_curve_measured"] * args.draws / ref_draws
    reference_s = ref_t["screening"] + ref_t["mos"] + ref_t["alpha"] + ref_t["srcc_curve"]
    print(
        f"(b) reference: {reference_s:.1f} s (screening {ref_t['screening']:.2f}, mos "
        f"{ref_t['mos']:.2f}, alpha {ref_t['alpha']:.2f}, srcc curve "
        f"{ref_t['srcc_curve_measured']:.1f} s for {ref_draws} draws -> "
        f"{ref_t['srcc_curve']:.0f} s extrapolated to {args.draws})"
    )
    previous_draws = args.previous_draws or (min(7, args.draws) if args.raters else args.draws)
    previous, previous_measured_s, previous_mb = previous_curves(
        kept, draws=previous_draws, seed=settings.seed
    )
    previous_s = previous_measured_s * args.draws / previous_draws
    srcc_s = result.timings["srcc_curve"]
    print(
        f"(c) previous every-n dense curve: {previous_measured_s:.1f} s for {previous_draws} draws "
        f"-> {previous_s:.1f} s extrapolated to {args.draws}, dense matrices up to "
        f"{previous_mb:.0f} MB per dimension"
    )
    print(
        f"    SRCC curve: {srcc_s:.2f} s at {args.draws} draws, "
        f"{ref_t['srcc_curve'] / srcc_s:.0f}x the reference, {previous_s / srcc_s:.1f}x "
        f"the previous; sizes per dimension "
        f"{[len(result.srcc_curve[d]) for d in DIMENSIONS]}"
    )

    # identical?
    checks = {"line_clickers": set(summary["line_clickers"]) == clickers}
    merged = cli_mos.merge(ref_mos, on=["video_id", "dimension"], suffixes=("", "_ref"))
    checks["mos_rows"] = len(merged) == len(cli_mos) == len(ref_mos)
    for column in ("mos", "mos_raw", "std", "n", "ci95_low_raw", "ci95_high_raw"):
        checks[f"mos.{column}"] = _close(merged[column], merged[f"{column}_ref"], 1e-9)
    checks["alpha"] = all(
        math.isclose(summary["alpha"][d], ref_alpha[d], rel_tol=0, abs_tol=1e-9) for d in DIMENSIONS
    )
    srcc_ok = True
    for dimension in DIMENSIONS:
        stream = dimension_stream(dimension)
        mine = srcc_curve(
            **_dimension_codes(kept, dimension), draws=ref_draws, seed=settings.seed, stream=stream
        )
        srcc_ok &= list(mine) == list(ref_srcc[dimension])
        for n, values in ref_srcc[dimension].items():
            srcc_ok &= mine[n]["draws"] == len(values)
            expected = float(np.mean(values)) if values else math.nan  # no defined draw
            srcc_ok &= _close(mine[n]["mean"], expected)
        again = srcc_curve(
            **_dimension_codes(kept, dimension),
            draws=previous_draws,
            seed=settings.seed,
            stream=stream,
        )
        srcc_ok &= all(
            _close(list(previous[dimension][n].values()), list(point.values()), 0)
            for n, point in again.items()
        )
    checks["srcc_curve"] = bool(srcc_ok)
    identical = all(checks.values())
    print("checks:", "all identical" if identical else {k: v for k, v in checks.items() if not v})

    alpha_s = result.timings["alpha"]
    figures = {
        "bench": "analysis",
        "quick": args.quick,
        "crowd": bool(args.raters),
        "ratings": len(ratings),
        "videos": shape["n_videos"],
        "raters": shape["n_raters"],
        "draws": args.draws,
        "reference_draws": ref_draws,
        "previous_draws": previous_draws,
        "cli_s": round(cli_s, 3),
        "cli_peak_mb": round(cli_peak_mb, 1),
        "run_analysis_s": round(sum(result.timings.values()), 3),
        "steps_s": {k: round(v, 4) for k, v in result.timings.items()},
        "reference_s": round(reference_s, 2),
        "reference_steps_s": {k: round(v, 3) for k, v in ref_t.items()},
        "speedup_cli_vs_reference": round(reference_s / cli_s, 1),
        "speedup_alpha_vs_package": round(ref_t["alpha"] / alpha_s, 1),
        "srcc_curve_s": round(srcc_s, 3),
        "srcc_sizes": {d: len(result.srcc_curve[d]) for d in DIMENSIONS},
        "previous_srcc_curve_s": round(previous_s, 1),
        "previous_srcc_curve_measured_s": round(previous_measured_s, 2),
        "previous_dense_mb": round(previous_mb, 1),
        "speedup_srcc_vs_reference": round(ref_t["srcc_curve"] / srcc_s, 1),
        "speedup_srcc_vs_previous": round(previous_s / srcc_s, 1),
        "line_clickers": sorted(clickers),
        "alpha": {d: round(v, 6) for d, v in summary["alpha"].items()},
        "srcc_at_max_n": {
            d: summary["srcc_curve"][d][max(summary["srcc_curve"][d], key=int)] for d in DIMENSIONS
        },
        "identical": identical,
        "targets_met": {
            "cli_under_10s": cli_s < 10,
            "cli_5x_reference": reference_s / cli_s >= 5,
            "alpha_100x_package": ref_t["alpha"] / alpha_s >= 100,
            "peak_under_2gb": cli_peak_mb < 2048,
        },
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
