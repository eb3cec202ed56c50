"""``python -m quality sequence``: the confidence sequence per rating, errors naming the
line, nothing partial in DIR."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from quality.cli import main
from quality.stats.adaptive.confidence_sequence import sequence

HEADER = "video_id,dimension,score\n"


@pytest.fixture
def scores_csv(tmp_path):
    # given: two videos x two dimensions, interleaved as ratings arrive
    rng = np.random.default_rng(9)
    rows = []
    for _ in range(12):
        for video in rng.permutation(["v1", "v2"]):
            for dimension in ("subject", "-blur"):
                rows.append((video, dimension, float(rng.integers(0, 101))))
    frame = pd.DataFrame(rows, columns=["video_id", "dimension", "score"])
    frame["dimension"] = frame["dimension"].replace({"-blur": "'-blur"})  # exported quoted
    path = tmp_path / "scores.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_every_rating_gets_its_series_confidence_sequence(scores_csv, tmp_path):
    path, frame = scores_csv
    out = tmp_path / "out"
    # when
    code = main(["sequence", str(path), "--out", str(out), "--alpha", "0.1"])
    # then: same rows in the same order, each series' sequence as the module computes it
    assert code == 0
    text = (out / "sequence.csv").read_text()
    assert text.splitlines()[0] == "video_id,dimension,n,mean,low,high"
    written = pd.read_csv(out / "sequence.csv", keep_default_na=False)
    assert len(written) == len(frame)
    assert written["video_id"].tolist() == frame["video_id"].tolist()
    assert set(written["dimension"]) == {"subject", "'-blur"}  # quoted again on the way out
    for _, part in frame.groupby(["video_id", "dimension"]):
        expected = sequence(part["score"].to_numpy(), alpha=0.1, low=0, high=100)
        mine = written.loc[part.index]
        assert mine["n"].tolist() == list(range(1, len(part) + 1))
        np.testing.assert_allclose(mine["mean"], expected.mean)
        np.testing.assert_allclose(mine["low"], expected.lower)
        np.testing.assert_allclose(mine["high"], expected.upper)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["version"].startswith("quality.stats.adaptive/")
    assert summary["settings"]["alpha"] == 0.1 and summary["settings"]["grid_step"] == 0.1
    assert (summary["ratings"], summary["series"]) == (48, 4)


def test_the_scale_is_taken_from_the_options(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text(HEADER + "a,q,1\na,q,5\na,q,3\n")
    out = tmp_path / "o"
    assert main(["sequence", str(path), "--out", str(out), "--low", "1", "--high", "5"]) == 0
    written = pd.read_csv(out / "sequence.csv")
    expected = sequence([1, 5, 3], low=1, high=5)
    np.testing.assert_allclose(written["high"], expected.upper)
    assert written["low"].min() >= 1 and written["high"].max() <= 5


@pytest.mark.parametrize(
    ("content", "extra", "message"),
    [
        ("", [], "the file is empty"),
        (HEADER, [], "no scores"),
        ("video_id,score\nv,1\n", [], "missing column(s): dimension"),
        (HEADER + "v,q,3\n\nv,q,abc\n", [], "line 4: score 'abc' is not a number"),
        (HEADER + "v,q,3\nv,q,101\n", [], "line 3: score '101' is outside [0, 100]"),
        (
            HEADER + "v,q,3\nv,q,0.5\n",
            ["--low", "1", "--high", "5"],
            "line 3: score '0.5' is outside [1, 5]",
        ),
        (HEADER + "v,q,nan\n", [], "line 2: score 'nan' is not a finite number"),
        (HEADER + "v,q,3\n,q,4\n", [], "line 3: video_id is empty"),
        (HEADER + "v,q,3,9\n", [], "line 2: 4 field(s)"),
        (HEADER + "v,q,3\n", ["--alpha", "1.5"], "--alpha must be in (0, 1)"),
        (HEADER + "v,q,3\n", ["--low", "5", "--high", "1"], "--low must be below --high"),
    ],
)
def test_bad_input_exits_2_naming_the_line_and_writes_nothing(
    tmp_path, capsys, content, extra, message
):
    # given
    path = tmp_path / "bad.csv"
    path.write_text(content)
    out = tmp_path / "out"
    # when
    code = main(["sequence", str(path), "--out", str(out), *extra])
    # then
    assert code == 2
    assert message in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv"]


def test_an_error_leaves_an_existing_output_folder_as_it_was(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "sequence.csv").write_text("previous run")
    path = tmp_path / "bad.csv"
    path.write_text(HEADER + "v,q,3\nv,q,-1\n")
    assert main(["sequence", str(path), "--out", str(out)]) == 2
    assert [p.name for p in out.iterdir()] == ["sequence.csv"]
    assert (out / "sequence.csv").read_text() == "previous run"


def test_a_missing_file_exits_2(tmp_path, capsys):
    assert main(["sequence", str(tmp_path / "nope.csv"), "--out", str(tmp_path / "o")]) == 2
    assert "nope.csv" in capsys.readouterr().err


def test_it_runs_as_a_module(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text(HEADER + "v,q,40\nv,q,60\n")
    result = subprocess.run(
        [sys.executable, "-m", "quality", "sequence", str(path), "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "2 ratings of 1 (video, dimension)" in result.stdout
    assert (tmp_path / "o" / "sequence.csv").read_text().splitlines()[2].startswith("v,q,2,50.0,")
