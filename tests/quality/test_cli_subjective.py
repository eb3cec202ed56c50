import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from quality.cli import main
from quality.stats.subjective import fit_subjective_model, read_scores_csv

DATA = Path(__file__).resolve().parent.parent / "data" / "sureal" / "VQEGHD3_dataset_raw.csv"


@pytest.mark.parametrize("model", ["bt500", "p910_annex_e"])
def test_cli_writes_the_subjective_model_per_video(tmp_path, model):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "quality",
            "analyze",
            str(DATA),
            "--out",
            str(tmp_path / "o"),
            "--line-click-share",
            "1",
            "--subjective-model",
            model,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    written = pd.read_csv(tmp_path / "o" / f"subjective_{model}.csv", dtype={"video_id": str})
    matrix = read_scores_csv(path=DATA)
    expected = fit_subjective_model(name=model, scores=matrix.scores)
    by_video = dict(zip(written["video_id"], written["quality_score"], strict=True))
    np.testing.assert_allclose(
        [by_video[v] for v in matrix.video_ids], expected.quality_scores, atol=1e-12
    )


def test_an_unknown_model_is_refused_and_nothing_written(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "quality",
            "analyze",
            str(DATA),
            "--out",
            str(tmp_path / "o"),
            "--subjective-model",
            "nope",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert "unknown subjective model 'nope'" in result.stderr
    assert not (tmp_path / "o").exists()


def test_a_later_run_without_the_model_removes_the_earlier_runs_file(tmp_path):
    # given: DIR from a run with --subjective-model mle, and a file of the researcher's
    out = tmp_path / "o"
    args = ["analyze", str(DATA), "--out", str(out), "--line-click-share", "1", "--draws", "2"]
    assert main([*args, "--subjective-model", "mle", "--subjective-model", "mos"]) == 0
    (out / "notes.txt").write_text("mine")
    # when: the next run into DIR asks for one model only
    assert main([*args, "--subjective-model", "mos"]) == 0
    # then: the earlier run's mle fit is gone, so DIR holds one run's files, and the
    # researcher's own file is left alone
    assert sorted(p.name for p in out.iterdir()) == [
        "all_combined.csv",
        "mos.csv",
        "notes.txt",
        "subjective_mos.csv",
        "summary.json",
    ]


def test_an_unknown_model_is_refused_before_the_analysis_runs(tmp_path, capsys, monkeypatch):
    # given: an analysis that would fail the test if it ran
    import quality.commands.analyze as analyze

    def must_not_run(**_):
        raise AssertionError("the analysis ran before the model name was checked")

    monkeypatch.setattr(analyze, "run_analysis", must_not_run)
    # when
    code = main(["analyze", str(DATA), "--out", str(tmp_path / "o"), "--subjective-model", "p931"])
    # then
    assert code == 2
    assert "unknown subjective model 'p931'; known: mos, zscore_mos" in capsys.readouterr().err


@pytest.mark.parametrize(
    "rows, why",
    [
        ([("r1", "v1", 50), ("r2", "v1", 50), ("r1", "v2", 50), ("r2", "v2", 50)], "equal"),
        ([("r1", "v1", 50), ("r2", "v1", 60), ("r3", "v1", 40)], "one video only"),
    ],
)
def test_a_model_that_cannot_be_fitted_is_refused_not_written_empty(tmp_path, capsys, rows, why):
    # given: ratings the MLE model gives no quality score for (its fit is NaN)
    path = tmp_path / "in.csv"
    path.write_text(
        "rater_id,video_id,dimension,score\n" + "".join(f"{r},{v},d,{s}\n" for r, v, s in rows)
    )
    out = tmp_path / "o"
    args = ["analyze", str(path), "--out", str(out), "--draws", "2", "--subjective-model"]
    # then: refused, saying which model and dimension, and nothing written
    assert main([*args, "mle"]) == 2
    err = capsys.readouterr().err
    assert "--subjective-model mle gives no quality score for video 'v1'" in err
    assert "dimension 'd'" in err and why in err
    assert not out.exists()
    # and the models that can be fitted there still run
    assert main([*args, "mos"]) == 0
    assert "50" in (out / "subjective_mos.csv").read_text()
