"""bench/adaptive.py, part 2: the stopping rules on the three public sets, each video's
own ratings resampled; the fixed design is the set's own count of ratings per video."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.adaptive_gaia import (  # noqa: E402
    DATA,
    DATASETS,
    FIRST_STAGE,
    SESSION,
    t_half_width,
)
from quality.stats.adaptive.confidence_sequence import AnytimeConfidenceSequence  # noqa: E402
from quality.stats.adaptive.group_sequential import GroupSequentialPlan  # noqa: E402
from quality.stats.adaptive.repeated_t import RepeatedTInterval  # noqa: E402
from quality.stats.adaptive.simulate import (  # noqa: E402
    ResampledRatings,
    run_study,
)
from quality.stats.adaptive.stopping import StoppingRule  # noqa: E402
from quality.stats.adaptive.two_stage import TwoStagePlan  # noqa: E402
from quality.stats.subjective import read_scores_csv  # noqa: E402

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
