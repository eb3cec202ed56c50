import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

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
