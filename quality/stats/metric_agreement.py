"""How well automatic metrics agree with human MOS (GAIA Tab. 5, Tab. 9 and Fig. 15).

- SRCC: Spearman's rank correlation between metric values and MOS.
- PLCC after the four-parameter logistic mapping recommended by VQEG (2000),
  f(x) = (b1 - b2) / (1 + exp(-(x - b3) / |b4|)) + b2, fitted by least squares on the
  standardised metric values (so a metric in units of 1e-6 fits like one in units of 1).
  The curve is the mapping only when it is worth its two extra parameters: when its
  corrected Akaike criterion (AICc, Hurvich & Tsai 1989) is no larger than the
  least-squares line's. Otherwise (the fit fails, fits worse, or only bends to a lone
  outlier, which four free parameters do at a few dozen stimuli) the line is the
  mapping; PLCC is never below |Pearson r|. At thousands of stimuli the criterion asks
  next to nothing of the curve, which is then VQEG's mapping.
- 95% intervals: percentile bootstrap over stimuli (seeded), the mapping held fixed.
- Coverage: each (metric, target) row uses the stimuli that have both (its ``n``), so a
  metric scored on part of the study is judged on that part and no other metric loses
  stimuli; rows with fewer than ``min_n`` stimuli are left out.
- Pairwise significance: PROTOCOL.md names pairwise t-tests (GAIA Fig. 15); MOSaic uses
  a paired bootstrap instead, which needs no normality and keeps the two SRCCs paired on
  the same stimuli. On the stimuli that have both metrics and the target, both metrics'
  SRCC is computed on the same resamples, each oriented by the sign of its SRCC there
  (a metric where lower is better counts by its strength, |SRCC|), and the two-sided
  p-value is twice the smaller share of draws on either side of zero difference.
- Trained predictor: ridge regression on the standardised content features, evaluated
  on 10 random 80/20 splits as GAIA evaluates trained methods, over the stimuli that
  have every feature and the target (the one place where metrics are combined).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

MIN_STIMULI = 5


def logistic4(x: np.ndarray, b1: float, b2: float, b3: float, b4: float) -> np.ndarray:
    # exp saturates past |700|; clipping there changes no float64 result.
    with np.errstate(divide="ignore", invalid="ignore"):
        exponent = np.clip(-(np.asarray(x, float) - b3) / abs(b4), -700.0, 700.0)
    return (b1 - b2) / (1.0 + np.exp(exponent)) + b2


def _logistic4_jacobian(x: np.ndarray, b1: float, b2: float, b3: float, b4: float) -> np.ndarray:
    """d logistic4 / d(b1, b2, b3, b4), one row per x: with u = (x - b3) / |b4| and
    s = 1 / (1 + exp(-u)), the derivatives are s, 1 - s, -(b1 - b2) s (1 - s) / |b4| and
    -(b1 - b2) s (1 - s) u / b4 (analytic, so the optimiser needs no finite differences)."""
    u = np.clip((np.asarray(x, float) - b3) / abs(b4), -700.0, 700.0)
    s = 1.0 / (1.0 + np.exp(-u))
    slope = (b1 - b2) * s * (1.0 - s)
    return np.column_stack([s, 1.0 - s, -slope / abs(b4), -slope * u / b4])


def fit_logistic(x: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """Least-squares parameters (b1, b2, b3, b4) of logistic4 mapping x onto y, or None
    when there is no fit: x constant, or the optimiser fails (no convergence within its
    evaluation budget, or a non-finite result).

    The fit runs on z = (x - mean) / std and the parameters are mapped back to x
    (b3 = mean + std * b3_z, b4 = std * |b4_z|), so the optimiser always works on values
    near 1, whatever the metric's units.
    """
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    centre, scale = x.mean(), x.std()
    if not (np.isfinite(scale) and scale > 0):
        return None
    z = (x - centre) / scale
    start = [y.max(), y.min(), float(np.median(z)), 0.5]
    if pearson(z, y) < 0:  # a decreasing metric: start from a falling curve
        start[0], start[1] = start[1], start[0]
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            # The covariance of the parameters is not used: its warning is no failure.
            warnings.simplefilter("ignore", optimize.OptimizeWarning)
            params, _ = optimize.curve_fit(
                logistic4,
                z,
                y,
                p0=start,
                jac=_logistic4_jacobian,
                maxfev=2000,
                method="trf",
            )
    except (RuntimeError, ValueError):
        return None
    b1, b2, b3, b4 = params
    mapped = np.array([b1, b2, centre + scale * b3, scale * abs(b4)])
    return mapped if np.isfinite(mapped).all() and mapped[3] > 0 else None


def aicc(rss: float, *, n: int, k: int) -> float:
    """The corrected Akaike information criterion of a least-squares fit with k
    parameters (the error variance among them) to n points with residual sum of squares
    ``rss`` (Hurvich & Tsai 1989): n ln(rss / n) + 2k + 2k(k + 1) / (n - k - 1), up to a
    constant shared by every model of the same points; inf when n <= k + 1 (too few
    points to judge k parameters), -inf for a perfect fit."""
    if n <= k + 1:
        return np.inf
    with np.errstate(divide="ignore"):
        fit = n * np.log(rss / n)
    return float(fit + 2 * k + 2 * k * (k + 1) / (n - k - 1))


LINE_PARAMETERS, LOGISTIC_PARAMETERS = 3, 5  # each with the error variance


def map_to_mos(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The metric values x mapped onto the MOS scale of y before PLCC: the fitted
    logistic4 when there is a fit whose AICc is at most the least-squares line's (see
    the module docstring), otherwise that line (constant y.mean() when x is constant)."""
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    scale = x.std()
    if not (np.isfinite(scale) and scale > 0):
        return np.full(y.shape, y.mean())
    z = (x - x.mean()) / scale
    line = y.mean() + np.mean(z * (y - y.mean())) * z  # slope cov(z, y) / var(z), var 1
    params = fit_logistic(x, y)
    if params is None:
        return line
    curve = logistic4(x, *params)
    if not np.isfinite(curve).all():
        return line
    n = y.size
    worth = aicc(np.sum((y - curve) ** 2), n=n, k=LOGISTIC_PARAMETERS) <= aicc(
        np.sum((y - line) ** 2), n=n, k=LINE_PARAMETERS
    )
    return curve if worth else line


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
    mapped = map_to_mos(values, mos)
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
    """Two-sided p-value that two metrics' (oriented) SRCC differ, from B paired
    bootstrap draws: 2 (1 + k) / (B + 1), at most 1, where k is the smaller count of
    draws with a difference <= 0 or >= 0 (Davison & Hinkley 1997, eq. 4.11: the draw
    observed counts as one of the B + 1, so a p-value is never 0 and the smallest one
    B draws can show is 2 / (B + 1))."""
    diff = boot_a - boot_b
    diff = diff[np.isfinite(diff)]
    if diff.size == 0:
        return float("nan")
    below = min(int((diff <= 0).sum()), int((diff >= 0).sum()))
    return float(min(1.0, 2 * (1 + below) / (diff.size + 1)))


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


def _oriented(srcc: float, boot: np.ndarray) -> tuple[float, np.ndarray]:
    """The SRCC and its bootstrap draws times its sign: a metric where lower is better
    is compared by its strength."""
    return srcc, (-1.0 if srcc < 0 else 1.0) * boot


def _oriented_draws(
    values: np.ndarray, mos: np.ndarray, *, draws: int, seed: int
) -> tuple[float, np.ndarray]:
    """``_oriented`` SRCC of values with mos and its draws on ``bootstrap_indices``."""
    resamples = bootstrap_indices(len(values), draws=draws, seed=seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = _srcc_rows(values[resamples], mos[resamples])
    return _oriented(float(stats.spearmanr(values, mos).statistic), boot)


def metric_benchmark(
    *,
    metrics: dict[str, np.ndarray],
    targets: dict[str, np.ndarray],
    draws: int = 1000,
    seed: int = 0,
    ridge_features: list[str] | None = None,
    min_n: int = MIN_STIMULI,
) -> dict:
    """Agreement of every metric with every target (MOS dimension, All-Combined).

    `metrics` and `targets` are arrays aligned over the same stimuli, NaN where a
    stimulus has no value. Each row and each pair uses the stimuli where its own arrays
    are all finite, and says how many (``n``); see the module docstring.
    """
    metrics = {name: np.asarray(values, float) for name, values in metrics.items()}
    targets = {name: np.asarray(values, float) for name, values in targets.items()}
    rows, pairwise = [], []
    for target, mos in targets.items():
        # (metric, stimuli) -> oriented SRCC and draws: with full coverage every pair
        # reuses the rows' draws; a partly scored metric costs one extra set per partner.
        draws_of: dict[tuple[str, bytes], tuple[float, np.ndarray]] = {}
        covered = {}
        for name, values in metrics.items():
            mask = np.isfinite(values) & np.isfinite(mos)
            if mask.sum() < min_n or np.ptp(values[mask]) == 0:
                continue  # too few stimuli, or a constant metric: no correlation
            resamples = bootstrap_indices(int(mask.sum()), draws=draws, seed=seed)
            result, boot = agreement(
                metric=name,
                target=target,
                values=values[mask],
                mos=mos[mask],
                resamples=resamples,
            )
            rows.append(result.as_dict())
            draws_of[(name, mask.tobytes())] = _oriented(result.srcc, boot)
            covered[name] = mask
        names = sorted(covered)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                both = covered[a] & covered[b]
                if both.sum() < min_n or min(np.ptp(metrics[m][both]) for m in (a, b)) == 0:
                    continue
                for name in (a, b):
                    if (name, both.tobytes()) not in draws_of:
                        draws_of[(name, both.tobytes())] = _oriented_draws(
                            metrics[name][both], mos[both], draws=draws, seed=seed
                        )
                srcc_a, boot_a = draws_of[(a, both.tobytes())]
                srcc_b, boot_b = draws_of[(b, both.tobytes())]
                pairwise.append(
                    {
                        "target": target,
                        "metric_a": a,
                        "metric_b": b,
                        "n": int(both.sum()),
                        "srcc_a": srcc_a,
                        "srcc_b": srcc_b,
                        "p_value": paired_srcc_test(boot_a, boot_b),
                    }
                )
    trained = {}
    usable = [f for f in ridge_features or [] if f in metrics]
    if usable:
        features = np.column_stack([metrics[f] for f in usable])
        for target, mos in targets.items():
            mask = np.isfinite(features).all(axis=1) & np.isfinite(mos)
            if mask.sum() >= 15:
                trained[target] = {
                    "features": usable,
                    "n": int(mask.sum()),
                    **ridge_splits(features=features[mask], mos=mos[mask], seed=seed),
                }
    return {
        "draws": draws,
        "seed": seed,
        "min_n": min_n,
        "rows": rows,
        "pairwise": pairwise,
        "ridge": trained,
    }
