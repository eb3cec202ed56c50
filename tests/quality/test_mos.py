"""Z-scores per (rater, session, dimension), MOS, CI and All-Combined against pandas/scipy."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from quality.stats.mos import all_combined, mos_table, rescale_min_max
from quality.stats.ratings import encode_ratings
from quality.stats.zscore import zscores
from tests.quality.synthetic import study


def _pandas_z(frame: pd.DataFrame, keys: list[str]) -> pd.Series:
    groups = frame.groupby(keys)["score"]
    mean = groups.transform("mean")
    std = groups.transform(lambda s: s.std(ddof=0))
    return ((frame["score"] - mean) / std).where(std > 0, 0.0)


def test_zscores_are_per_rater_session_and_dimension():
    # given
    frame = study(sessions=3, seed=1)
    # when
    z = zscores(encode_ratings(ratings=frame))
    # then
    expected = _pandas_z(frame, ["rater_id", "session_id", "dimension"])
    np.testing.assert_allclose(z, expected.to_numpy(), rtol=0, atol=1e-12)
    # and the session matters: per (rater, dimension) alone is different
    assert not np.allclose(z, _pandas_z(frame, ["rater_id", "dimension"]).to_numpy())


def test_zscores_without_sessions_are_per_rater_and_dimension():
    frame = study(sessions=3, seed=2).drop(columns="session_id")
    z = zscores(encode_ratings(ratings=frame))
    expected = _pandas_z(frame, ["rater_id", "dimension"])
    np.testing.assert_allclose(z, expected.to_numpy(), rtol=0, atol=1e-12)


def test_a_constant_group_and_a_single_rating_get_z_zero():
    # given: rater c gives 0.1 three times (a sum that does not round-trip exactly)
    frame = pd.DataFrame(
        {
            "rater_id": ["c", "c", "c", "s", "m", "m"],
            "video_id": ["v1", "v2", "v3", "v1", "v1", "v2"],
            "dimension": ["a"] * 6,
            "score": [0.1, 0.1, 0.1, 40.0, 10.0, 30.0],
        }
    )
    # then: population std (ddof=0): m's two scores are -1 and +1
    assert zscores(encode_ratings(ratings=frame)).tolist() == [0, 0, 0, 0, -1.0, 1.0]


def test_mos_table_equals_pandas_groupby_and_scipy_intervals():
    # given
    frame = study(sessions=2, seed=3)
    table = encode_ratings(ratings=frame)
    # when
    mos = mos_table(table=table, z=zscores(table), confidence=0.95)
    # then
    frame = frame.assign(z=_pandas_z(frame, ["rater_id", "session_id", "dimension"]))
    by = frame.groupby(["video_id", "dimension"])
    expected = by.agg(zmos=("z", "mean"), raw=("score", "mean"), std=("score", "std"))
    expected["n"] = by.size()
    merged = mos.merge(expected.reset_index(), on=["video_id", "dimension"], validate="1:1")
    assert len(merged) == len(expected) == len(mos)
    np.testing.assert_allclose(merged["mos_raw"], merged["raw"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(merged["std_x"], merged["std_y"], rtol=0, atol=1e-9)
    assert (merged["n_x"] == merged["n_y"]).all()
    for _, part in merged.groupby("dimension"):
        zmos = part["zmos"]
        rescaled = 100 * (zmos - zmos.min()) / (zmos.max() - zmos.min())
        np.testing.assert_allclose(part["mos"], rescaled, rtol=0, atol=1e-9)
        assert part["mos"].min() == 0.0 and part["mos"].max() == 100.0
    low, high = stats.t.interval(
        0.95, merged["n_x"] - 1, loc=merged["raw"], scale=merged["std_y"] / np.sqrt(merged["n_x"])
    )
    np.testing.assert_allclose(merged["ci95_low_raw"], low, rtol=0, atol=1e-9)
    np.testing.assert_allclose(merged["ci95_high_raw"], high, rtol=0, atol=1e-9)


def test_single_rating_has_no_std_and_no_interval():
    frame = pd.DataFrame(
        {"rater_id": ["r"], "video_id": ["v"], "dimension": ["a"], "score": [42.0]}
    )
    table = encode_ratings(ratings=frame)
    row = mos_table(table=table, z=zscores(table)).iloc[0]
    assert (row["mos"], row["mos_raw"], row["n"]) == (50.0, 42.0, 1)
    assert np.isnan(row["std"]) and np.isnan(row["ci95_low_raw"]) and np.isnan(row["ci95_high_raw"])


def test_all_combined_sums_dimensions_and_rescales_only_complete_videos():
    # given: v3 lacks dimension b
    mos = pd.DataFrame(
        {
            "video_id": ["v1", "v2", "v3", "v1", "v2", "v4"],
            "dimension": ["a", "a", "a", "b", "b", "b"],
            "mos": [0.0, 100.0, 50.0, 100.0, 20.0, 30.0],
        }
    )
    # when
    combined = all_combined(mos=mos, dimensions=["a", "b"])
    # then: sums 100 and 120 -> 0 and 100
    assert combined.to_dict(orient="list") == {
        "video_id": ["v1", "v2"],
        "all_combined": [0.0, 100.0],
    }


def test_rescale_ends_are_exactly_zero_and_one_hundred():
    # given: values where 100 * (v - min) / (max - min) rounds to 100.00000000000001
    assert 100.0 * (0.7 - 0.3) / (0.7 - 0.3) > 100.0
    rng = np.random.default_rng(8)
    samples = [np.array([0.3, 0.7]), np.array([0.1, -0.7])] + [
        rng.normal(size=7) * 10.0 ** rng.uniform(-8, 8) + rng.normal() for _ in range(2000)
    ]
    for values in samples:
        # when
        rescaled = rescale_min_max(values)
        # then
        assert (rescaled.min(), rescaled.max()) == (0.0, 100.0)
        assert ((rescaled >= 0.0) & (rescaled <= 100.0)).all()


def test_rescale_of_equal_values_is_fifty():
    assert rescale_min_max(np.array([3.0, 3.0])).tolist() == [50.0, 50.0]
    assert rescale_min_max(np.array([1.0, 2.0, 5.0])).tolist() == [0.0, 25.0, 100.0]


@pytest.mark.parametrize("confidence", [0.9, 0.99])
def test_interval_follows_the_confidence_level(confidence):
    frame = study(n_videos=5, n_raters=6, dimensions=("a",), coverage=1.0, seed=4)
    table = encode_ratings(ratings=frame)
    mos = mos_table(table=table, z=zscores(table), confidence=confidence)
    scores = frame[frame["video_id"] == mos["video_id"].iloc[0]]["score"]
    low, high = stats.t.interval(confidence, len(scores) - 1, scores.mean(), stats.sem(scores))
    assert (mos["ci95_low_raw"].iloc[0], mos["ci95_high_raw"].iloc[0]) == pytest.approx((low, high))
