"""run_analysis end to end on a small study: exclusions, MOS, alpha, curve, summary."""

import json
import math

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from quality.stats.analysis import ANALYSIS_VERSION, AnalysisSettings, run_analysis
from quality.stats.mos import MOS_COLUMNS
from quality.stats.ratings import RatingsError
from tests.quality.synthetic import study


@pytest.fixture(scope="module")
def ratings() -> pd.DataFrame:
    frame = study(n_videos=50, n_raters=10, sessions=2, seed=21)
    # rater "lazy" answers 50 to 60% of the videos (a line clicker)
    lazy = frame[frame["rater_id"] == "r0"].copy()
    lazy["rater_id"] = "lazy"
    lazy.loc[lazy.index[: int(0.6 * len(lazy))], "score"] = 50.0
    return pd.concat([frame, lazy], ignore_index=True)


@pytest.fixture(scope="module")
def result(ratings):
    return run_analysis(ratings=ratings, settings=AnalysisSettings(draws=20, seed=1))


def test_the_line_clicker_is_excluded_with_its_figures(result, ratings):
    assert [(e.rater_id, e.reason, e.top_score) for e in result.exclusions] == [
        ("lazy", "line_clicker", 50.0)
    ]
    n_lazy = int((ratings["rater_id"] == "lazy").sum())
    assert result.exclusions[0].n_ratings == n_lazy
    assert result.n_ratings_kept == len(ratings) - n_lazy
    assert (result.n_raters, result.n_raters_kept) == (11, 10)


def test_mos_uses_only_kept_raters(result, ratings):
    kept = ratings[ratings["rater_id"] != "lazy"]
    expected = kept.groupby(["video_id", "dimension"])["score"].mean()
    assert list(result.mos.columns) == list(MOS_COLUMNS)
    got = result.mos.set_index(["video_id", "dimension"])["mos_raw"]
    pd.testing.assert_series_equal(
        got.sort_index(), expected.sort_index(), check_names=False, atol=1e-9, rtol=0
    )


def test_alpha_per_dimension_equals_the_package_on_kept_raters(result, ratings):
    kept = ratings[ratings["rater_id"] != "lazy"]
    for dimension, part in kept.groupby("dimension"):
        matrix = part.pivot(index="rater_id", columns="video_id", values="score").to_numpy()
        expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="interval")
        assert result.alpha[dimension] == pytest.approx(expected, abs=1e-9)


def test_curve_has_a_point_per_group_size(result):
    for dimension in ("subject", "completeness", "interaction"):
        points = result.srcc_curve[dimension]
        assert sorted(points) == [1, 2, 3, 4, 5]  # 10 kept raters
        assert all(p["low"] <= p["mean"] <= p["high"] for p in points.values())


def test_dimension_correlation_equals_scipy_on_the_mos(result):
    wide = result.mos.pivot(index="video_id", columns="dimension", values="mos")
    first = result.dimension_correlation[0]
    assert (first.dimension_a, first.dimension_b) == ("subject", "completeness")
    x, y = wide["subject"], wide["completeness"]
    assert first.spearman == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert first.kendall == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)


def test_summary_is_json_ready_with_the_documented_keys(result):
    summary = json.loads(json.dumps(result.summary_dict(), allow_nan=False))
    assert summary["version"] == ANALYSIS_VERSION
    assert summary["line_clickers"] == ["lazy"]
    assert summary["exclusions"][0]["reason"] == "line_clicker"
    assert set(summary["alpha"]) == {"subject", "completeness", "interaction"}
    assert summary["srcc_curve"]["subject"]["1"] == result.srcc_curve["subject"][1]["mean"]
    assert (
        summary["srcc_curve_detail"]["subject"]["5"]["high"]
        == (result.srcc_curve["subject"][5]["high"])
    )
    assert summary["settings"] == {
        "line_click_share": 0.4,
        "slider_step": 1.0,
        "draws": 20,
        "seed": 1,
        "srcc_max_n": None,
        "confidence": 0.95,
    }
    assert len(summary["all_combined"]) == 50
    assert min(summary["all_combined"].values()) == 0.0
    assert max(summary["all_combined"].values()) == 100.0


def test_same_settings_give_the_same_result(ratings, result):
    again = run_analysis(ratings=ratings, settings=AnalysisSettings(draws=20, seed=1))
    assert again.summary_dict() == result.summary_dict()


def test_row_order_does_not_change_the_result(ratings, result):
    shuffled = ratings.sample(frac=1.0, random_state=4).reset_index(drop=True)
    again = run_analysis(ratings=shuffled, settings=AnalysisSettings(draws=20, seed=1))
    mine, theirs = again.summary_dict(), result.summary_dict()
    # only the order of the dimensions (first appearance) may differ
    assert sorted(mine.pop("dimensions")) == sorted(theirs.pop("dimensions"))

    def pairs(summary):
        return {
            frozenset((c["dimension_a"], c["dimension_b"])): (c["spearman"], c["kendall"])
            for c in summary.pop("dimension_correlation")
        }

    assert pairs(mine) == pairs(theirs)
    # z-scores are summed in row order: equal to rounding
    assert mine.pop("all_combined") == pytest.approx(theirs.pop("all_combined"), abs=1e-9)
    assert mine == theirs
    order = ["video_id", "dimension"]
    pd.testing.assert_frame_equal(
        again.mos.sort_values(order).reset_index(drop=True),
        result.mos.sort_values(order).reset_index(drop=True),
    )


def test_categories_give_the_dimension_order(ratings):
    frame = ratings.assign(
        dimension=pd.Categorical(
            ratings["dimension"], categories=["unused", "interaction", "completeness", "subject"]
        )
    )
    result = run_analysis(ratings=frame, settings=AnalysisSettings(draws=2))
    assert result.dimensions == ["interaction", "completeness", "subject"]
    assert result.mos["dimension"].unique().tolist() == result.dimensions


def test_categorical_and_integer_columns_as_the_django_selector_builds_them(ratings):
    # given: the shape of quality.selectors.ratings_frame
    frame = ratings.assign(
        rater_id=pd.Categorical(ratings["rater_id"]),
        video_id=ratings["video_id"].str[1:].astype(np.int64),
        dimension=pd.Categorical(ratings["dimension"]),
        session_id=ratings["session_id"].astype(np.int64),
    )
    # when
    result = run_analysis(ratings=frame, settings=AnalysisSettings(draws=5))
    # then
    assert result.mos["video_id"].dtype == np.int64
    assert json.dumps(result.summary_dict()["all_combined"])
    assert result.summary_dict()["line_clickers"] == ["lazy"]


def test_every_rater_excluded_gives_an_empty_result():
    frame = pd.DataFrame(
        {"rater_id": ["a", "a"], "video_id": ["v1", "v2"], "dimension": "d", "score": 5.0}
    )
    result = run_analysis(ratings=frame, settings=AnalysisSettings())
    assert result.mos.empty and result.alpha == {} and result.srcc_curve == {}
    assert result.summary_dict()["line_clickers"] == ["a"]


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        (pd.DataFrame({"rater_id": ["a"], "video_id": ["v"], "score": [1.0]}), "dimension"),
        (pd.DataFrame(columns=["rater_id", "video_id", "dimension", "score"]), "no ratings"),
        (
            pd.DataFrame({"rater_id": ["a"], "video_id": ["v"], "dimension": "d", "score": ["x"]}),
            "row 0: score 'x'",
        ),
        (
            pd.DataFrame({"rater_id": [None], "video_id": ["v"], "dimension": "d", "score": [1.0]}),
            "rater_id is missing",
        ),
    ],
)
def test_unusable_tables_raise_ratings_error(frame, message):
    with pytest.raises(RatingsError, match=message):
        run_analysis(ratings=frame, settings=AnalysisSettings())


def test_nan_alpha_when_nobody_overlaps():
    frame = pd.DataFrame(
        {
            "rater_id": ["a", "a", "b", "b"],
            "video_id": ["v1", "v2", "v3", "v4"],
            "dimension": "d",
            "score": [1.0, 2.0, 3.0, 4.0],
        }
    )
    result = run_analysis(ratings=frame, settings=AnalysisSettings(line_click_share=1.0))
    assert math.isnan(result.alpha["d"])
    assert math.isnan(result.srcc_curve["d"][1]["mean"])
