import numpy as np
import pytest
from scipy import optimize, stats

from quality.stats import metric_agreement
from quality.stats.metric_agreement import (
    bootstrap_indices,
    fit_logistic,
    logistic4,
    metric_benchmark,
    paired_srcc_test,
    ridge_fit,
    ridge_splits,
)

RNG = np.random.default_rng(1)


def oracle_aicc(residuals: np.ndarray, parameters: int) -> float:
    """AICc from the Gaussian log-likelihood at the maximum-likelihood variance (scipy's
    norm.logpdf): -2 log L + 2k + 2k(k + 1) / (n - k - 1) (Hurvich & Tsai 1989)."""
    n, k = residuals.size, parameters
    log_likelihood = stats.norm.logpdf(residuals, scale=np.sqrt(np.mean(residuals**2))).sum()
    return -2 * log_likelihood + 2 * k + 2 * k * (k + 1) / (n - k - 1)


def oracle_plcc(x: np.ndarray, y: np.ndarray) -> float:
    """The documented PLCC from scipy's own pieces: a four-parameter logistic fitted by
    curve_fit (its default Levenberg-Marquardt) on standardised x, unless the
    least-squares line (linregress) has the smaller AICc (the curve's four parameters
    and the line's two, each with the error variance); then pearsonr."""
    z = (x - x.mean()) / x.std()
    fit = stats.linregress(z, y)
    best = fit.intercept + fit.slope * z

    def curve(z, b1, b2, b3, b4):
        return (b1 - b2) / (1 + np.exp(-(z - b3) / abs(b4))) + b2

    start = [y.max(), y.min(), np.median(z), 0.5]
    if fit.slope < 0:
        start[:2] = start[1], start[0]
    try:
        params, _ = optimize.curve_fit(curve, z, y, p0=start, maxfev=5000)
    except RuntimeError:
        params = None
    if params is not None and oracle_aicc(y - curve(z, *params), 5) <= oracle_aicc(y - best, 3):
        best = curve(z, *params)
    return float(stats.pearsonr(best, y).statistic)


def reviewer_cases(draws: tuple[int, ...]) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """The review's probe: lognormal metric values in units of 1, 1e-6 or 1e6; the old
    fit went flat on draws 7, 41 and 261 (PLCC NaN, or negative)."""
    rng = np.random.default_rng(3)
    cases = {}
    for draw in range(max(draws) + 1):
        n = rng.integers(5, 40)
        x = rng.lognormal(0, rng.uniform(0.1, 4), n) * rng.choice([1, 1e-6, 1e6])
        y = rng.uniform(0, 100, n) + rng.uniform(-50, 50) * np.log(x)
        if draw in draws:
            cases[draw] = (x, y)
    return cases


def plcc_of(values: np.ndarray, mos: np.ndarray) -> float:
    (row,) = metric_benchmark(metrics={"m": values}, targets={"s": mos}, draws=50)["rows"]
    return row["plcc"]


def test_logistic_mapping_recovers_a_logistic_relation():
    x = np.linspace(-3, 3, 60)
    y = logistic4(x, 90.0, 10.0, 0.5, 0.8)
    params = fit_logistic(x, y)
    np.testing.assert_allclose(logistic4(x, *params), y, atol=1e-4)


def test_aicc_is_the_gaussian_likelihood_criterion():
    residuals = RNG.normal(0, 7, 30)
    for k in (3, 5):
        # aicc drops the constant n (ln 2 pi + 1) that every model of the points shares
        constant = residuals.size * (np.log(2 * np.pi) + 1)
        assert metric_agreement.aicc(
            (residuals**2).sum(), n=residuals.size, k=k
        ) + constant == pytest.approx(oracle_aicc(residuals, k), abs=1e-9)
    assert metric_agreement.aicc(1.0, n=6, k=5) == np.inf  # too few points for k


def test_a_curve_that_only_bends_to_one_outlier_is_not_the_mapping():
    # given: a metric unrelated to MOS at 24 stimuli, but for one extreme stimulus (the
    # demo's contrast against completeness): the logistic turns into a step through it
    rng = np.random.default_rng(5)
    x = np.append(rng.normal(66, 0.4, 23), 67.5)
    mos = np.append(rng.uniform(30, 90, 23), 25.0)
    curve = logistic4(x, *fit_logistic(x, mos))
    line = np.polyval(np.polyfit(x, mos, 1), x)
    assert ((mos - curve) ** 2).sum() < ((mos - line) ** 2).sum()  # the step fits better
    # when / then: it is not worth its parameters; PLCC is the line's, |Pearson r|
    assert plcc_of(x, mos) == pytest.approx(abs(stats.pearsonr(x, mos).statistic), abs=1e-12)
    assert plcc_of(x, mos) == pytest.approx(oracle_plcc(x, mos), abs=1e-9)
    assert stats.pearsonr(curve, mos).statistic > plcc_of(x, mos) + 0.3  # the step's PLCC


def test_benchmark_matches_scipy_and_is_seeded():
    n = 80
    mos = RNG.uniform(0, 100, n)
    good = mos + RNG.normal(0, 5, n)
    noisy = mos + RNG.normal(0, 40, n)
    one = metric_benchmark(
        metrics={"good": good, "noisy": noisy},
        targets={"subject": mos},
        draws=300,
        seed=3,
        ridge_features=["good", "noisy"],
    )
    again = metric_benchmark(
        metrics={"good": good, "noisy": noisy},
        targets={"subject": mos},
        draws=300,
        seed=3,
        ridge_features=["good", "noisy"],
    )
    assert one == again
    rows = {row["metric"]: row for row in one["rows"]}
    assert rows["good"]["srcc"] == pytest.approx(stats.spearmanr(good, mos).statistic, abs=1e-12)
    assert rows["good"]["plcc"] == pytest.approx(oracle_plcc(good, mos), abs=1e-9)
    low, high = rows["good"]["srcc_ci95_low"], rows["good"]["srcc_ci95_high"]
    assert low < rows["good"]["srcc"] < high
    (pair,) = one["pairwise"]
    assert (pair["metric_a"], pair["metric_b"], pair["n"]) == ("good", "noisy", n)
    assert pair["p_value"] < 0.01  # the good metric is clearly better
    assert one["ridge"]["subject"]["splits"] == 10
    assert one["ridge"]["subject"]["srcc_mean"] > 0.9


def test_paired_test_is_two_sided():
    a = np.array([0.5, 0.6, 0.7, 0.8])
    # no draw crosses zero: the smallest p-value 4 draws can show, 2 / 5, never 0
    assert paired_srcc_test(a, a - 0.1) == pytest.approx(2 / 5)
    assert paired_srcc_test(a, a) == 1.0
    # 1 of 999 draws crosses: 2 (1 + 1) / 1000
    b = np.r_[np.full(998, 0.1), -0.1]
    assert paired_srcc_test(b, np.zeros(999)) == pytest.approx(0.004)
    assert paired_srcc_test(np.array([0.1, 0.9]), np.array([0.5, 0.5])) == 1.0


def test_ridge_equals_the_augmented_least_squares_oracle():
    x = RNG.normal(size=(40, 3))
    y = x @ np.array([1.0, -2.0, 0.5]) + 3.0 + RNG.normal(0, 0.1, 40)
    alpha = 0.7
    # oracle: ridge as ordinary least squares on rows augmented with sqrt(alpha) * I
    augmented_x = np.vstack(
        [
            np.column_stack([x, np.ones(40)]),
            np.column_stack([np.sqrt(alpha) * np.eye(3), np.zeros(3)]),
        ]
    )
    augmented_y = np.concatenate([y, np.zeros(3)])
    oracle = np.linalg.lstsq(augmented_x, augmented_y, rcond=None)[0]
    np.testing.assert_allclose(ridge_fit(x, y, alpha=alpha), oracle, atol=1e-10)


def test_ridge_splits_use_eighty_twenty():
    x = RNG.normal(size=(50, 2))
    y = x[:, 0] * 10
    result = ridge_splits(features=x, mos=y, splits=10, seed=0)
    assert result["splits"] == 10 and result["srcc_mean"] == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("draw", [7, 41, 261])
def test_plcc_is_defined_and_no_worse_than_linear_on_badly_scaled_values(draw):
    # given: the review's cases, metric values around 1e-6
    ((x, y),) = reviewer_cases((draw,)).values()
    # when
    plcc = plcc_of(x, y)
    # then: finite, and at least the linear correlation's strength (scipy)
    assert np.isfinite(plcc)
    assert abs(stats.pearsonr(x, y).statistic) - 1e-12 <= plcc <= 1.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_plcc_does_not_depend_on_the_metrics_units(seed):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=60)
    mos = 50 + 30 * np.tanh(1.5 * z) + rng.normal(0, 5, 60)
    expected = oracle_plcc(z, mos)
    assert expected > abs(stats.pearsonr(z, mos).statistic) + 0.01  # the curve maps it
    for scale in (1e-6, 1.0, 1e6):
        assert plcc_of(z * scale + 3 * scale, mos) == pytest.approx(expected, abs=1e-9)


def test_a_failed_fit_falls_back_to_the_least_squares_line(monkeypatch):
    # given: an optimiser that does not converge
    def no_convergence(*args, **kwargs):
        raise RuntimeError("Optimal parameters not found")

    monkeypatch.setattr(metric_agreement.optimize, "curve_fit", no_convergence)
    x = RNG.uniform(0, 1, 30)
    mos = -40 * x + RNG.normal(0, 5, 30)
    # when / then: no parameters (not the start guess), and PLCC is |Pearson r|
    assert fit_logistic(x, mos) is None
    assert plcc_of(x, mos) == pytest.approx(abs(stats.pearsonr(x, mos).statistic), abs=1e-12)


def test_an_equally_good_decreasing_metric_is_not_significantly_different():
    # given: "down" is "up" negated (lower is better): the same strength of agreement
    mos = RNG.uniform(0, 100, 60)
    up = mos + RNG.normal(0, 10, 60)
    # when
    result = metric_benchmark(metrics={"up": up, "down": -up}, targets={"s": mos}, draws=500)
    # then
    (pair,) = result["pairwise"]
    assert pair["srcc_a"] == pytest.approx(-pair["srcc_b"], abs=1e-12)
    assert pair["p_value"] == 1.0


def test_pairwise_p_value_equals_a_scipy_bootstrap_of_the_oriented_srcc():
    # given: a decreasing metric and a weaker increasing one
    n, draws = 50, 300
    mos = RNG.uniform(0, 100, n)
    down = -mos + RNG.normal(0, 15, n)
    up = mos + RNG.normal(0, 40, n)
    # when
    result = metric_benchmark(
        metrics={"down": down, "up": up}, targets={"s": mos}, draws=draws, seed=4
    )
    # then: the oracle resamples the stimuli and calls scipy.stats.spearmanr per draw
    resamples = np.random.default_rng(4).integers(0, n, size=(draws, n))
    sign = {m: np.sign(stats.spearmanr(v, mos).statistic) for m, v in (("d", down), ("u", up))}
    diff = np.array(
        [
            sign["d"] * stats.spearmanr(down[i], mos[i]).statistic
            - sign["u"] * stats.spearmanr(up[i], mos[i]).statistic
            for i in resamples
        ]
    )
    # Davison & Hinkley (1997): the observed draw counts as one of B + 1
    expected = min(1.0, 2 * (1 + min((diff <= 0).sum(), (diff >= 0).sum())) / (draws + 1))
    (pair,) = result["pairwise"]
    assert (pair["metric_a"], pair["metric_b"]) == ("down", "up")
    assert pair["p_value"] == pytest.approx(expected, abs=1e-12)
    assert np.array_equal(bootstrap_indices(n, draws=draws, seed=4), resamples)


def test_each_metric_is_judged_on_the_stimuli_it_has():
    # given: "full" on 30 stimuli, "partial" on 12 of them, "scarce" on 4, one MOS missing
    n = 30
    mos = RNG.uniform(0, 100, n)
    mos[0] = np.nan
    full = mos + RNG.normal(0, 10, n)
    full[0] = 1.0
    partial = np.full(n, np.nan)
    partial[5:17] = mos[5:17] + RNG.normal(0, 10, 12)
    scarce = np.full(n, np.nan)
    scarce[20:24] = RNG.uniform(size=4)
    # when
    result = metric_benchmark(
        metrics={"full": full, "partial": partial, "scarce": scarce},
        targets={"s": mos},
        draws=100,
        ridge_features=["full", "partial"],
    )
    # then: per-metric n and SRCC over its own stimuli (scipy); too few: left out
    rows = {row["metric"]: row for row in result["rows"]}
    assert sorted(rows) == ["full", "partial"]
    assert rows["full"]["n"] == 29
    assert rows["full"]["srcc"] == pytest.approx(
        stats.spearmanr(full[1:], mos[1:]).statistic, abs=1e-12
    )
    assert rows["partial"]["n"] == 12
    assert rows["partial"]["srcc"] == pytest.approx(
        stats.spearmanr(partial[5:17], mos[5:17]).statistic, abs=1e-12
    )
    (pair,) = result["pairwise"]
    assert pair["n"] == 12
    assert pair["srcc_a"] == pytest.approx(
        stats.spearmanr(full[5:17], mos[5:17]).statistic, abs=1e-12
    )
    # and the ridge predictor, which combines the two, needs 15 common stimuli: none here
    assert result["ridge"] == {}
