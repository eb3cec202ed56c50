"""``python -m quality labels``: outputs, error messages naming lines, exit codes, nothing
partial in DIR."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from quality.cli import main

ROOT = Path(__file__).resolve().parents[2]
HEADER = "rater_id,item_id,question,kind,answer\n"
ANSWERS = HEADER + (
    "a,v1,aesthetic,score,3\n"
    "b,v1,aesthetic,score,4\n"
    "c,v1,aesthetic,score,8\n"
    "a,v1,motion,ordinal,2\n"
    "b,v1,motion,ordinal,2\n"
    "c,v1,motion,ordinal,invalid\n"
    "a,v2,motion,ordinal,1\n"
    "b,v2,motion,ordinal,2\n"
    "c,v2,motion,ordinal,3\n"
    "a,v3,motion,ordinal,invalid\n"
    "b,v3,motion,ordinal,Invalid\n"
    "c,v3,motion,ordinal,3\n"
    "a,v1,style,tags,noir|retro\n"
    "b,v1,style,tags,noir\n"
    "c,v1,style,tags,\n"
    "a,v2,style,tags,noir\n"
    "b,v2,style,tags,noir\n"
    "c,v2,style,tags,retro\n"
    "d,v2,style,tags,retro\n"
)


@pytest.fixture
def answers_csv(tmp_path) -> Path:
    path = tmp_path / "answers.csv"
    path.write_text(ANSWERS)
    return path


def test_labels_writes_the_labels_and_the_summary(answers_csv, tmp_path, capsys):
    # given
    out = tmp_path / "out"
    # when
    code = main(["labels", str(answers_csv), "--out", str(out)])
    # then
    assert code == 0
    assert sorted(p.name for p in out.iterdir()) == ["labels.csv", "summary.json"]
    assert (out / "labels.csv").read_text().splitlines() == [
        "item_id,question,kind,value,n,status,std",
        "v1,aesthetic,score,5.0,3,ok,2.6457513110645907",
        "v1,motion,ordinal,2,3,ok,",
        "v1,style,tags,noir,3,ok,",  # 2 of 3 keep noir; retro 1 of 3
        "v2,motion,ordinal,,3,tie,",
        "v2,style,tags,,4,ok,",  # 2 of 4 is not more than half
        "v3,motion,ordinal,,3,invalid,",
    ]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["version"] == "quality.stats.labels/1"
    assert summary["settings"] == {
        "keep_share": 0.5,
        "method": "majority",
        "max_iterations": 100,
        "tolerance": 1e-05,
    }
    assert summary["counts"] == {"answers": 19, "raters": 4, "items": 3, "labels": 6}
    assert summary["questions"]["motion"] == {"kind": "ordinal", "ok": 1, "invalid": 1, "tie": 1}
    assert set(summary["alpha"]) == {"aesthetic", "motion"}
    assert summary["alpha"]["aesthetic"] == 0.0  # one unit: D_o = D_e
    assert set(summary["tag_alpha"]["style"]) == {"noir", "retro"}
    assert summary["rater_agreement"]["a"]["decisions"] == 5
    assert summary["dawid_skene"] == {}
    assert "6 labels of 3 item(s) from 19 answers (1 tie(s) for adjudication)" in (
        capsys.readouterr().out
    )


def test_keep_share_and_dawid_skene_options(answers_csv, tmp_path):
    # when
    out = tmp_path / "out"
    code = main(
        ["labels", str(answers_csv), "--out", str(out), "--keep-share", "0.25"]
        + ["--method", "dawid-skene", "--max-iterations", "7"]
    )
    # then: 1 of 3 and 2 of 4 are more than a quarter; Dawid-Skene decides the 1-2-3 item
    assert code == 0
    lines = (out / "labels.csv").read_text().splitlines()
    assert "v1,style,tags,noir|retro,3,ok," in lines
    assert "v2,style,tags,noir|retro,4,ok," in lines
    assert not any(",tie," in line for line in lines)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["settings"]["method"] == "dawid-skene"
    fit = summary["dawid_skene"]["motion"]
    assert fit["levels"] == ["1", "2", "3"] and fit["iterations"] <= 7
    assert set(fit["confusion"]) == {"a", "b", "c"}
    assert set(fit["confusion"]["a"]["1"]) == {"1", "2", "3"}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "the file is empty"),
        (HEADER, "no answers (only a header)"),
        ("rater_id,item_id,question,answer\na,v,q,1\n", "missing column(s): kind"),
        (HEADER + "a,v1,q,score,3\n\na,v2,q,score,abc\n", "line 4: score 'abc' is not a finite"),
        (HEADER + "a,v1,q,score,3\na,v2,q,ordinal,3\n", "line 3: question 'q' is kind 'ordinal'"),
        (HEADER + "a,v1,q,ordinal,great\n", "line 2: ordinal answer 'great' is neither"),
        (HEADER + "a,v1,q,tags,x||y\n", "line 2: tags answer 'x||y' has an empty tag"),
        (HEADER + "a,v1,q,score,3\n,v2,q,score,4\n", "line 3: rater_id is empty"),
        (HEADER + "a,v1,q,lickert,3\n", "line 2: kind 'lickert' is not one of"),
        (HEADER + "a,v1,q,score,3\na,v1,q,score,4\n", "line 3: rater 'a' answered question 'q'"),
        (HEADER + "a,v1,q,score,3,9\n", "line 2: 6 field(s) where the header has 5"),
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
    code = main(["labels", str(path), "--out", str(out)])
    # then
    assert code == 2
    assert message in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv"]


def test_an_error_leaves_an_existing_output_folder_untouched(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "labels.csv").write_text("previous run")
    path = tmp_path / "bad.csv"
    path.write_text(HEADER + "a,v1,q,score,x\n")
    assert main(["labels", str(path), "--out", str(out)]) == 2
    assert [p.name for p in out.iterdir()] == ["labels.csv"]
    assert (out / "labels.csv").read_text() == "previous run"


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--keep-share", "1"], "--keep-share must be in [0, 1)"),
        (["--keep-share", "-0.1"], "--keep-share"),
        (["--max-iterations", "0"], "--max-iterations"),
        (["--tolerance", "-1"], "--tolerance"),
    ],
)
def test_bad_option_values_exit_2(answers_csv, tmp_path, capsys, option, message):
    code = main(["labels", str(answers_csv), "--out", str(tmp_path / "o"), *option])
    assert code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_missing_input_file_exits_2(tmp_path, capsys):
    assert main(["labels", str(tmp_path / "nope.csv"), "--out", str(tmp_path / "o")]) == 2
    assert "nope.csv" in capsys.readouterr().err


def test_ids_stay_text_and_cells_a_spreadsheet_would_run_are_quoted(tmp_path):
    # given: exported ids that were quoted ('=...) are read back without the quote
    path = tmp_path / "a.csv"
    path.write_text(
        HEADER + "007,01,'=q,score,1\n8,01,'=q,score,2\n007,02,@t,tags,-x|y\n8,02,@t,tags,-x\n"
    )
    out = tmp_path / "out"
    # when
    assert main(["labels", str(path), "--out", str(out)]) == 0
    # then
    assert (out / "labels.csv").read_text().splitlines() == [
        "item_id,question,kind,value,n,status,std",
        "01,'=q,score,1.5,2,ok,0.7071067811865476",
        "02,'@t,tags,'-x,2,ok,",
    ]


def test_negative_scores_and_levels_are_written_as_numbers(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text(
        HEADER + "r0,v0,s,score,-2\nr1,v0,s,score,-3\nr2,v0,s,score,-4\n"
        "r0,v0,o,ordinal,-3\nr1,v0,o,ordinal,-3\n"
    )
    out = tmp_path / "out"
    assert main(["labels", str(path), "--out", str(out)]) == 0
    # before: '-3.0 and '-3, text to a spreadsheet and to pandas
    assert (out / "labels.csv").read_text().splitlines()[1:] == [
        "v0,s,score,-3.0,3,ok,1.0",
        "v0,o,ordinal,-3,2,ok,",
    ]


def test_python_dash_m_labels(answers_csv, tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "quality", "labels", str(answers_csv), "--out", str(tmp_path / "o")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "o" / "labels.csv").read_text().startswith("item_id,question,kind,")
