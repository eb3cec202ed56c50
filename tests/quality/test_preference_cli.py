"""``python -m quality compare``: outputs, headers, error messages, exit codes, no partial
output."""

import json
import subprocess
import sys
import warnings
from pathlib import Path

import pandas as pd
import pytest

from quality.cli import main
from quality.stats.preference import PreferenceSettings, analyse, read_judgments_csv
from quality.stats.preference.synthetic import simulate_judgments

ROOT = Path(__file__).resolve().parents[2]
HEADER = "rater_id,question,content_id,left,right,choice\n"
SCALE_HEADER = "question,condition,score,ci95_low,ci95_high,rank,rank_low,rank_high,n"
PAIRS_HEADER = "question,condition_a,condition_b,n,wins_a,wins_b,ties,win_rate_a,ci95_low,ci95_high"


@pytest.fixture
def judgments_csv(tmp_path) -> Path:
    path = tmp_path / "judgments.csv"
    simulate_judgments(strengths=[0.0, 0.5, 1.0, -0.4], raters=4, per_pair=6, seed=2).to_csv(
        path, index=False
    )
    return path


def test_compare_writes_scale_pairs_and_summary(judgments_csv, tmp_path, capsys):
    # given
    out = tmp_path / "out"
    # when
    code = main(
        ["compare", str(judgments_csv), "--out", str(out), "--model", "thurstone"]
        + ["--bootstrap", "30", "--seed", "5"]
    )
    # then
    assert code == 0
    assert sorted(p.name for p in out.iterdir()) == ["pairs.csv", "scale.csv", "summary.json"]
    assert (out / "scale.csv").read_text().splitlines()[0] == SCALE_HEADER
    assert (out / "pairs.csv").read_text().splitlines()[0] == PAIRS_HEADER
    expected = analyse(
        read_judgments_csv(path=judgments_csv),
        settings=PreferenceSettings(model="thurstone", bootstrap=30, seed=5),
    )
    scale = pd.read_csv(out / "scale.csv")
    pd.testing.assert_series_equal(scale["score"], expected.scale["score"], check_exact=True)
    assert scale["condition"].tolist() == expected.scale["condition"].tolist()
    assert len(pd.read_csv(out / "pairs.csv")) == 6
    summary = json.loads((out / "summary.json").read_text())
    assert summary["version"] == "quality.stats.preference/1"
    assert summary["settings"]["model"] == "thurstone" and summary["settings"]["seed"] == 5
    assert summary["unit"] == "JOD"
    assert "wrote" in capsys.readouterr().out


def test_compare_runs_as_a_module(judgments_csv, tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "quality", "compare", str(judgments_csv)]
        + ["--out", str(tmp_path / "o"), "--bootstrap", "5"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "o" / "summary.json").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "the file is empty"),
        (HEADER, "no judgments"),
        ("rater_id,question,content_id,left,choice\nr,q,c,a,left\n", "missing column(s): right"),
        (HEADER + "r,q,c,a,b,left\nr,q,c,a,b,maybe\n", "line 3: choice 'maybe'"),
        (HEADER + "r,q,c,a,b,left\nr,q,c,b,b,left\n", "line 3: left and right are the same"),
        (HEADER + "r,q,c,a,b,left\n\nr,q,,a,b,left\n", "line 4: content_id is empty"),
        (HEADER + "r,q,c,a,b,left\nr,q,c,a,c,left\n", "never lose: a"),
    ],
)
def test_bad_input_exits_2_with_a_clear_message_and_writes_nothing(
    tmp_path, capsys, content, message
):
    # given
    path = tmp_path / "bad.csv"
    path.write_text(content)
    out = tmp_path / "out"
    # when
    code = main(["compare", str(path), "--out", str(out), "--prior", "0", "--bootstrap", "3"])
    # then
    assert code == 2
    assert message in capsys.readouterr().err
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv"]


def test_an_error_leaves_an_existing_output_folder_untouched(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "scale.csv").write_text("previous run")
    path = tmp_path / "bad.csv"
    path.write_text(HEADER + "r,q,c,a,b,sideways\n")
    assert main(["compare", str(path), "--out", str(out)]) == 2
    assert [p.name for p in out.iterdir()] == ["scale.csv"]
    assert (out / "scale.csv").read_text() == "previous run"


@pytest.mark.parametrize(
    ("option", "message"),
    [(["--bootstrap", "-1"], "bootstrap"), (["--confidence", "2"], "confidence")],
)
def test_bad_option_values_exit_2(judgments_csv, tmp_path, capsys, option, message):
    code = main(["compare", str(judgments_csv), "--out", str(tmp_path / "o"), *option])
    assert code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_missing_input_file_exits_2(tmp_path, capsys):
    assert main(["compare", str(tmp_path / "nope.csv"), "--out", str(tmp_path / "o")]) == 2
    assert "nope.csv" in capsys.readouterr().err


def test_ids_stay_text_and_formula_like_ids_are_quoted(tmp_path):
    # given: ids with leading zeros and a condition a spreadsheet would run
    path = tmp_path / "j.csv"
    path.write_text(
        HEADER
        + "007,q,01,=m1,m2,left\n007,q,02,m2,=m1,right\n8,q,01,m2,=m1,left\n8,q,03,=m1,m2,equal\n"
    )
    out = tmp_path / "out"
    # when
    code = main(["compare", str(path), "--out", str(out), "--bootstrap", "4"])
    # then
    assert code == 0
    pairs = (out / "pairs.csv").read_text().splitlines()
    assert pairs[1].startswith("q,'=m1,m2,4,2,1,1,")
    summary = json.loads((out / "summary.json").read_text())
    assert [r["rater_id"] for r in summary["raters"]] == ["007", "8"]


def test_no_screen_keeps_a_left_clicker(tmp_path):
    frame = simulate_judgments(strengths=[0.0, 1.0, 2.0], raters=3, per_pair=15, seed=4)
    frame.loc[frame["rater_id"] == "r000", "choice"] = "left"
    path = tmp_path / "j.csv"
    frame.to_csv(path, index=False)
    assert main(["compare", str(path), "--out", str(tmp_path / "a"), "--bootstrap", "3"]) == 0
    screened = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert [e["rater_id"] for e in screened["exclusions"]] == ["r000"]
    args = ["compare", str(path), "--out", str(tmp_path / "b"), "--bootstrap", "3", "--no-screen"]
    assert main(args) == 0
    kept = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert kept["exclusions"] == [] and kept["settings"]["screen"] is False


@pytest.mark.parametrize("model", ["davidson", "rao-kupper"])
def test_judgments_that_are_all_ties_give_an_undefined_tie_parameter_quietly(
    tmp_path, capsys, model
):
    # given: every judgment a tie, so the tie parameter's estimate is infinite
    path = tmp_path / "ties.csv"
    path.write_text(HEADER + "r1,q,c,x,y,equal\nr2,q,c,y,x,equal\nr1,q,c2,x,z,equal\n")
    out = tmp_path / "o"
    # when
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's RuntimeWarning reached stderr
        code = main(["compare", str(path), "--out", str(out), "--model", model, "--bootstrap", "5"])
    # then: the tie parameter and its interval are null, and nothing else is said
    assert code == 0
    assert capsys.readouterr().err == ""
    tie = json.loads((out / "summary.json").read_text())["tie_parameter"]["q"]
    assert tie["value"] is None and tie["ci95_low"] is None and tie["ci95_high"] is None
