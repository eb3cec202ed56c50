"""Acceptance sampling: the operating characteristic against scipy's binomial CDF, and
the reproducible audit sample."""

import numpy as np
import pytest
from scipy import stats

from quality.stats.labels import audit_sample, operating_characteristic

RATES = [0.0, 0.001, 0.01, 0.05, 0.1, 0.2, 0.5, 0.9, 1.0]


@pytest.mark.parametrize(
    ("n", "c"), [(1, 0), (13, 0), (32, 1), (80, 2), (125, 3), (200, 5), (1250, 21), (50, 49)]
)
def test_operating_characteristic_equals_the_binomial_cdf(n, c):
    # when
    accept = operating_characteristic(sample_size=n, acceptance_number=c, defect_rates=RATES)
    # then
    np.testing.assert_allclose(accept, stats.binom.cdf(c, n, RATES), rtol=1e-12, atol=1e-15)
    assert all(isinstance(p, float) for p in accept)


def test_operating_characteristic_closed_forms():
    # given: c = 0 accepts only a clean sample, (1 - p)^n; c >= n accepts everything
    rates = [0.0, 0.02, 0.3, 1.0]
    # when
    zero = operating_characteristic(sample_size=20, acceptance_number=0, defect_rates=rates)
    everything = operating_characteristic(sample_size=5, acceptance_number=5, defect_rates=rates)
    # then
    assert zero == pytest.approx([(1 - p) ** 20 for p in rates], rel=1e-12, abs=0)
    assert everything == [1.0, 1.0, 1.0, 1.0]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sample_size": 0, "acceptance_number": 0}, "sample_size"),
        ({"sample_size": 2.5, "acceptance_number": 0}, "sample_size"),
        ({"sample_size": 5, "acceptance_number": -1}, "acceptance_number"),
        ({"sample_size": 5, "acceptance_number": 1, "defect_rates": [1.5]}, "defect_rates"),
        ({"sample_size": 5, "acceptance_number": 1, "defect_rates": [float("nan")]}, "defect"),
    ],
)
def test_operating_characteristic_rejects_impossible_plans(kwargs, message):
    with pytest.raises(ValueError, match=message):
        operating_characteristic(**{"defect_rates": [0.1], **kwargs})


def test_audit_sample_is_reproducible_and_independent_of_the_batch_order():
    # given
    ids = [f"v{i:04d}" for i in range(500)]
    # when
    first = audit_sample(item_ids=ids, sample_size=50, seed=3)
    shuffled = audit_sample(item_ids=list(reversed(ids)), sample_size=50, seed=3)
    other_seed = audit_sample(item_ids=ids, sample_size=50, seed=4)
    # then
    assert first == shuffled
    assert len(first) == len(set(first)) == 50 and set(first) <= set(ids)
    assert first == sorted(first)
    assert first != other_seed
    # then: the documented draw, the first n of a permutation of the sorted ids
    expected = np.sort(np.random.default_rng(3).permutation(500)[:50])
    assert first == [ids[i] for i in expected]


def test_audit_sample_of_a_small_batch_is_the_whole_batch():
    assert audit_sample(item_ids=["b", "a"], sample_size=5, seed=0) == ["a", "b"]
    assert audit_sample(item_ids=["b", "a"], sample_size=0, seed=0) == []


def test_audit_sample_rejects_repeated_ids_and_negative_sizes():
    with pytest.raises(ValueError, match="repeated"):
        audit_sample(item_ids=["a", "a"], sample_size=1, seed=0)
    with pytest.raises(ValueError, match="sample_size"):
        audit_sample(item_ids=["a"], sample_size=-1, seed=0)
