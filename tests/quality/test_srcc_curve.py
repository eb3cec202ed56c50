"""Bootstrapped SRCC curve against scipy.stats.spearmanr in a loop over the same draws."""

import numpy as np
import pytest
from scipy import stats

from quality.stats.srcc_curve import (
    dense_sums,
    dimension_stream,
    rater_permutations,
    srcc_curve,
)
from tests.quality.synthetic import study


def _matrices(frame):
    raters, rater = np.unique(frame["rater_id"].to_numpy(), return_inverse=True)
    videos, video = np.unique(frame["video_id"].to_numpy(), return_inverse=True)
    sums, counts = dense_sums(
        rater=rater,
        video=video,
        score=frame["score"].to_numpy(float),
        n_raters=raters.size,
        n_videos=videos.size,
    )
    return raters, sums, counts


def _reference_srccs(frame, raters, perm, n):
    """Per draw: each group's MOS (pandas groupby mean of its raters' raw scores) over
    the videos both groups rated, then scipy's spearmanr."""
    values = []
    for p in perm:
        group_a, group_b = raters[p[0 : 2 * n : 2]], raters[p[1 : 2 * n : 2]]
        mos_a = frame[frame["rater_id"].isin(group_a)].groupby("video_id")["score"].mean()
        mos_b = frame[frame["rater_id"].isin(group_b)].groupby("video_id")["score"].mean()
        common = mos_a.index.intersection(mos_b.index)
        rho = stats.spearmanr(mos_a[common], mos_b[common]).statistic
        if np.isfinite(rho):
            values.append(rho)
    return np.array(values)


def test_curve_equals_spearmanr_loop_on_the_same_draws():
    # given: sparse coverage, so the common videos differ from draw to draw
    frame = study(n_videos=60, n_raters=9, dimensions=("a",), coverage=0.5, seed=11)
    raters, sums, counts = _matrices(frame)
    draws, seed, stream = 25, 3, 0
    # when
    curve = srcc_curve(sums=sums, counts=counts, draws=draws, seed=seed, stream=stream)
    # then
    assert sorted(curve) == [1, 2, 3, 4]  # floor(9 / 2)
    perm = rater_permutations(n_raters=raters.size, draws=draws, seed=seed, stream=stream)
    for n, point in curve.items():
        expected = _reference_srccs(frame, raters, perm, n)
        assert point["draws"] == expected.size
        assert point["mean"] == pytest.approx(expected.mean(), abs=1e-9)
        low, high = np.percentile(expected, [2.5, 97.5])
        assert point["low"] == pytest.approx(low, abs=1e-9)
        assert point["high"] == pytest.approx(high, abs=1e-9)


def test_groups_are_disjoint_and_of_size_n():
    perm = rater_permutations(n_raters=11, draws=50, seed=0, stream=2)
    for n in range(1, 6):
        for p in perm:
            group_a, group_b = set(p[0 : 2 * n : 2]), set(p[1 : 2 * n : 2])
            assert len(group_a) == len(group_b) == n and not group_a & group_b


def test_a_dimension_stream_depends_only_on_its_name():
    assert (
        dimension_stream("subject") == dimension_stream("subject") == 4224597626
    )  # zlib.crc32(b"subject")
    assert dimension_stream("subject") != dimension_stream("interaction")


def test_draws_are_seeded_and_differ_between_streams():
    one = rater_permutations(n_raters=20, draws=10, seed=5, stream=0)
    assert np.array_equal(one, rater_permutations(n_raters=20, draws=10, seed=5, stream=0))
    assert not np.array_equal(one, rater_permutations(n_raters=20, draws=10, seed=5, stream=1))
    assert not np.array_equal(one, rater_permutations(n_raters=20, draws=10, seed=6, stream=0))


def test_max_n_cuts_the_curve_and_keeps_the_first_points():
    frame = study(n_videos=30, n_raters=10, dimensions=("a",), coverage=0.9, seed=12)
    _, sums, counts = _matrices(frame)
    full = srcc_curve(sums=sums, counts=counts, draws=10)
    cut = srcc_curve(sums=sums, counts=counts, draws=10, max_n=2)
    assert sorted(cut) == [1, 2] and cut == {n: full[n] for n in (1, 2)}


def test_fewer_than_two_raters_give_no_curve():
    sums, counts = np.ones((1, 5)), np.ones((1, 5))
    assert srcc_curve(sums=sums, counts=counts) == {}
