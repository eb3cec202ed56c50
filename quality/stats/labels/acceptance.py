"""Acceptance sampling for expert audits of labelled batches.

A single sampling plan (n, c) (ISO 2859-1:1999; Dodge & Romig, "Sampling Inspection
Tables", 2nd ed., 1959): the experts check n items drawn at random from a batch and
accept the batch when at most c of them are wrong. With a defect rate p and a large
batch, the number of wrong items X in the sample is Binomial(n, p), so the plan's
operating characteristic (probability of acceptance) is

    P_a(p) = P(X <= c) = sum_{k=0..c} C(n, k) p^k (1 - p)^(n - k) = I_{1-p}(n - c, c + 1),

I the regularised incomplete beta function (the identity of the binomial tail,
Abramowitz & Stegun 26.5.24, 1964), which is exact for every n without summing terms.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import special


def operating_characteristic(
    *, sample_size: int, acceptance_number: int, defect_rates: Sequence[float]
) -> list[float]:
    """P(accept) = P(X <= c), X ~ Binomial(sample_size, p), for each p in defect_rates
    (see the module docstring). Raises ValueError for n < 1, c < 0 or p outside [0, 1]."""
    if int(sample_size) != sample_size or sample_size < 1:
        raise ValueError("sample_size must be a whole number of at least 1")
    if int(acceptance_number) != acceptance_number or acceptance_number < 0:
        raise ValueError("acceptance_number must be a whole number of at least 0")
    rates = np.asarray(defect_rates, dtype=np.float64).ravel()
    if not np.all((rates >= 0.0) & (rates <= 1.0)):
        raise ValueError("defect_rates must lie in [0, 1]")
    if acceptance_number >= sample_size:
        return [1.0] * rates.size  # the whole sample may be wrong
    accept = special.betainc(sample_size - acceptance_number, acceptance_number + 1, 1.0 - rates)
    return [float(p) for p in accept]


def audit_sample(*, item_ids: Sequence[str], sample_size: int, seed: int) -> list[str]:
    """``sample_size`` of the items, drawn without replacement, in id order.

    Reproducible: the ids are sorted first, so the same batch (in any order) and seed
    give the same sample; the draw is the first ``sample_size`` of a permutation by
    ``numpy.random.default_rng(seed)``. A sample at least as large as the batch is the
    whole batch (100 % inspection, as ISO 2859-1 prescribes then). Raises ValueError for
    a repeated id or a negative sample size.
    """
    ids = sorted(str(i) for i in item_ids)
    if len(set(ids)) != len(ids):
        raise ValueError("item_ids has a repeated id")
    if int(sample_size) != sample_size or sample_size < 0:
        raise ValueError("sample_size must be a whole number of at least 0")
    if sample_size >= len(ids):
        return ids
    chosen = np.random.default_rng(seed).permutation(len(ids))[:sample_size]
    return [ids[i] for i in np.sort(chosen).tolist()]
