"""Combined integer keys (e.g. unit * n_levels + level): their distinct values, counts
and numbering, by a dense bincount when the key space is small (no sort, O(n)) and by
sorting (``np.unique``) otherwise. Both give the distinct keys in increasing order.
"""

from __future__ import annotations

import numpy as np

# Below this many possible keys a dense bincount is cheaper than sorting the keys.
DENSE_KEYS = 1 << 26


def key_counts(keys: np.ndarray, *, n_keys: int) -> tuple[np.ndarray, np.ndarray]:
    """(distinct keys in increasing order, how often each occurs) of keys in [0, n_keys)."""
    if n_keys <= DENSE_KEYS:
        counts = np.bincount(keys, minlength=n_keys)
        present = np.flatnonzero(counts)
        return present, counts[present]
    return np.unique(keys, return_counts=True)


def key_codes(keys: np.ndarray, *, n_keys: int) -> tuple[np.ndarray, np.ndarray]:
    """(distinct keys in increasing order, each key's index among them)."""
    if n_keys <= DENSE_KEYS:
        present = np.bincount(keys, minlength=n_keys) > 0
        return np.flatnonzero(present), (np.cumsum(present) - 1)[keys]
    distinct, codes = np.unique(keys, return_inverse=True)
    return distinct, codes.ravel()
