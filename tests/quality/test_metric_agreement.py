import numpy as np
import pytest
from scipy import stats

from quality.stats.metric_agreement import (
    fit_logistic,
    logistic4,
    metric_benchmark,
    paired_srcc_test,
    ridge_fit,
    ridge_splits,
)

RNG = np.random.default_rng(1)


def test_logistic_mapping_recovers_a_logistic_relation():
    x = np.linspace(-3, 3, 60)
    y = logistic4(x, 90.0, 10.0, 0.5, 0.8)
    params = fit_logistic(x, y)
    np.testing.assert_allclose(logistic4(x, *params), y, atol=1e-4)


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
    mapped = logistic4(good, *fit_logistic(good, mos))
    assert rows["good"]["plcc"] == pytest.approx(stats.pearsonr(mapped, mos).statistic, abs=1e-9)
    low, high = rows["good"]["srcc_ci95_low"], rows["good"]["srcc_ci95_high"]
    assert low < rows["good"]["srcc"] < high
    (pair,) = one["pairwise"]
    assert pair["p_value"] < 0.01  # the good metric is clearly better
    assert one["ridge"]["subject"]["splits"] == 10
    assert one["ridge"]["subject"]["srcc_mean"] > 0.9


def test_paired_test_is_two_sided():
    a = np.array([0.5, 0.6, 0.7, 0.8])
    assert paired_srcc_test(a, a - 0.1) == 0.0
    assert paired_srcc_test(a, a) == 1.0
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
