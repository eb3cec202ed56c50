"""bench/adaptive.py, part 1: GAIA-shaped single-stimulus studies with a known truth
(rater model fitted on the public sets), every stopping rule against the fixed design
of 35 ratings per video and against an even design at the same budget."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from scipy import special, stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.subjective_models import DATA, DATASETS  # noqa: E402
from quality.stats.adaptive.confidence_sequence import AnytimeConfidenceSequence  # noqa: E402
from quality.stats.adaptive.group_sequential import GroupSequentialPlan  # noqa: E402
from quality.stats.adaptive.repeated_t import RepeatedTInterval  # noqa: E402
from quality.stats.adaptive.simulate import (  # noqa: E402
    RaterModelSource,
    run_study,
)
from quality.stats.adaptive.stopping import StoppingRule  # noqa: E402
from quality.stats.adaptive.two_stage import TwoStagePlan  # noqa: E402
from quality.stats.subjective import fit_mle, read_scores_csv  # noqa: E402

FIXED = 35
FIRST_STAGE = 15  # Stein's first stage (the two-stage plan's min_ratings)
SD_RANGE = (8.0, 25.0)  # GAIA's per-video SD on the 0-100 slider
SESSION = 10  # videos per rater session (short: the hard case for per-session z-scoring)
SESSION_SIZES = (10, 50, 300)  # part 1c: the same against the session's size (GAIA: 300)
CONCURRENT = 20  # sessions served between two looks of the rule (ratings in flight)


def t_half_width(sd: float, n: int, alpha: float = 0.05) -> float:
    return float(special.stdtrit(n - 1, 1 - alpha / 2) * sd / np.sqrt(n))


# 1. GAIA-shaped studies -------------------------------------------------------------------


def rater_model_from_public_sets() -> dict:
    """SUREAL MLE (the project's fit_mle) on each public set: rater bias sd, the raters'
    inconsistencies, and the per-video content ambiguity by moments (the project's MLE
    is content-oblivious): a_i^2 = max(0, mean_j r_ij^2 - mean_j v_j^2)."""
    biases, inconsistencies, ambiguities = [], [], []
    for name in DATASETS.values():
        matrix = read_scores_csv(path=DATA / name).scores
        fit = fit_mle(scores=matrix)
        present = ~np.isnan(matrix)
        residual = matrix - fit.quality_scores[:, None] - fit.observer_bias[None, :]
        v2 = np.where(present, fit.observer_inconsistency[None, :] ** 2, np.nan)
        ambiguity = np.sqrt(np.maximum(np.nanmean(residual**2, 1) - np.nanmean(v2, 1), 0))
        biases.append(fit.observer_bias.std())
        inconsistencies.append(fit.observer_inconsistency)
        ambiguities.append(ambiguity)
    return {
        "bias_sd": float(np.mean(biases)),
        "inconsistency": np.concatenate(inconsistencies),
        "ambiguity": np.concatenate(ambiguities),
    }


def gaia_source(fitted: dict, *, videos: int, rng: np.random.Generator) -> RaterModelSource:
    rater_sd = np.sqrt(fitted["bias_sd"] ** 2 + np.mean(fitted["inconsistency"] ** 2))
    scale = SD_RANGE[0] / rater_sd  # the raters' own noise is the smallest per-video SD
    bias_sd = fitted["bias_sd"] * scale
    pool = fitted["inconsistency"] * scale
    # A video's ambiguity is shared by its dimensions, with a little jitter per dimension.
    level = rng.uniform(*SD_RANGE, size=videos)
    sd = np.clip(level + rng.normal(0, 1.5, size=(3, videos)), *SD_RANGE)
    ambiguity = np.sqrt(np.maximum(sd**2 - (SD_RANGE[0]) ** 2, 0.0))
    return RaterModelSource(
        quality=rng.uniform(15, 85, size=(3, videos)),
        ambiguity=ambiguity,
        bias_sd=bias_sd,
        inconsistency=pool,
    )


def zscored_mos(run) -> np.ndarray:
    """GAIA's Z-scored MOS: each rater's (session's) scores z-scored per dimension, then
    the mean per video. (dimensions, videos)."""
    dims, videos = run.n.shape
    out = np.empty((dims, videos))
    for d in range(dims):
        score = run.scores[d]
        count = np.bincount(run.rater)
        mean = np.bincount(run.rater, weights=score) / count
        deviation = score - mean[run.rater]
        sd = np.sqrt(np.bincount(run.rater, weights=deviation**2) / count)
        z = np.where(sd[run.rater] > 0, deviation / np.where(sd > 0, sd, 1)[run.rater], 0.0)
        out[d] = np.bincount(run.video, weights=z, minlength=videos) / np.maximum(
            np.bincount(run.video, minlength=videos), 1
        )
    return out


def raw_mos(run) -> np.ndarray:
    """The plain MOS: the mean of each video's raw scores. (dimensions, videos)."""
    count = np.maximum(np.bincount(run.video, minlength=run.n.shape[1]), 1)
    return np.stack(
        [np.bincount(run.video, weights=s, minlength=count.size) / count for s in run.scores]
    )


def closeness(estimate: np.ndarray, truth: np.ndarray) -> dict:
    """Mean over dimensions of SRCC and of RMSE after a least-squares line onto the truth."""
    srcc, rmse = [], []
    for e, t in zip(estimate, truth, strict=True):
        srcc.append(stats.spearmanr(e, t).statistic)
        slope, intercept = np.polyfit(e, t, 1)
        rmse.append(np.sqrt(np.mean((slope * e + intercept - t) ** 2)))
    return {"srcc": round(float(np.mean(srcc)), 4), "rmse": round(float(np.mean(rmse)), 3)}


def summarise(run, truth: np.ndarray, *, target: float, fixed: int) -> dict:
    half = (run.upper - run.lower) / 2
    used = run.ratings_used / run.n.shape[1]
    return {
        "ratings_per_video": round(used, 2),
        "saving_vs_fixed": round(1 - used / fixed, 3),
        "coverage": round(float(run.covered(truth).mean()), 4),
        "reached_target": round(float((half <= target + 1e-9).all(axis=0).mean()), 3),
        "max_ratings": int(run.n[0].max()),
    }


def even_at_budget(source, truth, budget: float, seed: int, session: int = SESSION) -> dict:
    """Closeness to the truth of the Z-scored MOS (``zmos``) and of the plain MOS
    (``raw_mos``) of a fixed design spending exactly ``budget`` ratings per video on
    average: the designs with floor and ceil(budget) for every video, the squared errors
    and SRCC interpolated linearly in 1 / n between them (the error variance of a mean
    goes as 1 / n), so neither side gets the rounding."""
    low, high = max(2, int(np.floor(budget))), max(2, int(np.ceil(budget)))
    figures = []
    for n in sorted({low, high}):
        even = run_study(
            source=source,
            plan=RepeatedTInterval(),
            rule=StoppingRule(target_half_width=1e-9, min_ratings=n, max_ratings=n),
            rng=np.random.default_rng(seed),
            session_size=session,
            concurrent_sessions=CONCURRENT,
        )
        figures.append(
            {
                "zmos": closeness(zscored_mos(even), truth),
                "raw_mos": closeness(raw_mos(even), truth),
            }
        )
    if len(figures) == 1:
        return figures[0]
    share = (1 / budget - 1 / low) / (1 / high - 1 / low)

    def between(first: dict, second: dict) -> dict:
        squared = (1 - share) * first["rmse"] ** 2 + share * second["rmse"] ** 2
        srcc = (1 - share) * first["srcc"] + share * second["srcc"]
        return {"srcc": round(srcc, 4), "rmse": round(float(np.sqrt(squared)), 3)}

    return {key: between(figures[0][key], figures[1][key]) for key in ("zmos", "raw_mos")}


def part_gaia(args, rng) -> dict:
    fitted = rater_model_from_public_sets()
    source = gaia_source(fitted, videos=args.videos, rng=rng)
    truth = source.true_means()
    target = t_half_width(SD_RANGE[1], FIXED)
    cap = 150
    looks = (10, 15, 20, 25, 30, 35, 40, 45, 50)
    plans = {
        "fixed35": (
            RepeatedTInterval(),
            StoppingRule(target_half_width=1e-9, min_ratings=FIXED, max_ratings=FIXED),
        ),
        "anytime_cs": (
            AnytimeConfidenceSequence(),
            StoppingRule(target_half_width=target, max_ratings=cap),
        ),
        "group_sequential_obf": (
            GroupSequentialPlan(looks=looks, spending="obrien_fleming"),
            StoppingRule(target_half_width=target, max_ratings=looks[-1]),
        ),
        "group_sequential_pocock": (
            GroupSequentialPlan(looks=looks, spending="pocock"),
            StoppingRule(target_half_width=target, max_ratings=looks[-1]),
        ),
        "two_stage_stein": (
            TwoStagePlan(first_stage=FIRST_STAGE),
            StoppingRule(target_half_width=target, min_ratings=FIRST_STAGE, max_ratings=cap),
        ),
        "naive_t": (RepeatedTInterval(), StoppingRule(target_half_width=target, max_ratings=cap)),
    }
    figures = {
        "videos": args.videos,
        "dimensions": 3,
        "target_half_width": round(target, 3),
        "rater_model": {
            "bias_sd": round(float(source.bias_sd), 2),
            "inconsistency_median": round(float(np.median(source.inconsistency)), 2),
            "public_sets_ambiguity_median_5pt": round(float(np.median(fitted["ambiguity"])), 3),
        },
        "rules": {},
    }
    for name, (plan, rule) in plans.items():
        start = time.perf_counter()
        run = run_study(
            source=source,
            plan=plan,
            rule=rule,
            rng=np.random.default_rng(args.seed),
            session_size=SESSION,
            concurrent_sessions=CONCURRENT,
        )
        entry = summarise(run, truth, target=target, fixed=FIXED)
        entry["zmos"] = closeness(zscored_mos(run), truth)
        entry["raw_mos"] = closeness(raw_mos(run), truth)
        if name == "fixed35":
            half = (run.upper - run.lower) / 2
            entry["t_half_width_p50_p95_max"] = [
                round(float(q), 2) for q in np.quantile(half, [0.5, 0.95, 1.0])
            ]
        else:
            even = even_at_budget(source, truth, entry["ratings_per_video"], args.seed + 1)
            entry["zmos_fixed_equal_budget"] = even["zmos"]
            entry["raw_mos_fixed_equal_budget"] = even["raw_mos"]
        entry["seconds"] = round(time.perf_counter() - start, 1)
        figures["rules"][name] = entry
    figures["one_dimension"] = part_gaia_one_dimension(args, fitted, plans, target)
    figures["zmos_by_session_size"] = zmos_by_session_size(args, fitted, target)
    return figures


def zmos_by_session_size(args, fitted, target) -> dict:
    """Stein's two-stage plan against the fixed design spending the same budget evenly,
    per session size, over ``args.session_repeats`` simulated studies (new videos and
    raters each): its coverage of the true means (all intervals of all studies), and the
    mean paired difference, adaptive minus even, of the Z-scored MOS's RMSE and SRCC and
    of the plain MOS's RMSE, with standard errors over the studies.

    Why the size matters: per-session z-scoring adds to every rating an error the
    stopping rule cannot see (it looks at raw scores), the session's mean and SD being
    estimated on its own videos, whose qualities differ (variance tau^2, about the
    qualities' variance over the session's size). To first order a video's Z-scored
    mean then errs with variance (s_i^2 + tau^2) / n_i. Stopping at equal width gives
    n_i proportional to s_i^2, hence a mean error of mean(s^2) (1 + tau^2 mean(1/s^2)) / n
    against the even design's (mean(s^2) + tau^2) / n at the same mean n: worse by
    tau^2 (mean(s^2) mean(1/s^2) - 1) / n >= 0 (Jensen), which vanishes as sessions grow.
    """
    out = {}
    plan = TwoStagePlan(first_stage=FIRST_STAGE)
    rule = StoppingRule(target_half_width=target, min_ratings=FIRST_STAGE, max_ratings=150)
    for session in SESSION_SIZES:
        rows = []
        for rep in range(args.session_repeats):
            seed = args.seed + 1000 + rep
            source = gaia_source(fitted, videos=args.videos, rng=np.random.default_rng(seed))
            truth = source.true_means()
            run = run_study(
                source=source,
                plan=plan,
                rule=rule,
                rng=np.random.default_rng(seed + 1),
                session_size=session,
                concurrent_sessions=CONCURRENT,
            )
            used = run.ratings_used / run.n.shape[1]
            zmos, raw = closeness(zscored_mos(run), truth), closeness(raw_mos(run), truth)
            even = even_at_budget(source, truth, used, seed + 2, session=session)
            rows.append(
                (
                    used,
                    float(run.covered(truth).mean()),
                    zmos["rmse"] - even["zmos"]["rmse"],
                    zmos["srcc"] - even["zmos"]["srcc"],
                    raw["rmse"] - even["raw_mos"]["rmse"],
                )
            )
        table = np.array(rows)
        se = table.std(axis=0, ddof=1) / np.sqrt(len(rows)) if len(rows) > 1 else table[0] * np.nan
        coverage = float(table[:, 1].mean())
        intervals = len(rows) * 3 * args.videos
        out[str(session)] = {
            "ratings_per_video": round(float(table[:, 0].mean()), 2),
            "coverage": [
                round(coverage, 4),
                round(np.sqrt(coverage * (1 - coverage) / intervals), 4),
            ],
            "zmos_rmse_minus_even": [round(float(table[:, 2].mean()), 3), round(float(se[2]), 3)],
            "zmos_srcc_minus_even": [round(float(table[:, 3].mean()), 4), round(float(se[3]), 4)],
            "raw_rmse_minus_even": [round(float(table[:, 4].mean()), 3), round(float(se[4]), 3)],
        }
    return out


def part_gaia_one_dimension(args, fitted, plans, target) -> dict:
    """The same raters and videos rated on ONE dimension (3 x as many videos, the same
    number of intervals): the stop is then decided on each interval's own data, where
    looking after every rating hurts most. With three dimensions a video stops when its
    widest dimension is narrow, and the other two, collected past their own stop, cover
    at about the nominal rate, which hides most of the naive rule's shortfall."""
    source = gaia_source(fitted, videos=3 * args.videos, rng=np.random.default_rng(args.seed + 7))
    one = RaterModelSource(
        quality=source.quality[:1],
        ambiguity=source.ambiguity[:1],
        bias_sd=source.bias_sd,
        inconsistency=source.inconsistency,
    )
    truth = one.true_means()
    out = {"videos": 3 * args.videos}
    for name in ("fixed35", "group_sequential_obf", "two_stage_stein", "naive_t"):
        plan, rule = plans[name]
        run = run_study(
            source=one,
            plan=plan,
            rule=rule,
            rng=np.random.default_rng(args.seed + 8),
            session_size=SESSION,
            concurrent_sessions=CONCURRENT,
        )
        out[name] = summarise(run, truth, target=target, fixed=FIXED)
    return out


def print_gaia(gaia: dict, args) -> None:
    print(
        f"1. GAIA-shaped: {gaia['videos']} videos x 3 dimensions, target half-width "
        f"{gaia['target_half_width']} (t at 35 ratings, SD 25)"
    )
    print(
        f"{'rule':<26}{'ratings':>8}{'saving':>8}{'cover':>8}{'reached':>8}{'zSRCC':>7}"
        f"{'zRMSE':>7}{'even SRCC':>10}{'even RMSE':>10}{'rawRMSE':>8}{'even raw':>9}"
    )
    for name, e in gaia["rules"].items():
        even = e.get("zmos_fixed_equal_budget", e["zmos"])
        even_raw = e.get("raw_mos_fixed_equal_budget", e["raw_mos"])
        print(
            f"{name:<26}{e['ratings_per_video']:>8.1f}{e['saving_vs_fixed']:>8.1%}"
            f"{e['coverage']:>8.2%}{e['reached_target']:>8.1%}{e['zmos']['srcc']:>7.3f}"
            f"{e['zmos']['rmse']:>7.2f}{even['srcc']:>10.3f}{even['rmse']:>10.2f}"
            f"{e['raw_mos']['rmse']:>8.2f}{even_raw['rmse']:>9.2f}"
        )
    one = gaia["one_dimension"]
    print(f"1b. The same, one dimension ({one['videos']} videos): the stop decided per interval")
    for name in ("fixed35", "group_sequential_obf", "two_stage_stein", "naive_t"):
        e = one[name]
        print(
            f"{name:<26}{e['ratings_per_video']:>8.1f}{e['saving_vs_fixed']:>8.1%}"
            f"{e['coverage']:>8.2%}{e['reached_target']:>8.1%}"
        )
    print(
        f"1c. Two-stage minus the even design at equal budget, by session size "
        f"({args.session_repeats} studies each; mean +- standard error)"
    )
    for session, e in gaia["zmos_by_session_size"].items():
        print(
            f"session {session:>4}: {e['ratings_per_video']:>5.1f} ratings/video  coverage "
            f"{e['coverage'][0]:.2%} +- {e['coverage'][1]:.2%}  Z-MOS RMSE "
            f"{e['zmos_rmse_minus_even'][0]:+.3f} +- {e['zmos_rmse_minus_even'][1]:.3f}  SRCC "
            f"{e['zmos_srcc_minus_even'][0]:+.4f} +- {e['zmos_srcc_minus_even'][1]:.4f}  raw MOS "
            f"RMSE {e['raw_rmse_minus_even'][0]:+.3f} +- {e['raw_rmse_minus_even'][1]:.3f}"
        )
