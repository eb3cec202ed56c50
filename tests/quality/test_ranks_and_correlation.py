"""Average ranks, Spearman and Kendall against scipy.stats."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from quality.stats.correlation import dimension_correlation, kendall_tau_b
from quality.stats.ranks import average_ranks, spearman, spearman_rows


@pytest.mark.parametrize("distinct", [2, 7, 1000, 10**12])
def test_average_ranks_equal_rankdata_row_by_row(distinct):
    # given: rows with many ties (few distinct values) to none, negatives included
    rng = np.random.default_rng(distinct % 97)
    values = rng.integers(-distinct, distinct, size=(30, 257)) / rng.integers(1, 5, (30, 257))
    # then
    assert np.array_equal(average_ranks(values), stats.rankdata(values, axis=1))


def test_average_ranks_exact_for_values_one_ulp_apart_and_signed_zeros():
    # given: values the fast integer keys cannot tell apart, and -0.0 == 0.0
    eps = np.finfo(float).eps
    values = np.array(
        [
            [1.0, 1.0 + eps, 1.0, 1.0 + 2 * eps, 1e300, -1e300],
            [0.0, -0.0, 0.0, -eps, eps, np.inf],
        ]
    )
    # then
    assert np.array_equal(average_ranks(values), stats.rankdata(values, axis=1))


def test_average_ranks_refuses_nan():
    with pytest.raises(ValueError):
        average_ranks(np.array([1.0, np.nan]))


def test_spearman_rows_with_masks_equal_spearmanr_on_the_kept_columns():
    # given
    rng = np.random.default_rng(5)
    a = rng.integers(0, 20, size=(25, 80)).astype(float)
    b = a + rng.integers(0, 20, size=a.shape)
    mask = rng.random(a.shape) < 0.6
    # when
    rho = spearman_rows(a, b, mask)
    # then
    for i in range(a.shape[0]):
        expected = stats.spearmanr(a[i, mask[i]], b[i, mask[i]]).statistic
        assert rho[i] == pytest.approx(expected, abs=1e-12)


def test_spearman_undefined_cases_are_nan_like_scipy():
    assert math.isnan(spearman(np.array([1.0, 1.0, 1.0]), np.array([1.0, 2.0, 3.0])))
    assert math.isnan(spearman(np.array([1.0]), np.array([2.0])))
    mask = np.array([[True, False, False]])
    assert math.isnan(spearman_rows(np.ones((1, 3)), np.ones((1, 3)), mask)[0])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(-5, 5), st.integers(-5, 5)), min_size=2, max_size=60))
def test_spearman_and_kendall_equal_scipy_on_random_samples(pairs):
    x = np.array([p[0] for p in pairs], dtype=float)
    y = np.array([p[1] for p in pairs], dtype=float)
    constant = np.ptp(x) == 0 or np.ptp(y) == 0
    rho, tau = spearman(x, y), kendall_tau_b(x, y)
    if constant:
        assert math.isnan(rho) and math.isnan(tau)
        return
    assert rho == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert tau == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)


def test_kendall_on_long_samples_equals_scipy():
    rng = np.random.default_rng(8)
    x = rng.integers(0, 300, size=5000).astype(float)
    y = x + rng.normal(0, 80, size=x.size).round()
    assert kendall_tau_b(x, y) == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)


def test_dimension_correlation_over_common_videos_equals_scipy():
    # given: dimension c lacks video v3
    mos = pd.DataFrame(
        {
            "video_id": ["v1", "v2", "v3", "v4", "v5"] * 2 + ["v1", "v2", "v4", "v5"],
            "dimension": ["a"] * 5 + ["b"] * 5 + ["c"] * 4,
            "mos": [10, 20, 30, 40, 50, 12, 11, 35, 36, 60, 5, 4, 3, 9],
        }
    )
    # when
    result = dimension_correlation(mos=mos, dimensions=["a", "b", "c"])
    # then
    assert [(r.dimension_a, r.dimension_b, r.n_videos) for r in result] == [
        ("a", "b", 5),
        ("a", "c", 4),
        ("b", "c", 4),
    ]
    a, b = [10, 20, 30, 40, 50], [12, 11, 35, 36, 60]
    assert result[0].spearman == pytest.approx(stats.spearmanr(a, b).statistic, abs=1e-12)
    assert result[0].kendall == pytest.approx(stats.kendalltau(a, b).statistic, abs=1e-12)
    a_common, c = [10, 20, 40, 50], [5, 4, 3, 9]
    assert result[1].spearman == pytest.approx(stats.spearmanr(a_common, c).statistic, abs=1e-12)
    assert result[1].kendall == pytest.approx(stats.kendalltau(a_common, c).statistic, abs=1e-12)
