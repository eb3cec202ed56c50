"""Average ranks of many rows at once, and Spearman's rho as Pearson's r of those ranks.

Spearman's rho with ties is the Pearson correlation of average ranks (what
``scipy.stats.spearmanr`` computes). Ranking is the cost of the bootstrapped SRCC curve
(thousands of rows of ~10^4 values), so rows are not argsorted: each value becomes an
integer key whose high bits follow the value's order and whose low bits are its column
index, and ONE ``np.sort`` of the keys yields the permutation (sorting integers is
several times faster than ``argsort``). Two tiers of keys:

1. uint32: the value's position on a fixed-point grid over [low, high] (as many bits as
   the column index leaves). Values closer than one grid step may come out in index
   order instead of value order.
2. uint64 for the rows where that happened: the float's order-preserving bit pattern,
   with only its last mantissa bits given up to the index.

After each tier every row is checked to be in value order, and a row still out of order
is argsorted. Ranks are therefore exact for every input; the tiers only decide the speed
(tier 1 suffices when distinct values are never closer than (high - low) / 2^18, as for
means of whole-number scores over fewer than ~50 ratings on a 0-100 scale). Average
ranks of tied runs are then read off the sorted values in flat (all rows at once) passes.
"""

from __future__ import annotations

import numpy as np

_SIGN = np.uint64(1 << 63)
# Values ranked per block in spearman_masked_inf: 2^16 float64 = 512 KiB.
_CACHE_ELEMENTS = 1 << 16


def _ordered_bits(values: np.ndarray) -> np.ndarray:
    """uint64 keys whose unsigned order is the float order of ``values``."""
    bits = values.view(np.uint64)
    if not np.signbit(values).any():
        return bits  # non-negative floats already sort as unsigned integers
    bits = (values + 0.0).view(np.uint64)  # -0.0 -> +0.0
    return np.where((bits & _SIGN) != 0, ~bits, bits | _SIGN)


def _grid_keys(values: np.ndarray, index_bits: int, bounds: tuple[float, float] | None):
    """Tier 1: uint32 keys = grid cell of the value (+inf: the last cell) | column index."""
    value_bits = 32 - index_bits
    top = float((1 << value_bits) - 1)
    if bounds is None:
        finite = values[np.isfinite(values)]
        bounds = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 0.0)
    low, high = bounds
    scale = (top - 1.0) / (high - low) if high > low else 1.0
    cell = values - low
    cell *= scale
    np.minimum(cell, top, out=cell)  # +inf and anything above `high` in the last cell
    np.maximum(cell, 0.0, out=cell)
    keys = cell.astype(np.uint32)
    keys <<= np.uint32(index_bits)
    keys |= np.arange(values.shape[1], dtype=np.uint32)
    return keys


def _bit_keys(values: np.ndarray, index_bits: int) -> np.ndarray:
    """Tier 2: uint64 keys = float bits (last index_bits mantissa bits dropped) | index."""
    low = np.uint64((1 << index_bits) - 1)
    keys = _ordered_bits(values) & ~low
    keys |= np.arange(values.shape[1], dtype=keys.dtype)
    return keys


def _sorted_by_keys(values: np.ndarray, keys: np.ndarray, index_bits: int):
    """Sort keys per row. Returns the flat order (indices into values.ravel()), the
    values in that order, and which rows came out out of value order."""
    rows, cols = values.shape
    keys.sort(axis=1)
    order = (keys & keys.dtype.type((1 << index_bits) - 1)).astype(np.int64)
    order += (np.arange(rows, dtype=np.int64) * cols)[:, None]
    order = order.ravel()
    sorted_values = values.ravel()[order]
    by_row = sorted_values.reshape(rows, cols)
    disorder = np.any(by_row[:, 1:] < by_row[:, :-1], axis=1)
    return order, sorted_values, disorder


def _row_orders(
    values: np.ndarray, bounds: tuple[float, float] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Flat indices into values.ravel() that sort every row, and the sorted values."""
    rows, cols = values.shape
    index_bits = max(1, int(cols - 1).bit_length())
    grid = index_bits <= 24
    keys = _grid_keys(values, index_bits, bounds) if grid else _bit_keys(values, index_bits)
    order, sorted_values, disorder = _sorted_by_keys(values, keys, index_bits)
    del keys
    if disorder.any():
        order, sorted_values = order.reshape(rows, cols), sorted_values.reshape(rows, cols)
        again = np.flatnonzero(disorder)
        part = values[again]
        if grid:
            fix, fix_sorted, still = _sorted_by_keys(part, _bit_keys(part, index_bits), index_bits)
            fix = fix.reshape(part.shape) - (np.arange(again.size) * cols)[:, None]
            order[again] = fix + (again * cols)[:, None]
            sorted_values[again] = fix_sorted.reshape(part.shape)
            disorder[again] = still
        for row in np.flatnonzero(disorder):
            column_order = np.argsort(values[row], kind="stable")
            order[row] = column_order + row * cols
            sorted_values[row] = values[row, column_order]
        order, sorted_values = order.ravel(), sorted_values.ravel()
    return order, sorted_values


def average_ranks(values: np.ndarray) -> np.ndarray:
    """Average (1-based) ranks along the last axis, as ``scipy.stats.rankdata`` per row.

    NaN is not allowed (mask with +inf instead: +inf ranks after every finite value).
    """
    values = np.ascontiguousarray(values, dtype=np.float64)
    squeeze = values.ndim == 1
    values = np.atleast_2d(values)
    if values.size == 0:
        return np.empty(values.shape[-1:] if squeeze else values.shape)
    if np.isnan(values).any():
        raise ValueError("cannot rank NaN")
    ranks = _average_ranks_2d(values)
    return ranks[0] if squeeze else ranks


def _average_ranks_2d(
    values: np.ndarray,
    *,
    inf_rank_zero: bool = False,
    bounds: tuple[float, float] | None = None,
) -> np.ndarray:
    """average_ranks of a C-contiguous 2-d float64 array without NaN.

    inf_rank_zero: give +inf entries (masked-out columns) rank 0 instead of their rank.
    bounds: (low, high) of the finite values when known (saves a pass; only speed).
    """
    rows, cols = values.shape
    order, sorted_values = _row_orders(values, bounds)
    size = sorted_values.size
    # Runs of equal values; every row starts a run.
    new_run = np.empty(size, dtype=bool)
    new_run[0] = True
    np.not_equal(sorted_values[1:], sorted_values[:-1], out=new_run[1:])
    new_run[::cols] = True
    starts = np.flatnonzero(new_run)
    ends = np.empty_like(starts)  # one past the run's last position
    ends[:-1] = starts[1:]
    ends[-1] = size
    # Average of the 1-based in-row positions start+1 .. end: (start + end + 1) / 2.
    # Runs never span rows; each run's row offset by repeating the row's first flat index
    # over the runs of that row (a division per run would cost more than the sort).
    row_first_run = np.searchsorted(starts, np.arange(rows) * cols)
    runs_per_row = np.diff(np.append(row_first_run, starts.size))
    offset = np.repeat(np.arange(rows, dtype=np.int64) * cols, runs_per_row)
    run_rank = (starts + ends + 1 - 2 * offset) * 0.5
    if inf_rank_zero:
        run_rank[sorted_values[starts] == np.inf] = 0.0
    run_id = np.cumsum(new_run, dtype=np.int32 if size < 2**31 else np.int64)
    run_id -= 1
    ranks = np.empty(size)
    ranks[order] = run_rank[run_id]
    return ranks.reshape(rows, cols)


def spearman_rows(a: np.ndarray, b: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Spearman's rho of a[i] and b[i] for every row i, over the columns where mask[i].

    Columns outside the mask are ignored (kept columns are ranked among themselves).
    NaN where a row has fewer than 2 kept columns or either side is constant, as scipy.
    With m kept columns the ranks sum to m (m + 1) / 2, so
    rho = (sum ra rb - m c^2) / sqrt((sum ra^2 - m c^2)(sum rb^2 - m c^2)), c = (m + 1) / 2;
    ranks are multiples of 1/2, so these sums are exact in float64 while 4 m^3 <= 2^53
    (m up to 131,072 columns), and a constant side gives a variance of exactly 0.
    """
    a = np.atleast_2d(np.asarray(a, dtype=np.float64))
    b = np.atleast_2d(np.asarray(b, dtype=np.float64))
    mask = np.ones(a.shape, dtype=bool) if mask is None else np.atleast_2d(mask)
    kept_a, kept_b = np.where(mask, a, np.inf), np.where(mask, b, np.inf)
    if np.isnan(kept_a).any() or np.isnan(kept_b).any():
        raise ValueError("cannot rank NaN (mask it out)")
    return spearman_masked_inf(kept_a, kept_b, mask.sum(axis=1))


def spearman_masked_inf(
    a: np.ndarray,
    b: np.ndarray,
    m: np.ndarray,
    bounds: tuple[float, float] | None = None,
) -> np.ndarray:
    """spearman_rows for rows whose masked-out columns already hold +inf in both a and b
    (and nowhere else), with m[i] the number of kept columns of row i. No NaN allowed.
    bounds: (low, high) of the finite values of a and b when known (speed only)."""
    # +inf sorts after every finite value: kept columns get ranks 1..m among themselves,
    # and masked ones rank 0 so that they drop out of the sums below.
    rows, cols = a.shape
    sum_ab, sum_aa, sum_bb = np.empty(rows), np.empty(rows), np.empty(rows)
    # A few rows at a time: the dozen passes of ranking then stay in the CPU cache
    # (twice as fast as whole 100 x 9,180 batches on a 512 KiB-L2 machine).
    step = max(1, _CACHE_ELEMENTS // max(cols, 1))
    for start in range(0, rows, step):
        part = slice(start, start + step)
        rank_a = _average_ranks_2d(a[part], inf_rank_zero=True, bounds=bounds)
        rank_b = _average_ranks_2d(b[part], inf_rank_zero=True, bounds=bounds)
        sum_ab[part] = np.einsum("ij,ij->i", rank_a, rank_b)
        sum_aa[part] = np.einsum("ij,ij->i", rank_a, rank_a)
        sum_bb[part] = np.einsum("ij,ij->i", rank_b, rank_b)
    m = np.asarray(m, dtype=np.float64)
    mcc = m * ((m + 1) / 2.0) ** 2
    cov, var_a, var_b = sum_ab - mcc, sum_aa - mcc, sum_bb - mcc
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.clip(cov / np.sqrt(var_a * var_b), -1.0, 1.0)
    return np.where((m >= 2) & (var_a > 0) & (var_b > 0), rho, np.nan)


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rho of two 1-d samples (NaN when undefined)."""
    return float(spearman_rows(np.asarray(a)[None, :], np.asarray(b)[None, :])[0])
