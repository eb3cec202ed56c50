"""Subjective models checked against Netflix SUREAL 0.9 (the oracle) and by hand."""

from __future__ import annotations

import contextlib
import io
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from quality.stats.subjective import (
    SUBJECTIVE_MODELS,
    SUREAL_MODEL_TYPES,
    fit_subjective_model,
    pivot_scores,
    read_scores_csv,
)

sureal_subjective_model = pytest.importorskip("sureal.subjective_model")
sureal_dataset_reader = pytest.importorskip("sureal.dataset_reader")

DATA = Path(__file__).resolve().parents[1] / "data" / "sureal"
DATASETS = {
    "NFLX": "NFLX_dataset_public_raw.csv",
    "VQEGHD3": "VQEGHD3_dataset_raw.csv",
    "AGH": "quality_variation_2017_agh_tv_dataset.csv",
}
TOLERANCE = 1e-9
# (our field, SUREAL's key) compared whenever SUREAL reports the key.
FIELDS = (
    ("quality_scores", "quality_scores"),
    ("quality_scores_std", "quality_scores_std"),
    ("observer_bias", "observer_bias"),
    ("observer_bias_std", "observer_bias_std"),
    ("observer_inconsistency", "observer_inconsistency"),
    ("observer_inconsistency_std", "observer_inconsistency_std"),
    ("screening_outlier_fraction", "observer_rejected_1st_stats"),
    ("screening_asymmetry", "observer_rejected_2nd_stats"),
)


def run_sureal(*, name: str, scores: np.ndarray) -> dict:
    """SUREAL's model for ``name`` on a one-content dataset, NaN for missing."""
    dataset = SimpleNamespace(
        dataset_name="test",
        ref_videos=[{"content_id": 0, "content_name": "c", "path": "ref"}],
        dis_videos=[
            {"content_id": 0, "asset_id": i, "path": f"dis{i}", "os": row.tolist()}
            for i, row in enumerate(scores)
        ],
    )
    model_class = sureal_subjective_model.SubjectiveModel.find_subclass(SUREAL_MODEL_TYPES[name])
    reader = sureal_dataset_reader.RawDatasetReader(dataset)
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")  # SUREAL's nan-warnings on sparse data
        return model_class(reader).run_modeling()


def assert_matches_sureal(*, name: str, scores: np.ndarray) -> None:
    # given
    expected = run_sureal(name=name, scores=scores)
    # when
    ours = fit_subjective_model(name=name, scores=scores)
    # then
    compared = 0
    for field, key in FIELDS:
        if key not in expected:
            continue
        np.testing.assert_allclose(
            getattr(ours, field), np.asarray(expected[key], dtype=float), rtol=0, atol=TOLERANCE
        )
        compared += 1
    assert compared >= 1
    if "observer_rejected" in expected:
        assert ours.observer_rejected.tolist() == list(expected["observer_rejected"])
    else:
        assert ours.observer_rejected is None
    assert ours.iterations == expected.get("num_iter", 0)


def synthetic(*, videos: int, raters: int, fill: float, seed: int, integer: bool) -> np.ndarray:
    """Quality + rater bias + rater noise; two raters answer at random (to be screened)."""
    rng = np.random.default_rng(seed)
    quality = rng.uniform(1.5, 4.5, videos)
    bias = rng.normal(0, 0.4, raters)
    noise = rng.uniform(0.2, 0.9, raters)
    scores = quality[:, None] + bias + rng.normal(size=(videos, raters)) * noise
    scores[:, :2] = rng.uniform(1, 5, (videos, 2))
    if integer:
        scores = np.clip(np.rint(scores), 1, 5)
    scores[rng.random((videos, raters)) > fill] = np.nan
    return scores


SLOW_CASES = {("AGH", "mle")}  # SUREAL needs ~8 s there


@pytest.mark.parametrize(
    ("dataset", "name"),
    [
        pytest.param(d, n, marks=pytest.mark.slow if (d, n) in SLOW_CASES else ())
        for d in DATASETS
        for n in SUBJECTIVE_MODELS
    ],
)
def test_real_dataset_matches_sureal(dataset: str, name: str) -> None:
    scores = read_scores_csv(path=DATA / DATASETS[dataset]).scores
    assert_matches_sureal(name=name, scores=scores)


@pytest.mark.parametrize("name", list(SUBJECTIVE_MODELS))
@pytest.mark.parametrize(
    ("fill", "integer", "seed"),
    [(1.0, False, 1), (1.0, True, 2), (0.55, False, 3), (0.55, True, 4)],
    ids=["dense-continuous", "dense-integer", "sparse-continuous", "sparse-integer"],
)
def test_synthetic_matches_sureal(name: str, fill: float, integer: bool, seed: int) -> None:
    scores = synthetic(videos=40, raters=12, fill=fill, seed=seed, integer=integer)
    assert_matches_sureal(name=name, scores=scores)


def test_screening_rejects_a_rater_who_answers_only_the_extremes() -> None:
    # given: 20 raters follow the model; rater 0 answers 1 or 5 at random
    rng = np.random.default_rng(2)
    quality = rng.uniform(2, 4, 60)
    scores = quality[:, None] + rng.normal(0, 0.3, 20) + rng.normal(size=(60, 20)) * 0.4
    scores[:, 0] = rng.choice([1.0, 5.0], size=60)
    # when
    result = fit_subjective_model(name="bt500", scores=scores)
    # then: only rater 0 is rejected, SUREAL agrees, and the MOS ignores rater 0
    assert result.rejected_observers == (0,)
    assert_matches_sureal(name="bt500", scores=scores)
    np.testing.assert_allclose(result.quality_scores, scores[:, 1:].mean(axis=1), atol=1e-12)


def test_real_datasets_have_screened_raters() -> None:
    # Guards the comparison above from being vacuous: SUREAL rejects raters here.
    nflx = read_scores_csv(path=DATA / DATASETS["NFLX"])
    result = fit_subjective_model(name="p913", scores=nflx.scores)
    assert [nflx.rater_ids[j] for j in result.rejected_observers] == ["s12", "s3", "s4", "s9"]
    reasons = result.rejection_reasons(rater_ids=nflx.rater_ids)
    assert list(reasons) == ["s12", "s3", "s4", "s9"]
    assert reasons["s3"].startswith("BT.500 screening: 7.6% of the videos")


def test_worked_example_mos_and_p913_bias_removal() -> None:
    # given: 3 videos x 3 raters, rater c missed video 2
    scores = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 3.0], [2.0, 2.0, np.nan]])
    # when
    mos = fit_subjective_model(name="mos", scores=scores)
    p913 = fit_subjective_model(name="p913", scores=scores)
    # then: MOS = row means; std error = sample std / sqrt(n)
    np.testing.assert_allclose(mos.quality_scores, [2.0, 4.0, 2.0], atol=1e-15)
    np.testing.assert_allclose(mos.quality_scores_std, [1 / np.sqrt(3), 1 / np.sqrt(3), 0.0])
    # bias b_j = mean_i (x_ij - MOS_i): a: (-1, 0, 0)/3, b: (0, 1, 0)/3, c: (1, -1)/2
    np.testing.assert_allclose(p913.observer_bias, [-1 / 3, 1 / 3, 0.0], atol=1e-15)
    # with 2 or 3 ratings a video's kurtosis is at most 1.5 < 2, so its range is
    # mean +- sqrt(20) sigma, which no rating can leave: nobody is rejected
    assert p913.rejected_observers == ()
    np.testing.assert_allclose(
        p913.quality_scores, [(4 / 3 + 5 / 3 + 3) / 3, (13 / 3 + 14 / 3 + 3) / 3, 2.0], atol=1e-14
    )


def test_worked_example_p910_recovers_an_exactly_additive_matrix() -> None:
    # given: x_ij = psi_i + b_j with no noise, mean(b) = 0
    psi = np.array([1.0, 2.5, 4.0])
    bias = np.array([-0.5, 0.0, 0.5])
    scores = psi[:, None] + bias[None, :]
    # when
    result = fit_subjective_model(name="p910_annex_e", scores=scores)
    # then: the solver stops at once on the exact answer, with zero inconsistency
    np.testing.assert_allclose(result.quality_scores, psi, atol=1e-12)
    np.testing.assert_allclose(result.observer_bias, bias, atol=1e-12)
    np.testing.assert_allclose(result.observer_inconsistency, 0.0, atol=1e-12)
    assert result.iterations == 1
    # a zero inconsistency has no finite standard error: NaN here (SUREAL's
    # 1 / sqrt(-0.0) gives -inf, the one place the two knowingly differ)
    assert np.isnan(result.observer_inconsistency_std).all()
    expected = run_sureal(name="p910_annex_e", scores=scores)
    np.testing.assert_allclose(result.quality_scores, expected["quality_scores"], atol=1e-12)
    assert result.iterations == expected["num_iter"]


def test_unknown_model_name_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown subjective model 'dmos'.*p910_annex_e"):
        fit_subjective_model(name="dmos", scores=np.ones((2, 2)))


def test_pivot_orders_ids_and_marks_missing_ratings() -> None:
    # when: rows in any order
    matrix = pivot_scores(
        rater_ids=["r2", "r1", "r2"], video_ids=["v2", "v1", "v1"], scores=[5, 3, 4]
    )
    # then: sorted ids, NaN where r1 did not rate v2
    assert matrix.video_ids == ("v1", "v2")
    assert matrix.rater_ids == ("r1", "r2")
    np.testing.assert_array_equal(matrix.scores, [[3.0, 4.0], [np.nan, 5.0]])


def test_pivot_rejects_a_repeated_rating() -> None:
    with pytest.raises(ValueError, match="more than once"):
        pivot_scores(rater_ids=["r1", "r1"], video_ids=["v1", "v1"], scores=[1, 2])


def test_read_scores_csv_picks_one_dimension(tmp_path: Path) -> None:
    path = tmp_path / "ratings.csv"
    path.write_text(
        "rater_id,video_id,dimension,score\nr1,v1,subject,10\nr1,v1,action,20\nr2,v1,subject,30\n"
    )
    with pytest.raises(ValueError, match="pass dimension="):
        read_scores_csv(path=path)
    matrix = read_scores_csv(path=path, dimension="subject")
    assert matrix.rater_ids == ("r1", "r2")
    np.testing.assert_array_equal(matrix.scores, [[10.0, 30.0]])


def test_real_dataset_shapes() -> None:
    shapes = {k: read_scores_csv(path=DATA / v).scores.shape for k, v in DATASETS.items()}
    assert shapes == {"NFLX": (79, 26), "VQEGHD3": (72, 24), "AGH": (320, 99)}
