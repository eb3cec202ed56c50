"""How well automatic metrics agree with human MOS (GAIA Tab. 5, Tab. 9 and Fig. 15).

- SRCC: Spearman's rank correlation between metric values and MOS.
- PLCC after the four-parameter logistic mapping recommended by VQEG (2000),
  f(x) = (b1 - b2) / (1 + exp(-(x - b3) / |b4|)) + b2, fitted by least squares; the
  mapping removes the non-linearity between a metric's scale and the MOS scale.
- 95% intervals: percentile bootstrap over stimuli (seeded), the mapping held fixed.
- Pairwise significance: a paired bootstrap of the difference in SRCC between two
  metrics on the same resamples; two-sided p-value.
- Trained predictor: ridge regression on the standardised content features, evaluated
  on 10 random 80/20 splits as GAIA evaluates trained methods.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats


def logistic4(x: np.ndarray, b1: float, b2: float, b3: float, b4: float) -> np.ndarray:
    # exp saturates past |700|; clipping there changes no float64 result.
    exponent = np.clip(-(np.asarray(x, float) - b3) / abs(b4), -700.0, 700.0)
    return (b1 - b2) / (1.0 + np.exp(exponent)) + b2


def fit_logistic(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Parameters of logistic4 mapping x onto y; falls back to a linear fit's range when
    the optimiser does not converge (a flat metric), so PLCC stays defined."""
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    start = [y.max(), y.min(), np.median(x), (x.std() or 1.0) / 2]
    if np.corrcoef(x, y)[0, 1] < 0:  # a decreasing metric: start from a falling curve
        start[0], start[1] = start[1], start[0]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            params, _ = optimize.curve_fit(logistic4, x, y, p0=start, maxfev=20000, method="trf")
        return params
    except (RuntimeError, optimize.OptimizeWarning):
        return np.asarray(start)


def pearson(a: np.ndarray, b: np.ndarray) -> float:
    a = a - a.mean()
    b = b - b.mean()
    denominator = np.sqrt((a * a).sum() * (b * b).sum())
    return float((a * b).sum() / denominator) if denominator > 0 else float("nan")


def _ranks(values: np.ndarray) -> np.ndarray:
    return stats.rankdata(values, axis=-1)


@dataclass(frozen=True)
class Agreement:
    metric: str
    target: str
    n: int
    srcc: float
    plcc: float
    srcc_ci95: tuple[float, float]
    plcc_ci95: tuple[float, float]

    def as_dict(self) -> dict:
        return {
            "metric": self.metric,
            "target": self.target,
            "n": self.n,
            "srcc": self.srcc,
            "plcc": self.plcc,
            "srcc_ci95_low": self.srcc_ci95[0],
            "srcc_ci95_high": self.srcc_ci95[1],
            "plcc_ci95_low": self.plcc_ci95[0],
            "plcc_ci95_high": self.plcc_ci95[1],
        }


def bootstrap_indices(n: int, *, draws: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, n, size=(draws, n))


def _srcc_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman correlation of each row pair: x, y of shape (draws, n)."""
    rx = _ranks(x) - (x.shape[1] + 1) / 2
    ry = _ranks(y) - (y.shape[1] + 1) / 2
    return (rx * ry).sum(1) / np.sqrt((rx * rx).sum(1) * (ry * ry).sum(1))


def _plcc_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    x = x - x.mean(1, keepdims=True)
    y = y - y.mean(1, keepdims=True)
    return (x * y).sum(1) / np.sqrt((x * x).sum(1) * (y * y).sum(1))


def agreement(
    *, metric: str, target: str, values: np.ndarray, mos: np.ndarray, resamples: np.ndarray
) -> tuple[Agreement, np.ndarray]:
    """SRCC and mapped PLCC with bootstrap intervals; also returns the SRCC per resample
    (for the pairwise tests, which need the same resamples for every metric)."""
    values = np.asarray(values, float)
    mos = np.asarray(mos, float)
    srcc = float(stats.spearmanr(values, mos).statistic)
    mapped = logistic4(values, *fit_logistic(values, mos))
    plcc = pearson(mapped, mos)
    boot_srcc = _srcc_rows(values[resamples], mos[resamples])
    with np.errstate(invalid="ignore", divide="ignore"):
        boot_plcc = _plcc_rows(mapped[resamples], mos[resamples])
    interval = lambda a: tuple(float(v) for v in np.nanpercentile(a, [2.5, 97.5]))  # noqa: E731
    return (
        Agreement(
            metric, target, len(values), srcc, plcc, interval(boot_srcc), interval(boot_plcc)
        ),
        boot_srcc,
    )


def paired_srcc_test(boot_a: np.ndarray, boot_b: np.ndarray) -> float:
    """Two-sided p-value that two metrics' SRCC differ, from paired bootstrap draws."""
    diff = boot_a - boot_b
    diff = diff[np.isfinite(diff)]
    if diff.size == 0:
        return float("nan")
    share = min((diff <= 0).mean(), (diff >= 0).mean())
    return float(min(1.0, 2 * share))


def ridge_fit(features: np.ndarray, target: np.ndarray, *, alpha: float) -> np.ndarray:
    """Weights (intercept last) of ridge regression on standardised features."""
    x = np.column_stack([features, np.ones(len(features))])
    penalty = alpha * np.eye(x.shape[1])
    penalty[-1, -1] = 0.0  # the intercept is not shrunk
    return np.linalg.solve(x.T @ x + penalty, x.T @ target)


def ridge_splits(
    *,
    features: np.ndarray,
    mos: np.ndarray,
    splits: int = 10,
    train_share: float = 0.8,
    alpha: float = 1.0,
    seed: int = 0,
) -> dict:
    """Mean and std of test SRCC and PLCC over random train/test splits."""
    rng = np.random.default_rng(seed)
    n = len(mos)
    srccs, plccs = [], []
    for _ in range(splits):
        order = rng.permutation(n)
        cut = int(round(train_share * n))
        train, test = order[:cut], order[cut:]
        if len(test) < 3:
            break
        mean, std = features[train].mean(0), features[train].std(0)
        std[std == 0] = 1.0
        weights = ridge_fit((features[train] - mean) / std, mos[train], alpha=alpha)
        predicted = np.column_stack([(features[test] - mean) / std, np.ones(len(test))]) @ weights
        srccs.append(float(stats.spearmanr(predicted, mos[test]).statistic))
        plccs.append(pearson(predicted, mos[test]))
    return {
        "splits": len(srccs),
        "srcc_mean": float(np.mean(srccs)) if srccs else None,
        "srcc_std": float(np.std(srccs)) if srccs else None,
        "plcc_mean": float(np.mean(plccs)) if plccs else None,
        "plcc_std": float(np.std(plccs)) if plccs else None,
    }


def metric_benchmark(
    *,
    metrics: dict[str, np.ndarray],
    targets: dict[str, np.ndarray],
    draws: int = 1000,
    seed: int = 0,
    ridge_features: list[str] | None = None,
) -> dict:
    """Agreement of every metric with every target (MOS dimension, All-Combined).

    `metrics` and `targets` are aligned arrays over the same stimuli.
    """
    n = len(next(iter(targets.values())))
    resamples = bootstrap_indices(n, draws=draws, seed=seed)
    rows, pairwise = [], []
    for target, mos in targets.items():
        boots = {}
        for name, values in metrics.items():
            if np.ptp(values) == 0:
                continue  # a constant metric has no correlation
            result, boots[name] = agreement(
                metric=name, target=target, values=values, mos=mos, resamples=resamples
            )
            rows.append(result.as_dict())
        names = sorted(boots)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                pairwise.append(
                    {
                        "target": target,
                        "a": a,
                        "b": b,
                        "p_value": paired_srcc_test(boots[a], boots[b]),
                    }
                )
    trained = {}
    if ridge_features:
        usable = [f for f in ridge_features if f in metrics]
        if usable and n >= 15:
            features = np.column_stack([metrics[f] for f in usable])
            for target, mos in targets.items():
                trained[target] = {
                    "features": usable,
                    **ridge_splits(features=features, mos=np.asarray(mos, float), seed=seed),
                }
    return {
        "n": n,
        "draws": draws,
        "seed": seed,
        "rows": rows,
        "pairwise": pairwise,
        "ridge": trained,
    }
