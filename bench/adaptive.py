"""Benchmark: adaptive collection (stop a video once its score is known; informative pairs)
against the fixed designs it would replace, all in the same run.

1. GAIA-shaped single-stimulus studies (3 dimensions, 0-100 slider) with a known truth:
   rater bias and inconsistency from SUREAL's MLE model fitted to the three public sets
   (tests/data/sureal), rescaled so that the raters' own noise is GAIA's smallest
   per-video SD (8 points), and content ambiguity spreading the per-video SD uniformly
   over GAIA's 8-25 points. The fixed design rates every video 35 times. Its worst-case
   interval, the t half-width at 35 ratings of a video with SD 25 (8.6 points), is the
   target every adaptive rule must reach with its own (valid) interval. Reported per
   rule: ratings used vs 35, coverage of the true per-video mean at the stop, the share
   that reached the target before the cap, and the Z-scored MOS (per-rater z, then the
   mean, as GAIA) and the plain MOS (the mean of the raw scores) against the truth (SRCC;
   RMSE after a least-squares line onto the truth), each beside a fixed design spending
   the same budget evenly (``even_at_budget``). Rules:
   the anytime betting sequence, group-sequential looks (O'Brien-Fleming and Pocock
   spending), Stein's two-stage plan (first stage of 15 ratings) and the naive
   t-interval looked at after every rating (not valid: the under-coverage it shows is
   the point). Sessions of 10 videos. Then the same on one dimension (1b), where each
   interval's own data decide its stop, and (1c) the two-stage plan at sessions of 10,
   50 and 300 videos (GAIA's) over repeated studies: its coverage, and its Z-scored MOS
   against the even design's at equal budget (per-session z-scoring costs adaptive
   collection accuracy when sessions are short: ``zmos_by_session_size``).
2. The three public sets, each video's ratings resampled: the same saving and coverage
   figures, the fixed design being the set's own ratings per video (median).
3. Paired comparison (10-30 conditions, 20 % ties, Thurstone with a tie band): judgments
   needed to match the full balanced design's scale accuracy (RMSE to the true scale,
   Spearman), for this project's active choice (ASAP's batch mode with pending updates and
   the rater constraints; ``active``: by expected variance reduction, the default;
   ``active_information``: by ASAP's expected information gain), random pairs and
   Swiss-system pairing (implemented here from the FIDE rules: neighbours in the current
   ranking), and, as the ceiling, the
   A-optimal design computed from the TRUE scale (no method that must learn the scale can
   beat it). The saving is read from the squared error at the full budget, paired per
   repeat, with its standard error (``mse_saving``); where the mean RMSE and SRCC curves
   first reach the balanced design's is printed too, but that crossing is noisy.

    .venv/bin/python bench/adaptive.py [--quick] [--seed N] [--parts gaia,public,preference]
        [--conditions 10,20,30] [--preference-repeats 64]

Last stdout line: one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy import special, stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from quality.stats.adaptive.confidence_sequence import AnytimeConfidenceSequence  # noqa: E402
from quality.stats.adaptive.group_sequential import GroupSequentialPlan  # noqa: E402
from quality.stats.adaptive.pairs import (  # noqa: E402
    all_pairs,
    choose_pairs,
    expected_fisher_information,
)
from quality.stats.adaptive.repeated_t import RepeatedTInterval  # noqa: E402
from quality.stats.adaptive.scaling import (  # noqa: E402
    DEFAULT_PRIOR_SD,
    fit_scale,
    outcome_probabilities,
)
from quality.stats.adaptive.simulate import (  # noqa: E402
    RaterModelSource,
    ResampledRatings,
    run_study,
)
from quality.stats.adaptive.stopping import StoppingRule  # noqa: E402
from quality.stats.adaptive.two_stage import TwoStagePlan  # noqa: E402
from quality.stats.subjective import fit_mle, read_scores_csv  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "sureal"
DATASETS = {
    "NFLX": "NFLX_dataset_public_raw.csv",
    "VQEGHD3": "VQEGHD3_dataset_raw.csv",
    "AGH": "quality_variation_2017_agh_tv_dataset.csv",
}
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


# 2. The public sets, resampled --------------------------------------------------------


def part_public(args) -> dict:
    out = {}
    for case, name in DATASETS.items():
        matrix = read_scores_csv(path=DATA / name).scores
        ratings = tuple(row[~np.isnan(row)] for row in matrix)
        source = ResampledRatings(ratings=ratings, low=1.0, high=5.0)
        truth = source.true_means()
        fixed = int(np.median([r.size for r in ratings]))
        target = max(t_half_width(r.std(ddof=1), fixed) for r in ratings)
        looks = tuple(sorted({int(round(fixed * f)) for f in (0.4, 0.6, 0.8, 1.0, 1.2, 1.4)}))
        plans = {
            "anytime_cs": (
                AnytimeConfidenceSequence(low=1, high=5),
                StoppingRule(target_half_width=target, max_ratings=8 * fixed),
            ),
            "group_sequential_obf": (
                GroupSequentialPlan(looks=looks, low=1, high=5),
                StoppingRule(target_half_width=target, max_ratings=looks[-1]),
            ),
            "two_stage_stein": (
                TwoStagePlan(first_stage=FIRST_STAGE, low=1, high=5),
                StoppingRule(
                    target_half_width=target, min_ratings=FIRST_STAGE, max_ratings=8 * fixed
                ),
            ),
            "naive_t": (
                RepeatedTInterval(low=1, high=5),
                StoppingRule(target_half_width=target, max_ratings=8 * fixed),
            ),
        }
        entry = {"videos": len(ratings), "fixed": fixed, "target_half_width": round(target, 3)}
        for rule_name, (plan, rule) in plans.items():
            covered, used, reached = [], [], []
            for rep in range(args.public_repeats):
                run = run_study(
                    source=source,
                    plan=plan,
                    rule=rule,
                    rng=np.random.default_rng(args.seed + 100 * rep),
                    session_size=SESSION,
                )
                covered.append(run.covered(truth).mean())
                used.append(run.ratings_used / len(ratings))
                reached.append(((run.upper - run.lower) / 2 <= target + 1e-9).mean())
            entry[rule_name] = {
                "ratings_per_video": round(float(np.mean(used)), 2),
                "saving_vs_fixed": round(1 - float(np.mean(used)) / fixed, 3),
                "coverage": round(float(np.mean(covered)), 4),
                "reached_target": round(float(np.mean(reached)), 3),
            }
        out[case] = entry
    return out


# 3. Paired comparisons -----------------------------------------------------------------


def tie_band_for(scale: np.ndarray, share: float) -> float:
    """tau giving ``share`` ties over the balanced design's pairs."""
    first, second = all_pairs(scale.size)
    d = scale[first] - scale[second]
    low, high = 0.0, 5.0
    for _ in range(60):
        tau = (low + high) / 2
        if outcome_probabilities(d, tau)[:, 1].mean() < share:
            low = tau
        else:
            high = tau
    return (low + high) / 2


def judge(rng, scale, tau, left, right) -> np.ndarray:
    p = outcome_probabilities(scale[left] - scale[right], tau)
    u = rng.random(left.size)
    return np.where(u < p[:, 0], 1, np.where(u < p[:, 0] + p[:, 1], 0, -1))


def accuracy(estimate: np.ndarray, scale: np.ndarray) -> tuple[float, float]:
    e, s = estimate - estimate.mean(), scale - scale.mean()
    return float(np.sqrt(np.mean((e - s) ** 2))), float(stats.spearmanr(e, s).statistic)


def swiss_batch(posterior, round_number: int) -> list[tuple[int, int]]:
    """Swiss-system pairing (FIDE Handbook C.04): conditions ranked by their current score,
    neighbours paired, the pairing shifted by one every other round so the chain links."""
    order = np.argsort(posterior.mean)
    start = round_number % 2
    return [(int(order[k]), int(order[k + 1])) for k in range(start, order.size - 1, 2)]


def a_optimal_allocation(scale: np.ndarray, tau: float, *, iterations: int = 1500) -> np.ndarray:
    """Share of the judgments per pair (``all_pairs`` order) of the A-optimal design for a
    KNOWN scale: the allocation minimising the trace of the centred posterior covariance
    (P (prior + sum_k n_k w_k a_k a_k^T)^-1 P, w_k the pair's Fisher information), the
    ceiling of any active method under the scale accuracy measured here. By the
    multiplicative algorithm of Silvey, Titterington & Torsney (1978, "An algorithm for
    optimal designs on a finite design space", Comm. Statist. A 7(14)), with the square
    root step (lambda_k <- lambda_k sqrt(g_k / sum_j lambda_j g_j), g the criterion's
    gradient), which keeps the trace decreasing."""
    size = scale.size
    first, second = all_pairs(size)
    difference = scale[first] - scale[second]
    weight = expected_fisher_information(
        mean_difference=difference, variance=np.zeros_like(difference), tie_band=tau
    )
    centre = np.eye(size) - 1.0 / size
    share = np.full(first.size, 1.0 / first.size)
    budget = 6 * first.size  # the balanced design's; the shares barely depend on it
    for _ in range(iterations):
        n = share * budget * weight
        information = np.eye(size) / DEFAULT_PRIOR_SD**2
        np.add.at(information, (first, first), n)
        np.add.at(information, (second, second), n)
        np.add.at(information, (first, second), -n)
        np.add.at(information, (second, first), -n)
        covariance = np.linalg.inv(information)
        squared = covariance @ centre @ covariance
        gradient = weight * (
            squared[first, first] + squared[second, second] - 2 * squared[first, second]
        )
        share = share * np.sqrt(gradient / (share @ gradient))
        share /= share.sum()
    return share


def oracle_trajectory(scale, tau, budget, rng) -> list[tuple[int, float, float]]:
    """The A-optimal design for the true scale (``a_optimal_allocation``), run at 40 % to
    100 % of ``budget``: what no method that must learn the scale can beat."""
    first, second = all_pairs(scale.size)
    share = a_optimal_allocation(scale, tau)
    trajectory = []
    for fraction in np.arange(0.4, 1.001, 0.05):
        total = int(round(fraction * budget))
        counts = np.floor(share * total).astype(np.int64)
        counts[np.argsort(counts - share * total)[: total - counts.sum()]] += 1
        left, right = np.repeat(first, counts), np.repeat(second, counts)
        flip = rng.random(left.size) < 0.5
        left, right = np.where(flip, right, left), np.where(flip, left, right)
        outcome = judge(rng, scale, tau, left, right)
        posterior = fit_scale(n_conditions=scale.size, left=left, right=right, outcome=outcome)
        trajectory.append((total, *accuracy(posterior.mean, scale)))
    return trajectory


def preference_trajectory(method, scale, tau, budget, batch, rng) -> list[tuple[int, float, float]]:
    size = scale.size
    left, right, outcome = (np.empty(0, dtype=np.int64) for _ in range(3))
    history: list[tuple[int, int, int]] = []
    trajectory = []
    raters = 30
    turn = 0
    while left.size < budget:
        posterior = fit_scale(n_conditions=size, left=left, right=right, outcome=outcome)
        if left.size:
            trajectory.append((left.size, *accuracy(posterior.mean, scale)))
        if method.startswith("active"):
            per = max(1, batch // 10)
            requests = {(turn * 10 + r) % raters: per for r in range(10)}
            chosen = choose_pairs(
                posterior=posterior,
                requests=requests,
                history=history,
                repeat_limit=2,
                seed=int(rng.integers(1 << 31)),
                criterion="information" if method == "active_information" else "variance",
            )
            new = [(c.left, c.right) for c in chosen]
            history += [(c.rater, c.left, c.right) for c in chosen]
        elif method == "swiss":
            new = []
            while len(new) < batch:
                new += [
                    (i, j) if rng.random() < 0.5 else (j, i)
                    for i, j in swiss_batch(posterior, turn + len(new))
                ]
        else:
            first, second = all_pairs(size)
            k = rng.integers(first.size, size=batch)
            flip = rng.random(batch) < 0.5
            new = list(
                zip(
                    np.where(flip, second[k], first[k]),
                    np.where(flip, first[k], second[k]),
                    strict=True,
                )
            )
        new = np.asarray(new[:batch], dtype=np.int64)
        left = np.concatenate([left, new[:, 0]])
        right = np.concatenate([right, new[:, 1]])
        outcome = np.concatenate([outcome, judge(rng, scale, tau, new[:, 0], new[:, 1])])
        turn += 1
    posterior = fit_scale(n_conditions=size, left=left, right=right, outcome=outcome)
    trajectory.append((left.size, *accuracy(posterior.mean, scale)))
    return trajectory


def mse_saving(method: np.ndarray, balanced: np.ndarray, spent: float) -> tuple[float, float]:
    """Share of the balanced design's judgments a method saves for the same scale accuracy,
    from the squared errors at the full budget (of which the method spent the fraction
    ``spent``), MSE ~ 1 / judgments, paired per repeat (both ran on the same true scale):
    1 - spent * exp(mean_r log(MSE_method,r / MSE_balanced,r)), and its standard error
    (delta method on the mean log ratio). Pairing takes out how hard each drawn scale is
    (a condition far from all others is placed by the prior in any design), which swamps
    the difference between designs in the plain means; and the whole curve is used
    rather than where the mean RMSE first crosses the balanced design's."""
    log_ratio = np.log(method / balanced)
    mean = float(log_ratio.mean())
    error = float(log_ratio.std(ddof=1) / np.sqrt(log_ratio.size)) if log_ratio.size > 1 else 0.0
    saving = 1.0 - spent * np.exp(mean)
    return float(saving), float(spent * np.exp(mean) * error)


def part_preference(args) -> dict:
    out = {}
    for size in args.conditions:
        repeats_per_pair = 6
        pairs = size * (size - 1) // 2
        full_budget = repeats_per_pair * pairs
        batch = max(10, pairs // 4)
        methods = {"active": [], "active_information": [], "random": [], "swiss": [], "oracle": []}
        full = []
        for rep in range(args.preference_repeats):
            rng = np.random.default_rng(args.seed + rep)
            scale = np.sort(rng.uniform(0, 0.2 * size + 2, size))
            tau = tie_band_for(scale, 0.2)
            first, second = all_pairs(size)
            left = np.tile(first, repeats_per_pair)
            right = np.tile(second, repeats_per_pair)
            flip = rng.random(left.size) < 0.5
            left, right = np.where(flip, right, left), np.where(flip, left, right)
            outcome = judge(rng, scale, tau, left, right)
            posterior = fit_scale(n_conditions=size, left=left, right=right, outcome=outcome)
            full.append(accuracy(posterior.mean, scale))
            for method in methods:
                rng = np.random.default_rng(args.seed + 1000 + rep)
                methods[method].append(
                    oracle_trajectory(scale, tau, full_budget, rng)
                    if method == "oracle"
                    else preference_trajectory(method, scale, tau, full_budget, batch, rng)
                )
        full_rmse = float(np.mean([f[0] for f in full]))
        full_srcc = float(np.mean([f[1] for f in full]))
        full_squared = np.array([f[0] for f in full]) ** 2
        entry = {
            "full_balanced": {
                "judgments": full_budget,
                "rmse": round(full_rmse, 4),
                "srcc": round(full_srcc, 4),
            },
        }
        for method, runs in methods.items():
            steps = min(len(r) for r in runs)
            counts = np.array([runs[0][k][0] for k in range(steps)])
            rmse = np.array([np.mean([r[k][1] for r in runs]) for k in range(steps)])
            srcc = np.array([np.mean([r[k][2] for r in runs]) for k in range(steps)])
            need_rmse = counts[np.argmax(rmse <= full_rmse)] if (rmse <= full_rmse).any() else None
            need_srcc = counts[np.argmax(srcc >= full_srcc)] if (srcc >= full_srcc).any() else None
            last = np.array([r[-1][1] for r in runs]) ** 2
            saving, error = mse_saving(last, full_squared, counts[-1] / full_budget)
            entry[method] = {
                "judgments_to_full_rmse": None if need_rmse is None else int(need_rmse),
                "saving_rmse": None if need_rmse is None else round(1 - need_rmse / full_budget, 3),
                "judgments_to_full_srcc": None if need_srcc is None else int(need_srcc),
                "saving_srcc": None if need_srcc is None else round(1 - need_srcc / full_budget, 3),
                "rmse_at_full_budget": round(float(rmse[-1]), 4),
                "saving_by_mse": round(saving, 3),
                "saving_by_mse_se": round(error, 3),
            }
        out[f"C{size}"] = entry
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


def print_public(public: dict) -> None:
    print("2. Public sets, resampled (5-point scale)")
    for case, entry in public.items():
        for rule in ("anytime_cs", "group_sequential_obf", "two_stage_stein", "naive_t"):
            e = entry[rule]
            print(
                f"{case:<8}fixed {entry['fixed']:>3} target {entry['target_half_width']:.3f} "
                f"{rule:<22}{e['ratings_per_video']:>7.1f}{e['saving_vs_fixed']:>8.1%}"
                f"{e['coverage']:>8.2%}{e['reached_target']:>8.1%}"
            )


def print_preference(preference: dict) -> None:
    print("3. Paired comparison, 20% ties: judgments to reach the full balanced design")
    for case, entry in preference.items():
        full = entry["full_balanced"]
        print(
            f"{case}: full {full['judgments']} judgments, RMSE {full['rmse']}, SRCC {full['srcc']}"
        )
        for method in ("active", "active_information", "swiss", "random", "oracle"):
            e = entry[method]
            print(
                f"   {method:<18} saving by MSE {e['saving_by_mse']:+.1%} "
                f"(se {e['saving_by_mse_se']:.1%})  first at the RMSE: "
                f"{e['judgments_to_full_rmse']} (saving {e['saving_rmse']})"
                f"  at the SRCC: {e['judgments_to_full_srcc']} (saving {e['saving_srcc']})"
            )


PARTS = ("gaia", "public", "preference")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="smaller studies (about a minute)")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument(
        "--parts", default=",".join(PARTS), help=f"comma-separated, of {', '.join(PARTS)}"
    )
    parser.add_argument(
        "--conditions", default=None, help="preference: condition counts (default 10,20,30)"
    )
    parser.add_argument(
        "--preference-repeats", type=int, default=None, help="preference: studies (default 64)"
    )
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    if parts - set(PARTS):
        parser.error(f"--parts takes {', '.join(PARTS)}")
    args.videos = 600 if args.quick else 2000
    args.public_repeats = 2 if args.quick else 10
    default_conditions = (10, 20) if args.quick else (10, 20, 30)
    args.conditions = (
        tuple(int(c) for c in args.conditions.split(",")) if args.conditions else default_conditions
    )
    if args.preference_repeats is None:
        args.preference_repeats = 4 if args.quick else 64
    args.session_repeats = 2 if args.quick else 12
    start = time.perf_counter()
    summary = {"bench": "adaptive", "quick": args.quick}
    if "gaia" in parts:
        summary["gaia"] = part_gaia(args, np.random.default_rng(args.seed))
        print_gaia(summary["gaia"], args)
    if "public" in parts:
        summary["public"] = part_public(args)
        print_public(summary["public"])
    if "preference" in parts:
        summary["preference"] = part_preference(args)
        print_preference(summary["preference"])
    summary["seconds"] = round(time.perf_counter() - start, 1)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
