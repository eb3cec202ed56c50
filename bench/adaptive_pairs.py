"""bench/adaptive.py, part 3: paired comparisons with ties, the project's active pair
choice against the full balanced design, random pairs, Swiss-system pairing and the
A-optimal design for the true scale (the ceiling)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from quality.stats.adaptive.pairs import (  # noqa: E402
    all_pairs,
    choose_pairs,
    expected_fisher_information,
)
from quality.stats.adaptive.scaling import (  # noqa: E402
    DEFAULT_PRIOR_SD,
    fit_scale,
    outcome_probabilities,
)

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
