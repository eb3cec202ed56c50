"""``analyse`` end to end: the rater bootstrap (each replicate is choix on the resampled
raters' judgments), percentile and rank intervals, determinism, the summary."""

import json

import choix
import numpy as np
import pandas as pd
import pytest
from scipy.stats import rankdata

from quality.commands.io import json_ready
from quality.stats.preference import (
    PREFERENCE_VERSION,
    SCALE_COLUMNS,
    PreferenceSettings,
    analyse,
)
from quality.stats.preference.bootstrap import rater_weights
from quality.stats.preference.synthetic import simulate_judgments

STRENGTHS = [0.0, 0.4, 0.9, -0.3, 1.2]


def two_question_study(seed: int = 0) -> pd.DataFrame:
    first = simulate_judgments(strengths=STRENGTHS, raters=5, per_pair=3, seed=seed)
    second = simulate_judgments(
        strengths=STRENGTHS[::-1], raters=5, per_pair=2, question="motion", seed=seed + 1
    )
    return pd.concat([first, second], ignore_index=True)


def choix_scale(frame: pd.DataFrame, names: list[str]) -> np.ndarray:
    """choix's ML Bradley-Terry on the half-win data, centred."""
    index = {name: i for i, name in enumerate(names)}
    data = []
    for row in frame.itertuples(index=False):
        left, right = index[row.left], index[row.right]
        if row.choice == "equal":
            data += [(left, right), (right, left)]
        else:
            pair = (left, right) if row.choice == "left" else (right, left)
            data += [pair, pair]
    params = choix.opt_pairwise(len(names), data, alpha=0, tol=1e-12)
    return params - params.mean()


def test_each_bootstrap_replicate_is_the_fit_of_the_resampled_raters_judgments():
    # given: raters drawn with replacement, each draw bringing all its judgments of both
    # questions (the weights are the draw counts of the seeded generator)
    frame = two_question_study()
    settings = PreferenceSettings(bootstrap=6, seed=11, prior=0.0, screen=False)
    raters = sorted(frame["rater_id"].unique())
    weights = rater_weights(n_raters=len(raters), replicates=6, seed=11)
    # when
    result = analyse(frame, settings=settings)
    # then
    for question in ("motion", "video quality"):
        names = result.bootstrap_conditions[question]
        part = frame[frame["question"] == question]
        for replicate in range(6):
            resampled = pd.concat(
                [
                    part[part["rater_id"] == rater]
                    for rater, w in zip(raters, weights[replicate], strict=True)
                    for _ in range(int(w))
                ]
            )
            np.testing.assert_allclose(
                result.bootstrap_scores[question][replicate],
                choix_scale(resampled, names),
                atol=1e-6,
            )


def test_the_point_estimate_is_choix_on_all_judgments_and_intervals_are_percentiles():
    # given
    frame = two_question_study(seed=3)
    settings = PreferenceSettings(bootstrap=200, seed=2, prior=0.0, screen=False)
    # when
    result = analyse(frame, settings=settings)
    # then
    assert list(result.scale.columns) == list(SCALE_COLUMNS)
    for question in ("motion", "video quality"):
        names = result.bootstrap_conditions[question]
        scale = result.scale[result.scale["question"] == question].set_index("condition")
        expected = choix_scale(frame[frame["question"] == question], names)
        np.testing.assert_allclose(scale.loc[names, "score"], expected, atol=1e-6)
        replicates = result.bootstrap_scores[question]
        low, high = np.percentile(replicates, [2.5, 97.5], axis=0)
        np.testing.assert_allclose(scale.loc[names, "ci95_low"], low, rtol=0, atol=1e-12)
        np.testing.assert_allclose(scale.loc[names, "ci95_high"], high, rtol=0, atol=1e-12)
        ranks = rankdata(-replicates, method="min", axis=1)
        rank_low = np.percentile(ranks, 2.5, axis=0, method="inverted_cdf")
        rank_high = np.percentile(ranks, 97.5, axis=0, method="inverted_cdf")
        assert scale.loc[names, "rank_low"].tolist() == rank_low.astype(int).tolist()
        assert scale.loc[names, "rank_high"].tolist() == rank_high.astype(int).tolist()
        point_rank = rankdata(-scale.loc[names, "score"].to_numpy(), method="min")
        assert scale.loc[names, "rank"].tolist() == point_rank.tolist()
        assert scale["rank"].is_monotonic_increasing  # best first
        involved = part_counts(frame[frame["question"] == question])
        assert scale.loc[names, "n"].tolist() == [involved[n] for n in names]


def part_counts(frame: pd.DataFrame) -> dict[str, int]:
    return (pd.concat([frame["left"], frame["right"]]).value_counts()).to_dict()


def test_results_do_not_depend_on_row_order_and_repeat_with_the_seed():
    frame = two_question_study(seed=5)
    settings = PreferenceSettings(model="davidson", bootstrap=50, seed=4, screen=False)
    first = analyse(frame, settings=settings)
    shuffled = analyse(frame.sample(frac=1.0, random_state=1), settings=settings)
    pd.testing.assert_frame_equal(first.scale, shuffled.scale, check_exact=False, atol=1e-9)
    pd.testing.assert_frame_equal(first.pairs, shuffled.pairs)
    other_seed = analyse(frame, settings=PreferenceSettings(model="davidson", bootstrap=50))
    assert not np.allclose(first.scale["ci95_low"], other_seed.scale["ci95_low"])


def test_replicates_without_a_finite_scale_are_counted_and_left_out():
    # given: with prior 0, a replicate without r2 has m0 never losing; r2 alone is a cycle
    rows = [("r1", "q", f"c{i}", "m0", "m1", "left") for i in range(4)]
    rows += [("r1", "q", f"d{i}", "m1", "m2", "left") for i in range(3)]
    rows += [("r1", "q", f"e{i}", "m2", "m0", "right") for i in range(2)]
    rows += [("r2", "q", "f", "m1", "m0", "left"), ("r2", "q", "g", "m2", "m1", "left")]
    rows += [("r2", "q", "h", "m0", "m2", "left")]
    frame = pd.DataFrame(
        rows, columns=["rater_id", "question", "content_id", "left", "right", "choice"]
    )
    settings = PreferenceSettings(bootstrap=40, seed=3, prior=0.0, screen=False)
    weights = rater_weights(n_raters=2, replicates=40, seed=3)
    # when
    result = analyse(frame, settings=settings)
    # then
    without_r2 = weights[:, 1] == 0
    assert result.bootstrap_undefined["q"] == without_r2.sum() > 0
    assert np.isnan(result.bootstrap_scores["q"][without_r2]).all()
    assert np.isfinite(result.bootstrap_scores["q"][~without_r2]).all()
    assert np.isfinite(result.scale[["ci95_low", "ci95_high"]].to_numpy()).all()


def test_summary_is_json_ready_with_version_settings_and_per_question_figures():
    # given
    frame = two_question_study(seed=7)
    settings = PreferenceSettings(model="rao-kupper", bootstrap=20, seed=1)
    # when
    summary = json.loads(json.dumps(json_ready(analyse(frame, settings=settings).summary_dict())))
    # then
    assert summary["version"] == PREFERENCE_VERSION
    assert summary["settings"] == {
        "model": "rao-kupper",
        "bootstrap": 20,
        "seed": 1,
        "prior": 0.01,
        "screen": True,
        "confidence": 0.95,
        "screen_p_value": 0.001,
        "screen_min_answers": 20,
    }
    assert summary["model"] == "rao-kupper" and summary["unit"] == "log-strength"
    assert summary["questions"] == ["motion", "video quality"]
    for key in ("tie_parameter", "log_likelihood", "alpha", "iterations", "bootstrap_undefined"):
        assert set(summary[key]) == {"motion", "video quality"}, key
    assert summary["tie_parameter"]["motion"]["name"] == "theta"
    assert summary["tie_parameter"]["motion"]["value"] > 1
    assert summary["counts"] == {
        "judgments": len(frame),
        "judgments_kept": len(frame),
        "raters": 5,
        "raters_kept": 5,
        "conditions": 5,
    }
    assert [r["rater_id"] for r in summary["raters"]] == [f"r{i:03d}" for i in range(5)]
    assert summary["exclusions"] == []


def test_bradley_terry_summary_has_no_tie_parameter_and_bootstrap_zero_no_intervals():
    result = analyse(two_question_study(), settings=PreferenceSettings(bootstrap=0))
    summary = json_ready(result.summary_dict())
    assert summary["tie_parameter"]["motion"] == {
        "name": None,
        "value": None,
        "ci95_low": None,
        "ci95_high": None,
    }
    assert result.scale[["ci95_low", "ci95_high"]].isna().all().all()
    assert result.scale[["rank_low", "rank_high"]].isna().all().all()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("model", "elo", "model must be one of"),
        ("bootstrap", -1, "bootstrap must be 0 or more"),
        ("prior", -0.1, "prior must be a finite number >= 0"),
        ("prior", float("nan"), "prior must be a finite number >= 0"),
        ("confidence", 1.0, "confidence must be in (0, 1)"),
        ("screen_p_value", 0.0, "screen_p_value must be in (0, 1)"),
        ("screen_min_answers", 0, "screen_min_answers must be at least 1"),
    ],
)
def test_bad_settings_are_refused(field, value, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        PreferenceSettings(**{field: value})


def test_a_wyd_sized_study_recovers_the_true_order_of_well_separated_models():
    # given: WYD's shape, 7 models, 21 pairs x 25 judgments x 4 raters, 20 % ties
    strengths = [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0]
    frame = simulate_judgments(strengths=strengths, raters=4, per_pair=25, seed=9)
    for model in ("bradley-terry", "davidson", "rao-kupper", "thurstone"):
        # when
        scale = analyse(frame, settings=PreferenceSettings(model=model, bootstrap=100)).scale
        # then
        assert scale["condition"].tolist() == [f"m{i:02d}" for i in range(6, -1, -1)], model
        assert (scale["ci95_low"] <= scale["score"]).all()
        assert (scale["score"] <= scale["ci95_high"]).all()


def test_chunked_replicates_give_the_same_scale(monkeypatch):
    # given: the same analysis in one batch and in chunks of 7 replicates
    frame = two_question_study(seed=8)
    settings = PreferenceSettings(model="thurstone", bootstrap=30, seed=6, screen=False)
    whole = analyse(frame, settings=settings)
    monkeypatch.setattr("quality.stats.preference.analysis.REPLICATE_CELLS", 7 * 10)
    # when
    chunked = analyse(frame, settings=settings)
    # then
    pd.testing.assert_frame_equal(whole.scale, chunked.scale, check_exact=False, atol=1e-9)
    for question in whole.questions:
        np.testing.assert_allclose(
            whole.bootstrap_scores[question], chunked.bootstrap_scores[question], atol=1e-9
        )
