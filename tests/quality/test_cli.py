"""``python -m quality analyze``: outputs, error messages, exit codes, no partial output."""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from quality.cli import main
from tests.quality.synthetic import study

ROOT = Path(__file__).resolve().parents[2]
SUREAL = Path("/work/shared/data/sureal/NFLX_dataset_public_raw.csv")
HEADER = "rater_id,video_id,dimension,score\n"


@pytest.fixture
def ratings_csv(tmp_path) -> Path:
    path = tmp_path / "ratings.csv"
    study(n_videos=30, n_raters=8, sessions=2, seed=5).to_csv(path, index=False)
    return path


def test_analyze_writes_mos_and_summary(ratings_csv, tmp_path, capsys):
    # given
    out = tmp_path / "out"
    # when
    code = main(["analyze", str(ratings_csv), "--out", str(out), "--draws", "7", "--seed", "3"])
    # then
    assert code == 0
    assert sorted(p.name for p in out.iterdir()) == ["all_combined.csv", "mos.csv", "summary.json"]
    mos = pd.read_csv(out / "mos.csv")
    header = "video_id,dimension,mos,mos_raw,std,n,ci95_low_raw,ci95_high_raw"
    assert (out / "mos.csv").read_text().splitlines()[0] == header
    assert len(mos) == mos[["video_id", "dimension"]].drop_duplicates().shape[0] > 0
    summary = json.loads((out / "summary.json").read_text())
    assert {
        "line_clickers",
        "exclusions",
        "alpha",
        "srcc_curve",
        "srcc_curve_detail",
        "dimension_correlation",
        "settings",
        "version",
    } <= set(summary)
    assert summary["settings"]["draws"] == 7 and summary["settings"]["seed"] == 3
    assert set(summary["srcc_curve"]["subject"]) == {"1", "2", "3", "4"}
    assert "wrote" in capsys.readouterr().out


def test_analyze_replaces_files_in_an_existing_folder(ratings_csv, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "mos.csv").write_text("old")
    (out / "notes.txt").write_text("mine")
    assert main(["analyze", str(ratings_csv), "--out", str(out), "--draws", "2"]) == 0
    assert (out / "mos.csv").read_text().startswith("video_id,")
    assert (out / "notes.txt").read_text() == "mine"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.")] == []


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "the file is empty"),
        (HEADER, "no ratings"),
        ("rater_id,video_id,score\na,v,1\n", "missing column(s): dimension"),
        (HEADER + "a,v1,d,3\n\na,v2,d,abc\n", "line 4: score 'abc' is not a finite number"),
        (HEADER + "a,v1,d,3\na,v2,d,inf\n", "line 3: score 'inf'"),
        (HEADER + "a,v1,d,3\na,v2,d,\n", "line 3: score ''"),
        (HEADER + "a,v1,d,3\n,v2,d,4\n", "line 3: rater_id is empty"),
        (HEADER + "a,v1,d,3,9\n", "line 2: 5 field(s) where the header has 4"),
    ],
)
def test_malformed_files_exit_2_with_a_clear_message_and_write_nothing(
    tmp_path, capsys, content, message
):
    # given
    path = tmp_path / "bad.csv"
    path.write_text(content)
    out = tmp_path / "out"
    # when
    code = main(["analyze", str(path), "--out", str(out)])
    # then
    assert code == 2
    assert message in capsys.readouterr().err
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv"]


def test_an_error_leaves_an_existing_output_folder_untouched(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "mos.csv").write_text("previous run")
    path = tmp_path / "bad.csv"
    path.write_text(HEADER + "a,v1,d,x\n")
    assert main(["analyze", str(path), "--out", str(out)]) == 2
    assert [p.name for p in out.iterdir()] == ["mos.csv"]
    assert (out / "mos.csv").read_text() == "previous run"


def test_a_file_that_cannot_be_replaced_leaves_the_earlier_run_whole(ratings_csv, tmp_path, capsys):
    # given: an earlier run's folder whose summary.json became a folder
    out = tmp_path / "out"
    assert main(["analyze", str(ratings_csv), "--out", str(out)]) == 0
    earlier = {p.name: p.read_bytes() for p in out.iterdir() if p.name != "summary.json"}
    (out / "summary.json").unlink()
    (out / "summary.json").mkdir()
    # when: a run on other ratings cannot replace it
    other = tmp_path / "other.csv"
    other.write_text(HEADER + "a,v1,d,10\nb,v1,d,90\na,v2,d,30\nb,v2,d,40\n")
    assert main(["analyze", str(other), "--out", str(out)]) == 1
    # then: the files it did replace have their earlier versions back (before: DIR
    # mixed two runs), and the error says why
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == earlier
    assert "cannot write" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".out.")) == []


def test_a_new_output_folder_gets_the_usual_permissions(ratings_csv, tmp_path):
    import os

    umask = os.umask(0o022)
    try:
        assert main(["analyze", str(ratings_csv), "--out", str(tmp_path / "new")]) == 0
    finally:
        os.umask(umask)
    assert (tmp_path / "new").stat().st_mode & 0o777 == 0o755  # before: mkdtemp's 0700


def test_missing_input_file_exits_2(tmp_path, capsys):
    assert main(["analyze", str(tmp_path / "nope.csv"), "--out", str(tmp_path / "o")]) == 2
    assert "nope.csv" in capsys.readouterr().err


def test_bad_option_value_exits_2(ratings_csv, tmp_path, capsys):
    code = main(["analyze", str(ratings_csv), "--out", str(tmp_path / "o"), "--draws", "0"])
    assert code == 2 and "--draws" in capsys.readouterr().err


def test_sessions_are_optional_and_ids_stay_text(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text(HEADER + "007,01,d,1\n007,02,d,3\n8,01,d,2\n8,02,d,5\n")
    out = tmp_path / "out"
    assert main(["analyze", str(path), "--out", str(out), "--line-click-share", "1"]) == 0
    mos = pd.read_csv(out / "mos.csv", dtype={"video_id": str})
    assert mos["video_id"].tolist() == ["01", "02"]
    assert mos["mos_raw"].tolist() == [1.5, 4.0]


def test_text_cells_a_spreadsheet_would_run_are_quoted_and_numbers_stay_numbers(tmp_path):
    # given: a dimension key and a video id that a spreadsheet would run as formulas
    path = tmp_path / "r.csv"
    key = '"=HYPERLINK(""x"")"'  # the CSV spelling of =HYPERLINK("x")
    path.write_text(HEADER + f"a,@v1,{key},1\na,v2,{key},3\nb,@v1,{key},2\nb,v2,{key},5\n")
    out = tmp_path / "out"
    # when
    code = main(
        ["analyze", str(path), "--out", str(out), "--line-click-share", "1"]
        + ["--subjective-model", "zscore_mos"]
    )
    # then: a quote before them, as in the web exports; negative numbers stay numbers
    assert code == 0
    assert (out / "mos.csv").read_text().splitlines() == [
        "video_id,dimension,mos,mos_raw,std,n,ci95_low_raw,ci95_high_raw",
        '\'@v1,"\'=HYPERLINK(""x"")",0.0,1.5,0.7071067811865476,2,-4.853102368087347,'
        "7.853102368087347",
        'v2,"\'=HYPERLINK(""x"")",100.0,4.0,1.4142135623730951,2,-8.706204736174694,'
        "16.706204736174694",
    ]
    assert (out / "all_combined.csv").read_text().splitlines() == [
        "video_id,all_combined",
        "'@v1,0.0",
        "v2,100.0",
    ]
    assert (out / "subjective_zscore_mos.csv").read_text().splitlines()[:2] == [
        "video_id,dimension,quality_score,quality_score_std",
        '\'@v1,"\'=HYPERLINK(""x"")",-0.7071067811865475,7.850462293418875e-17',
    ]


@pytest.mark.skipif(not SUREAL.exists(), reason="shared SUREAL data not present")
def test_python_dash_m_on_a_public_dataset(tmp_path):
    # given: NFLX public raw ratings (1-5 scale, so the line-clicker rule is off)
    out = tmp_path / "nflx"
    # when
    done = subprocess.run(
        [sys.executable, "-m", "quality", "analyze", str(SUREAL), "--out", str(out)]
        + ["--line-click-share", "1", "--draws", "10"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    # then
    assert done.returncode == 0, done.stderr
    ratings = pd.read_csv(SUREAL)
    mos = pd.read_csv(out / "mos.csv")
    expected = ratings.groupby("video_id")["score"].mean()
    assert mos.set_index("video_id")["mos_raw"].to_dict() == pytest.approx(expected.to_dict())
    summary = json.loads((out / "summary.json").read_text())
    assert summary["line_clickers"] == [] and summary["counts"]["ratings"] == len(ratings)


def test_python_dash_m_reports_errors_on_stderr(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("nothing,useful\n1,2\n")
    done = subprocess.run(
        [sys.executable, "-m", "quality", "analyze", str(path), "--out", str(tmp_path / "o")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "missing column(s): rater_id, video_id, dimension, score" in done.stderr
    assert done.stdout == ""


def test_help_describes_every_option_with_its_default_and_the_files_written():
    # given: the parser the command line uses
    from quality.cli import COMMANDS, _parser

    parser = _parser()
    # then: the program is described by a whole sentence, with its exit codes
    assert parser.description.endswith("no database needed.")
    assert "Exit status: 0 done, 2 unusable input" in parser.epilog
    commands = parser._subparsers._group_actions[0].choices
    for command in COMMANDS:
        sub = commands[command.NAME]
        for action in sub._actions:
            # and every argument of every command says what it is for
            assert action.help, f"{command.NAME} {action.option_strings or action.dest}"
            # and an option with a default names it (a flag is off, a list empty)
            if action.option_strings and action.nargs != 0 and action.default not in (None, []):
                assert "default" in action.help, f"{command.NAME} {action.option_strings}"
        out = next(a for a in sub._actions if "--out" in a.option_strings)
        assert "summary.json" in out.help


@pytest.mark.parametrize("score", ["50", "55"])
def test_a_rater_rating_a_video_twice_on_a_dimension_is_refused_naming_both_lines(
    tmp_path, capsys, score
):
    # given: a row repeated (an export pasted twice) or a second, different score
    path = tmp_path / "ratings.csv"
    path.write_text(
        HEADER + "r1,v1,q,50\nr2,v1,q,60\nr1,v2,q,70\nr2,v2,q,20\n\n" + f"r1,v1,q,{score}\n"
    )
    out = tmp_path / "o"
    # when
    code = main(["analyze", str(path), "--out", str(out)])
    # then: refused as the other commands refuse a repeated answer, nothing written
    assert code == 2
    assert capsys.readouterr().err == (
        f"error: {path}: line 7: rater 'r1' rated video 'v1' on dimension 'q' again "
        "(first on line 2)\n"
    )
    assert not out.exists()


def test_the_same_video_on_another_dimension_or_by_another_rater_is_no_repeat(tmp_path):
    path = tmp_path / "ratings.csv"
    path.write_text(HEADER + "r1,v1,q,50\nr1,v1,p,50\nr2,v1,q,50\nr1,v2,q,70\nr2,v2,q,20\n")
    assert (
        main(["analyze", str(path), "--out", str(tmp_path / "o"), "--line-click-share", "1"]) == 0
    )
