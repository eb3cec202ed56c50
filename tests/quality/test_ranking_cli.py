"""``python -m quality rank``: outputs, error messages, exit codes, no partial output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from quality.cli import main
from tests.quality.test_ranking_analysis import synthetic_rankings

ROOT = Path(__file__).resolve().parents[2]
HEADER = "rater_id,question,prompt_id,ranking\n"
CONSENSUS_HEADER = (
    "question,prompt_id,condition,borda,pl_strength,pl_ci95_low,pl_ci95_high,kemeny_rank,"
    "kemeny_unique"
)


@pytest.fixture
def rankings_csv(tmp_path) -> Path:
    path = tmp_path / "rankings.csv"
    synthetic_rankings(random_raters=2, tie_share=0.1, n_prompts=5).to_csv(path, index=False)
    return path


@pytest.fixture
def scores_csv(tmp_path) -> Path:
    path = tmp_path / "scores.csv"
    path.write_text("condition,score\n" + "".join(f"m{c},{10 - c}\n" for c in range(6)))
    return path


def test_rank_writes_consensus_distribution_and_summary(rankings_csv, scores_csv, tmp_path, capsys):
    # given
    out = tmp_path / "out"
    # when
    code = main(
        ["rank", str(rankings_csv), "--out", str(out), "--against", str(scores_csv)]
        + ["--bootstrap", "40", "--seed", "3"]
    )
    # then
    assert code == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "consensus.csv",
        "rank_distribution.csv",
        "summary.json",
    ]
    assert (out / "consensus.csv").read_text().splitlines()[0] == CONSENSUS_HEADER
    consensus = pd.read_csv(out / "consensus.csv")
    assert consensus["prompt_id"].unique().tolist() == ["p0", "p1", "p2", "p3", "p4", "*"]
    assert len(consensus) == 6 * 6
    summary = json.loads((out / "summary.json").read_text())
    assert summary["version"] == "quality.stats.ranking/2"
    assert summary["settings"]["bootstrap"] == 40 and summary["settings"]["seed"] == 3
    assert set(summary["recall_at"]["overall"]) == {"1", "3", "5"}
    excluded = {e["rater_id"] for e in summary["exclusions"]}
    assert {"x0", "x1"} <= excluded  # the random raters (a noisy one may join them)
    assert summary["counts"]["overall"]["raters_kept"] == 12 - len(excluded)
    assert "wrote" in capsys.readouterr().out


def test_no_screen_keeps_everyone_and_null_is_written_for_nan(rankings_csv, tmp_path):
    out = tmp_path / "out"
    code = main(["rank", str(rankings_csv), "--out", str(out), "--no-screen", "--bootstrap", "0"])
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["exclusions"] == [] and summary["settings"]["screen"] is False
    assert summary["recall_at"] is None
    consensus = pd.read_csv(out / "consensus.csv")
    assert consensus["pl_ci95_low"].isna().all()  # written empty
    assert '"pl_ci95_low"' not in (out / "summary.json").read_text()


def test_rank_replaces_its_files_in_an_existing_folder(rankings_csv, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "consensus.csv").write_text("old")
    (out / "notes.txt").write_text("mine")
    assert main(["rank", str(rankings_csv), "--out", str(out), "--bootstrap", "2"]) == 0
    assert (out / "consensus.csv").read_text().startswith("question,")
    assert (out / "notes.txt").read_text() == "mine"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.")] == []


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "the file is empty"),
        (HEADER, "no rankings"),
        ("rater_id,question,ranking\na,q,x>y\n", "missing column(s): prompt_id"),
        (
            HEADER + "a,q,p,x>y\n\nb,q,p,x>y>x\n",
            "line 4 (rater 'b', prompt 'p', question 'q'): ranking 'x>y>x' lists condition "
            "'x' twice",
        ),
        (HEADER + "a,q,p,x>y>z\nb,q,p,x>z\n", "line 3: ranking 'x>z' of prompt 'p'"),
        (HEADER + "a,q,p,x>y\nb,q,p,x>w\n", "misses 'y' and adds 'w'"),
        (HEADER + "a,q,p,x>y\na,q,p,y>x\n", "line 3: rater 'a' already ranked prompt 'p'"),
        (
            HEADER + "a,q,p,x>>y\n",
            "line 2 (rater 'a', prompt 'p', question 'q'): ranking 'x>>y' has",
        ),
        (HEADER + "a,q,,x>y\n", "line 2: prompt_id is empty"),
        (HEADER + "a,q,p,x>y,9\n", "line 2: 5 field(s) where the header has 4"),
    ],
)
def test_bad_rankings_exit_2_with_a_clear_message_and_write_nothing(
    tmp_path, capsys, content, message
):
    # given
    path = tmp_path / "bad.csv"
    path.write_text(content)
    out = tmp_path / "out"
    # when
    code = main(["rank", str(path), "--out", str(out)])
    # then
    assert code == 2
    error = capsys.readouterr().err
    assert message in error and str(path) in error
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("condition,score\nm0,1\n", "the model scores miss condition(s) 'm1', 'm2'"),
        ("condition,score\nm0,x\n", "line 2: score 'x' is not a finite number"),
        ("condition\nm0\n", "missing column(s): score"),
    ],
)
def test_bad_scores_exit_2_naming_the_scores_file(rankings_csv, tmp_path, capsys, content, message):
    scores = tmp_path / "scores.csv"
    scores.write_text(content)
    out = tmp_path / "out"
    code = main(["rank", str(rankings_csv), "--out", str(out), "--against", str(scores)])
    assert code == 2
    error = capsys.readouterr().err
    assert message in error and str(scores) in error
    assert not out.exists()


def test_an_error_leaves_an_existing_output_folder_untouched(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "consensus.csv").write_text("previous run")
    path = tmp_path / "bad.csv"
    path.write_text(HEADER + "a,q,p,x>y\nb,q,p,x\n")
    assert main(["rank", str(path), "--out", str(out)]) == 2
    assert [p.name for p in out.iterdir()] == ["consensus.csv"]
    assert (out / "consensus.csv").read_text() == "previous run"


def test_missing_files_exit_2(rankings_csv, tmp_path, capsys):
    assert main(["rank", str(tmp_path / "nope.csv"), "--out", str(tmp_path / "o")]) == 2
    assert "nope.csv" in capsys.readouterr().err
    code = main(["rank", str(rankings_csv), "--out", str(tmp_path / "o"), "--against", "gone.csv"])
    assert code == 2 and "gone.csv" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("option", "value"),
    [("--bootstrap", "-1"), ("--seed", "-2"), ("--screen-alpha", "0"), ("--pl-prior-weight", "-1")],
)
def test_bad_option_values_exit_2_naming_the_option(rankings_csv, tmp_path, capsys, option, value):
    code = main(["rank", str(rankings_csv), "--out", str(tmp_path / "o"), option, value])
    assert code == 2 and option in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_ids_stay_text_and_cells_a_spreadsheet_would_run_are_quoted(tmp_path):
    # given: ids with leading zeros and a condition a spreadsheet would run as a formula
    path = tmp_path / "r.csv"
    path.write_text(HEADER + "007,q,01,=x>b\n8,q,01,b>=x\n")
    out = tmp_path / "out"
    # when
    code = main(["rank", str(path), "--out", str(out), "--bootstrap", "0"])
    # then
    assert code == 2  # "=x>b" starts with an empty id before '='
    path.write_text(HEADER + "007,q,01,'-x>b\n8,q,01,b>-x\n9,q,01,-x>b\n")
    assert main(["rank", str(path), "--out", str(out), "--bootstrap", "0"]) == 0
    lines = (out / "consensus.csv").read_text().splitlines()
    assert lines[1].startswith("q,01,'-x,") and lines[2].startswith("q,01,b,")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["kemeny"]["q"]["01"]["order"] == ["-x", "b"]
    assert set(summary["rater_taus"]["q"]) == {"007", "8", "9"}


def test_python_dash_m_reports_errors_on_stderr(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("nothing,useful\n1,2\n")
    done = subprocess.run(
        [sys.executable, "-m", "quality", "rank", str(path), "--out", str(tmp_path / "o")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "missing column(s): rater_id, question, prompt_id, ranking" in done.stderr
    assert done.stdout == ""


def test_scores_with_only_a_header_say_to_leave_against_out(tmp_path, capsys):
    # given: a run's model_scores.csv when the run compared no metric
    rankings = tmp_path / "rankings.csv"
    rankings.write_text("rater_id,question,prompt_id,ranking\na,q,p,x>y\nb,q,p,y>x\n")
    scores = tmp_path / "model_scores.csv"
    scores.write_text("condition,score\r\n")
    # when
    code = main(["rank", str(rankings), "--out", str(tmp_path / "o"), "--against", str(scores)])
    # then
    assert code == 2
    assert capsys.readouterr().err == (
        f"error: {scores}: no scores (only a header: a run's model_scores.csv is so when the "
        "run compared no metric; leave --against out)\n"
    )
