"""Bootstrapped SRCC curve against scipy.stats.spearmanr in a loop over the same draws,
and its grid of group sizes."""

import numpy as np
import pytest
from scipy import stats

from quality.stats.srcc_curve import (
    dimension_stream,
    group_sizes,
    rater_permutations,
    srcc_curve,
)
from tests.quality.synthetic import study


def _curve(frame, **options):
    """srcc_curve of the frame's ratings; returns the sorted rater ids and the curve."""
    raters, rater = np.unique(frame["rater_id"].to_numpy(), return_inverse=True)
    videos, video = np.unique(frame["video_id"].to_numpy(), return_inverse=True)
    curve = srcc_curve(
        rater=rater,
        video=video,
        score=frame["score"].to_numpy(float),
        n_raters=raters.size,
        n_videos=videos.size,
        **options,
    )
    return raters, curve


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


def _assert_equals_reference(frame, raters, curve, *, draws, seed, stream):
    perm = rater_permutations(n_raters=raters.size, draws=draws, seed=seed, stream=stream)
    for n, point in curve.items():
        expected = _reference_srccs(frame, raters, perm, n)
        assert point["draws"] == expected.size
        assert point["mean"] == pytest.approx(expected.mean(), abs=1e-9)
        low, high = np.percentile(expected, [2.5, 97.5])
        assert point["low"] == pytest.approx(low, abs=1e-9)
        assert point["high"] == pytest.approx(high, abs=1e-9)


def test_curve_equals_spearmanr_loop_on_the_same_draws():
    # given: sparse coverage, so the common videos differ from draw to draw
    frame = study(n_videos=60, n_raters=9, dimensions=("a",), coverage=0.5, seed=11)
    # when
    raters, curve = _curve(frame, draws=25, seed=3, stream=0)
    # then
    assert sorted(curve) == [1, 2, 3, 4]  # floor(9 / 2)
    _assert_equals_reference(frame, raters, curve, draws=25, seed=3, stream=0)


@pytest.mark.parametrize("coverage", [0.1, 0.5])  # sparse rows; dense (>= 1/8 rated)
def test_many_raters_give_the_grid_of_sizes_each_equal_to_the_reference(coverage):
    # given: a crowd of 200 raters who each rate a share of 60 videos
    frame = study(n_videos=60, n_raters=200, dimensions=("a",), coverage=coverage, seed=13)
    # when
    raters, curve = _curve(frame, draws=4, seed=1, stream=7)
    # then: the sizes past 30 are a grid, and each point is what the loop gives at its n
    assert list(curve) == group_sizes(100)
    assert list(curve)[30:] == [33, 36, 40, 44, 48, 53, 58, 64, 70, 77, 85, 94, 100]
    _assert_equals_reference(frame, raters, curve, draws=4, seed=1, stream=7)


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
    _, full = _curve(frame, draws=10)
    _, cut = _curve(frame, draws=10, max_n=2)
    assert sorted(cut) == [1, 2] and cut == {n: full[n] for n in (1, 2)}


def test_fewer_than_two_raters_give_no_curve():
    codes = np.zeros(5, dtype=int)
    curve = srcc_curve(rater=codes, video=np.arange(5), score=np.ones(5), n_raters=1, n_videos=5)
    assert curve == {}


def test_a_point_without_two_common_videos_or_with_a_constant_mos_is_left_out():
    # given: r0 and r1 share no video; r2 and r3 share two but r3 gives both the same score
    rater = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    video = np.array([0, 1, 2, 3, 4, 5, 4, 5])
    score = np.array([10.0, 20, 30, 40, 10, 20, 50, 50])
    for first, second in ((0, 1), (2, 3)):
        rows = np.isin(rater, (first, second))
        # when
        curve = srcc_curve(
            rater=rater[rows] - first,
            video=video[rows],
            score=score[rows],
            n_raters=2,
            n_videos=6,
            draws=5,
        )
        # then
        assert curve[1]["draws"] == 0 and np.isnan(curve[1]["mean"])


def test_group_sizes_are_every_n_up_to_30_then_a_growing_grid_ending_at_the_top():
    assert group_sizes(0) == []
    assert group_sizes(27) == list(range(1, 28))
    assert group_sizes(30) == list(range(1, 31))
    assert group_sizes(31) == [*range(1, 31), 31]
    sizes = group_sizes(1500)
    assert sizes[:30] == list(range(1, 31)) and sizes[-1] == 1500
    steps = np.diff(sizes)
    assert (steps >= 1).all() and len(set(sizes)) == len(sizes)
    assert (np.array(sizes[31:-1]) / np.array(sizes[30:-2]) <= 1.12).all()
    assert len(sizes) < 80
    assert group_sizes(5, every_up_to=2, growth=2.0) == [1, 2, 4, 5]
