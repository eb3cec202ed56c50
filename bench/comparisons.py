"""Benchmark: the side-by-side preference pipeline against choix, same run.

Two seeded studies simulated from known strengths with 20 % ties
(quality.stats.preference.synthetic): arena-sized (30 conditions, 200 raters, 200,000
judgments) and WYD-sized (7 models, 4 raters, 21 pairs x 25 judgments each). For each:

- ours: the whole ``compare`` pipeline in-process (``analyse``: checks, rater figures,
  screening, pairs, alpha, the Bradley-Terry scale and 1,000 rater-bootstrap
  replicates), prior 0 so that it is choix's maximum-likelihood model; and the batched
  fit of the 1,000 replicates alone;
- choix 0.4 on the SAME 1,000 replicates (the same rater draws): ``ilsr_pairwise_dense``
  on each replicate's count matrix (choix's fastest route; we hand it the aggregated
  counts for free), and the per-judgment routes ``ilsr_pairwise`` and ``opt_pairwise``
  (what the oracle test uses) on each replicate's half-win judgment list (each decisive
  judgment twice, each tie once each way); those take seconds per replicate on the arena
  set, so they run on the first few replicates and are extrapolated to 1,000 (the JSON
  says how many ran).

On the way it checks that choix's scales equal ours to 1e-6 after centring: every
replicate for the dense route, the replicates run for the list routes, and the point
estimate (with ilsr_pairwise_dense). Best of N repeats, wall clock.

    .venv/bin/python bench/comparisons.py [--quick]

Last stdout line: one JSON object with the timings and ratios.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import choix  # noqa: E402

from quality.stats.preference import PreferenceSettings, analyse  # noqa: E402
from quality.stats.preference.bootstrap import rater_weights, replicate_counts  # noqa: E402
from quality.stats.preference.counts import pair_tensors  # noqa: E402
from quality.stats.preference.fit import fit_batch  # noqa: E402
from quality.stats.preference.judgments import encode_judgments  # noqa: E402
from quality.stats.preference.models import MODELS  # noqa: E402
from quality.stats.preference.synthetic import simulate_judgments  # noqa: E402

REPLICATES = 1000
TOLERANCE = 1e-6


def arena_study():
    strengths = np.random.default_rng(30).normal(0.0, 1.0, 30)
    return simulate_judgments(
        strengths=strengths, raters=200, per_rater=1000, tie_share=0.2, contents=1000, seed=1
    )


def wyd_study():
    strengths = np.random.default_rng(7).normal(0.0, 0.6, 7)
    return simulate_judgments(strengths=strengths, raters=4, per_pair=25, tie_share=0.2, seed=2)


def best_time(repeats: int, function, *args, **kwargs):
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function(*args, **kwargs)
        best = min(best, time.perf_counter() - start)
    return best, result


def centred(values: np.ndarray) -> np.ndarray:
    return values - values.mean(axis=-1, keepdims=True)


def dense_matrices(counts: np.ndarray, pair_a, pair_b, n: int) -> np.ndarray:
    """(replicates, n, n): entry [i, j] = half-win data of i over j, doubled."""
    wins_a, wins_b, ties = np.split(counts, 3, axis=1)
    matrices = np.zeros((counts.shape[0], n, n))
    matrices[:, pair_a, pair_b] = 2 * wins_a + ties
    matrices[:, pair_b, pair_a] = 2 * wins_b + ties
    return matrices


def choix_dense(matrices: np.ndarray) -> np.ndarray:
    return np.stack([choix.ilsr_pairwise_dense(m) for m in matrices])


def judgment_list(matrix: np.ndarray) -> list[tuple[int, int]]:
    """The half-win judgment list of one replicate (winner, loser), as choix takes it."""
    rows, cols = np.nonzero(matrix)
    return [
        (int(i), int(j))
        for i, j, k in zip(rows, cols, matrix[rows, cols].astype(int), strict=True)
        for _ in range(k)
    ]


def choix_lists(matrices: np.ndarray, route: str) -> tuple[float, np.ndarray]:
    """Seconds spent in choix (building the lists is not counted) and the scales."""
    spent, scales = 0.0, []
    n = matrices.shape[1]
    for matrix in matrices:
        data = judgment_list(matrix)
        start = time.perf_counter()
        if route == "ilsr":
            params = choix.ilsr_pairwise(n, data)
        else:
            params = choix.opt_pairwise(n, data, alpha=0, tol=1e-8)
        spent += time.perf_counter() - start
        scales.append(params)
    return spent, np.stack(scales)


def gap(ours: np.ndarray, theirs: np.ndarray) -> float:
    return float(np.max(np.abs(centred(ours) - centred(theirs))))


def run_case(name: str, frame, *, repeats: int, list_replicates: dict[str, int]) -> dict:
    settings = PreferenceSettings(bootstrap=REPLICATES, seed=0, prior=0.0)
    analyse(frame, settings=PreferenceSettings(bootstrap=2, prior=0.0))  # warm imports
    ours_s, result = best_time(repeats, analyse, frame, settings=settings)
    assert result.exclusions == [], result.exclusions  # choix sees every rater too
    question = result.questions[0]
    names = result.bootstrap_conditions[question]

    # The same replicates: the same rater draws over the same per-rater counts.
    table = encode_judgments(judgments=frame)
    counts = pair_tensors(table=table).questions[0]
    weights = rater_weights(n_raters=table.raters.size, replicates=REPLICATES, seed=0)
    replicates = replicate_counts(weights=weights, per_rater=counts.per_rater)
    structure = {
        "model": MODELS["bradley-terry"],
        "pair_a": counts.pair_a,
        "pair_b": counts.pair_b,
        "n_conditions": counts.n_conditions,
        "prior": 0.0,
    }
    point = fit_batch(counts=counts.per_rater.sum(axis=0)[None], **structure)
    fit_s, fit = best_time(
        repeats, fit_batch, counts=replicates, start_scores=point.scores[0], **structure
    )
    ours_scores = result.bootstrap_scores[question]
    assert gap(fit.scores, ours_scores) < 1e-9

    matrices = dense_matrices(replicates, counts.pair_a, counts.pair_b, counts.n_conditions)
    dense_s, dense = best_time(max(1, repeats - 1), choix_dense, matrices)
    gaps = {"dense": gap(ours_scores, dense)}
    scale = result.scale.set_index("condition").loc[names, "score"].to_numpy()
    total = dense_matrices(
        counts.per_rater.sum(axis=0)[None], counts.pair_a, counts.pair_b, counts.n_conditions
    )
    gaps["point"] = gap(scale, choix.ilsr_pairwise_dense(total[0]))
    figures = {
        "judgments": int(len(frame)),
        "conditions": int(counts.n_conditions),
        "raters": int(table.raters.size),
        "replicates": REPLICATES,
        "ours_pipeline_s": round(ours_s, 4),
        "ours_fit_s": round(fit_s, 4),
        "fit_iterations": int(fit.iterations),
        "choix_dense_s": round(dense_s, 4),
    }
    for route, k in list_replicates.items():
        if k == 0:
            continue
        spent, scales = choix_lists(matrices[:k], route)
        gaps[route] = gap(ours_scores[:k], scales)
        figures[f"choix_{route}_replicates_run"] = k
        figures[f"choix_{route}_s_for_1000"] = round(spent / k * REPLICATES, 2)
    for route, value in gaps.items():
        assert value < TOLERANCE, (name, route, value)
    figures["max_gap"] = max(gaps.values())
    figures["ratio_pipeline_vs_choix_dense"] = round(dense_s / ours_s, 2)
    figures["ratio_fit_vs_choix_dense"] = round(dense_s / fit_s, 2)
    for route in list_replicates:
        key = f"choix_{route}_s_for_1000"
        if key in figures:
            figures[f"ratio_pipeline_vs_choix_{route}"] = round(figures[key] / ours_s, 1)
    return figures


def other_models(frame, repeats: int) -> dict[str, float]:
    """Our pipeline with the other scales (no choix equivalent), default prior."""
    times = {}
    for model in ("davidson", "rao-kupper", "thurstone"):
        settings = PreferenceSettings(model=model, bootstrap=REPLICATES)
        times[model] = round(best_time(repeats, analyse, frame, settings=settings)[0], 4)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repeats and list replicates")
    args = parser.parse_args()
    repeats = 2 if args.quick else 3
    cases = {
        "arena": (arena_study(), {"ilsr": 1 if args.quick else 3, "opt": 0 if args.quick else 1}),
        "wyd": (
            wyd_study(),
            {"ilsr": 50 if args.quick else 1000, "opt": 5 if args.quick else 100},
        ),
    }
    results = {}
    for name, (frame, list_replicates) in cases.items():
        results[name] = run_case(name, frame, repeats=repeats, list_replicates=list_replicates)
        results[name]["ours_other_models_s"] = other_models(frame, 1 if args.quick else 2)
        figures = results[name]
        print(
            f"{name}: {figures['judgments']} judgments, {figures['conditions']} conditions, "
            f"{figures['raters']} raters, {REPLICATES} rater-bootstrap replicates"
        )
        print(f"  ours, whole pipeline    {figures['ours_pipeline_s']:9.3f} s")
        print(
            f"  ours, replicate fits    {figures['ours_fit_s']:9.3f} s "
            f"({figures['fit_iterations']} Newton steps)"
        )
        print(
            f"  choix ilsr_pairwise_dense {figures['choix_dense_s']:7.3f} s  "
            f"pipeline x{figures['ratio_pipeline_vs_choix_dense']}, "
            f"fits x{figures['ratio_fit_vs_choix_dense']}"
        )
        for route in ("ilsr", "opt"):
            key = f"choix_{route}_s_for_1000"
            if key in figures:
                print(
                    f"  choix {route}_pairwise (lists) {figures[key]:9.1f} s for 1000 "
                    f"(from {figures[f'choix_{route}_replicates_run']}), pipeline "
                    f"x{figures[f'ratio_pipeline_vs_choix_{route}']}"
                )
        print(f"  other models (pipeline)  {figures['ours_other_models_s']}")
        print(f"  largest gap to choix     {figures['max_gap']:.2e}")
    summary = {
        "bench": "comparisons",
        "quick": args.quick,
        "arena_pipeline_s": results["arena"]["ours_pipeline_s"],
        "wyd_pipeline_s": results["wyd"]["ours_pipeline_s"],
        "arena_ratio_vs_choix_dense": results["arena"]["ratio_pipeline_vs_choix_dense"],
        "arena_ratio_vs_choix_ilsr_lists": results["arena"].get("ratio_pipeline_vs_choix_ilsr"),
        "cases": results,
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
