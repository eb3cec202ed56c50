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
