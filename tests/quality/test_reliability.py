"""Krippendorff's alpha: the closed interval form against the krippendorff package."""

import math

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quality.stats.reliability import krippendorff_alpha, krippendorff_alpha_interval


def _long(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(raters x units) matrix with NaN -> long rater, unit, value arrays."""
    raters, units = np.nonzero(~np.isnan(matrix))
    return raters, units, matrix[raters, units]


def _package(matrix: np.ndarray, level: str = "interval") -> float:
    return krippendorff.alpha(reliability_data=matrix, level_of_measurement=level)


def test_interval_alpha_equals_package_on_dense_ratings():
    # given
    rng = np.random.default_rng(1)
    truth = rng.uniform(0, 100, size=60)
    matrix = np.rint(truth + rng.normal(0, 15, size=(8, 60)))
    raters, units, values = _long(matrix)
    # when
    alpha = krippendorff_alpha_interval(units=units, values=values)
    # then
    assert alpha == pytest.approx(_package(matrix), abs=1e-9)


def test_interval_alpha_equals_package_on_sparse_ratings():
    # given: 85% missing, many units with fewer than two values
    rng = np.random.default_rng(2)
    matrix = np.rint(rng.normal(50, 20, size=(30, 200)) + rng.normal(0, 20, size=200))
    matrix[rng.random(matrix.shape) < 0.85] = np.nan
    raters, units, values = _long(matrix)
    # when
    alpha = krippendorff_alpha_interval(units=units, values=values)
    # then
    assert alpha == pytest.approx(_package(matrix), abs=1e-9)


def test_interval_alpha_equals_package_on_krippendorffs_worked_example():
    # given: the reliability data of Krippendorff (2011), as in the package's docs
    nan = np.nan
    matrix = np.array(
        [
            [nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3],
            [1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan],
            [nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4],
        ]
    )
    raters, units, values = _long(matrix)
    # when
    alpha = krippendorff_alpha_interval(units=units, values=values)
    # then
    assert alpha == pytest.approx(_package(matrix), abs=1e-9)
    assert round(alpha, 3) == 0.811  # the value the package documents


def test_tiny_input_two_raters_two_units():
    # given
    matrix = np.array([[1.0, 2.0], [1.0, 3.0]])
    raters, units, values = _long(matrix)
    # then
    assert krippendorff_alpha_interval(units=units, values=values) == pytest.approx(
        _package(matrix), abs=1e-9
    )


def test_undefined_alpha_is_nan():
    # no unit with two values
    assert math.isnan(krippendorff_alpha_interval(units=[0, 1, 2], values=[1.0, 2.0, 3.0]))
    # no variation among pairable values
    assert math.isnan(krippendorff_alpha_interval(units=[0, 0, 1, 1], values=[5.0] * 4))
    assert math.isnan(krippendorff_alpha_interval(units=[], values=[]))


@settings(max_examples=150, deadline=None)
@given(
    st.integers(min_value=2, max_value=7).flatmap(
        lambda n_raters: st.integers(min_value=1, max_value=12).flatmap(
            lambda n_units: st.lists(
                st.one_of(st.none(), st.integers(min_value=0, max_value=10)),
                min_size=n_raters * n_units,
                max_size=n_raters * n_units,
            ).map(lambda cells: (n_raters, n_units, cells))
        )
    )
)
def test_interval_alpha_equals_package_on_random_tables(table):
    n_raters, n_units, cells = table
    matrix = np.array([np.nan if c is None else float(c) for c in cells]).reshape(n_raters, n_units)
    raters, units, values = _long(matrix)
    pairable = np.bincount(units, minlength=n_units)[units] >= 2
    distinct_pairable = np.unique(values[pairable]).size
    ours = krippendorff_alpha_interval(units=units, values=values)
    if distinct_pairable < 2:
        assert math.isnan(ours)  # the package raises or divides by zero here
        return
    assert ours == pytest.approx(_package(matrix), abs=1e-9)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "ratio"])
def test_other_levels_delegate_to_the_package(level):
    # given
    rng = np.random.default_rng(3)
    matrix = rng.integers(1, 6, size=(5, 30)).astype(float)
    matrix[rng.random(matrix.shape) < 0.3] = np.nan
    raters, units, values = _long(matrix)
    # when
    alpha = krippendorff_alpha(raters=raters, units=units, values=values, level=level)
    # then
    assert alpha == pytest.approx(_package(matrix, level), abs=1e-12)


def test_other_levels_refuse_a_repeated_rater_unit_pair():
    with pytest.raises(ValueError, match="more than one value"):
        krippendorff_alpha(
            raters=[0, 0, 1], units=[0, 0, 0], values=[1.0, 2.0, 3.0], level="nominal"
        )
