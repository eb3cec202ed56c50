"""Benchmark: the ranking statistics against their baselines, same run.

1. Exact Kemeny consensus of 500 rankings of N = 8, 9, 12, 16 conditions: the subset DP
   (quality.stats.ranking.kemeny) against a brute-force search over all N! orders (numpy,
   vectorised over the orders, from the same pairwise matrix) where that can finish
   (N <= 9); checked to give the same least distance and an order attaining it.
2. Plackett-Luce with a rater bootstrap, 12 conditions x 40 raters x 10 prompts: the
   strengths of each prompt and of the pooled question for the full data and B replicates
   (raters redrawn with replacement), ours (Hunter's MM batched over the replicates)
   against choix.ilsr_rankings (alpha = 0) replicate by replicate on the same draws;
   checked identical to 1e-6 after centring. choix's input lists (each drawn rater's
   rankings repeated as often as drawn) are built outside its timing.

    .venv/bin/python bench/ranking.py [--quick]

Best of N repeats, wall clock (choix: one run). Last stdout line: one JSON object.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from quality.stats.ranking import (  # noqa: E402
    choice_data,
    fit_plackett_luce,
    kemeny_consensus,
    pairwise_wins,
    rater_bootstrap_weights,
)

BRUTE_FORCE_MAX = 9
PERMUTATION_CHUNK = 200_000


def best_time(repeats: int, function, *args, **kwargs) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function(*args, **kwargs)
        best = min(best, time.perf_counter() - start)
    return best, result


def plackett_luce_levels(rng, n_conditions: int, n_rankings: int) -> np.ndarray:
    """Rankings drawn from Plackett-Luce (Gumbel trick) as tie levels (0 = best)."""
    truth = np.linspace(1.5, -1.5, n_conditions)
    scores = truth + rng.gumbel(size=(n_rankings, n_conditions))
    return np.argsort(np.argsort(-scores, axis=1), axis=1)


def ours_kemeny(level: np.ndarray):
    return kemeny_consensus(wins=pairwise_wins(level))


def brute_force_kemeny(wins: np.ndarray) -> tuple[float, tuple[int, ...]]:
    """The least sum over ordered pairs (a before b) of W[b, a], over all N! orders."""
    n = wins.shape[0]
    first, second = np.triu_indices(n, k=1)  # positions a < b
    best, best_order = np.inf, ()
    permutations = itertools.permutations(range(n))
    while chunk := list(itertools.islice(permutations, PERMUTATION_CHUNK)):
        orders = np.array(chunk, dtype=np.int64)
        costs = wins[orders[:, second], orders[:, first]].sum(axis=1)
        k = int(np.argmin(costs))
        if costs[k] < best:
            best, best_order = float(costs[k]), tuple(int(c) for c in orders[k])
    return best, best_order


def order_cost(wins: np.ndarray, order: tuple[int, ...]) -> float:
    return float(sum(wins[b, a] for a, b in itertools.combinations(order, 2)))


def kemeny_cases(quick: bool) -> dict[str, dict[str, float]]:
    rng = np.random.default_rng(0)
    figures = {}
    print(f"{'kemeny N':<10}{'raters':>7}{'ours ms':>10}{'brute ms':>11}{'ratio':>9}")
    for n in (8, 12, 16) if quick else (8, 9, 12, 16):
        level = plackett_luce_levels(rng, n, 500)
        ours_s, found = best_time(3 if quick else 5, ours_kemeny, level)
        entry = {"ours_ms": round(ours_s * 1e3, 3), "n_optimal": found.n_optimal}
        line = f"{n:<10}{500:>7}{ours_s * 1e3:>10.2f}"
        if n <= BRUTE_FORCE_MAX:
            wins = pairwise_wins(level)
            brute_s, (best, _) = best_time(1, brute_force_kemeny, wins)
            assert found.distance == best == order_cost(wins, found.order), (n, found, best)
            entry.update(brute_ms=round(brute_s * 1e3, 3), ratio=round(brute_s / ours_s, 1))
            line += f"{brute_s * 1e3:>11.1f}{brute_s / ours_s:>8.1f}x"
        print(line)
        figures[str(n)] = entry
    return figures


def study(rng, n_conditions=12, n_raters=40, n_prompts=10):
    """Every rater ranks every prompt: (level, rater, prompt) of each ranking."""
    level = plackett_luce_levels(rng, n_conditions, n_raters * n_prompts)
    rater = np.repeat(np.arange(n_raters), n_prompts)
    prompt = np.tile(np.arange(n_prompts), n_raters)
    return level, rater, prompt


def fits(level, rater, prompt, n_prompts: int):
    """The fits of a question: each prompt, then pooled (prompt None)."""
    return [prompt == p for p in range(n_prompts)] + [np.ones(len(level), dtype=bool)]


def ours_plackett_luce(level, rater, selections, weights) -> list[np.ndarray]:
    out = []
    for rows, w in zip(selections, weights, strict=True):
        data = choice_data(level=level[rows], rater=rater[rows], n_raters=w.shape[1])
        out.append(fit_plackett_luce(data, weights=w).strength)
    return out


def choix_inputs(level, rater, selections, weights) -> list[list[list[tuple[int, ...]]]]:
    orders = [tuple(np.argsort(row).tolist()) for row in level]
    inputs = []
    for rows, w in zip(selections, weights, strict=True):
        chosen = np.flatnonzero(rows)
        inputs.append(
            [
                [orders[k] for k in chosen for _ in range(int(row[rater[k]]))]
                for row in w  # one replicate's rater counts
            ]
        )
    return inputs


def choix_plackett_luce(inputs, n_conditions: int) -> list[np.ndarray]:
    import choix

    out = []
    for replicates in inputs:
        strengths = np.array(
            [choix.ilsr_rankings(n_conditions, data, alpha=0.0, tol=1e-12) for data in replicates]
        )
        out.append(strengths - strengths.mean(axis=1, keepdims=True))
    return out


def plackett_luce_case(quick: bool) -> dict[str, float]:
    replicates = 50 if quick else 1000
    rng = np.random.default_rng(1)
    n_prompts, n_raters = 10, 40
    level, rater, prompt = study(rng, n_raters=n_raters, n_prompts=n_prompts)
    selections = fits(level, rater, prompt, n_prompts)
    # Every rater ranks every prompt, so one draw of the raters serves every fit.
    draws = rater_bootstrap_weights(n_raters=n_raters, replicates=replicates, rng=rng)
    weights = [np.vstack([np.ones((1, n_raters)), draws])] * len(selections)
    ours_s, ours = best_time(
        2 if quick else 3, ours_plackett_luce, level, rater, selections, weights
    )
    inputs = choix_inputs(level, rater, selections, weights)
    choix_s, theirs = best_time(1, choix_plackett_luce, inputs, level.shape[1])
    gap = max(float(np.abs(a - b).max()) for a, b in zip(ours, theirs, strict=True))
    assert gap < 1e-6, gap
    ratio = choix_s / ours_s
    print(
        f"plackett-luce 12 x 40 x 10, {replicates} replicates + full data, "
        f"{len(selections)} fits: ours {ours_s:.2f} s, choix {choix_s:.2f} s, "
        f"{ratio:.1f}x (max gap {gap:.1e})"
    )
    return {
        "replicates": replicates,
        "fits": len(selections),
        "ours_s": round(ours_s, 4),
        "choix_s": round(choix_s, 3),
        "ratio": round(ratio, 1),
        "max_abs_gap": gap,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--quick", action="store_true", help="50 replicates, no N = 9, fewer repeats"
    )
    args = parser.parse_args()
    kemeny = kemeny_cases(args.quick)
    plackett_luce = plackett_luce_case(args.quick)
    summary = {
        "bench": "ranking",
        "quick": args.quick,
        "kemeny": kemeny,
        "plackett_luce": plackett_luce,
        "targets": {
            "kemeny_16_under_1s": kemeny["16"]["ours_ms"] < 1000,
            "plackett_luce_10x_choix": plackett_luce["ratio"] >= 10,
        },
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
