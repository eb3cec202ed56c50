"""``python -m quality verify``: outputs, error messages naming lines, exit codes, nothing
partial in DIR."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from quality.cli import main

ROOT = Path(__file__).resolve().parents[2]
HEADER = "rater_id,item_id,label,verdict\n"
VERDICTS = HEADER + (
    "a,v1,cat,yes\nb,v1,cat,yes\nc,v1,cat,no\n"
    "a,v1,dog,yes\nb,v1,dog,no\nc,v1,dog,no\n"
    "a,v2,=sky,YES\nb,v2,=sky,yes\nc,v2,=sky,yes\n"
)


@pytest.fixture
def verdicts_csv(tmp_path) -> Path:
    path = tmp_path / "verdicts.csv"
    path.write_text(VERDICTS)
    return path


def test_verify_writes_the_kept_labels_and_the_summary(verdicts_csv, tmp_path, capsys):
    # given
    out = tmp_path / "out"
    # when
    code = main(["verify", str(verdicts_csv), "--out", str(out)])
    # then
    assert code == 0
    assert sorted(p.name for p in out.iterdir()) == ["labels.csv", "summary.json"]
    assert (out / "labels.csv").read_text().splitlines() == [
        "item_id,label,yes,no,kept",
        "v1,cat,2,1,True",
        "v1,dog,1,2,False",
        "v2,'=sky,3,0,True",  # a formula-like label is quoted for spreadsheets
    ]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["version"] == "quality.stats.verify/1"
    assert summary["settings"] == {"keep": 2}
    assert summary["counts"] == {
        "verdicts": 9,
        "verifiers": 3,
        "items": 2,
        "labels": 3,
        "kept": 2,
    }
    assert summary["verifier_accuracy"]["b"] == {"verdicts": 3, "agreed": 3, "accuracy": 1.0}
    assert isinstance(summary["alpha"], float)
    assert "2 of 3 labels kept from 9 verdicts" in capsys.readouterr().out


def test_keep_option(verdicts_csv, tmp_path):
    out = tmp_path / "out"
    assert main(["verify", str(verdicts_csv), "--out", str(out), "--keep", "3"]) == 0
    lines = (out / "labels.csv").read_text().splitlines()
    assert lines[1:] == ["v1,cat,2,1,False", "v1,dog,1,2,False", "v2,'=sky,3,0,True"]
    assert json.loads((out / "summary.json").read_text())["settings"] == {"keep": 3}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "the file is empty"),
        (HEADER, "no verdicts (only a header)"),
        ("rater_id,item_id,verdict\na,v,yes\n", "missing column(s): label"),
        (HEADER + "a,v1,cat,yes\n\na,v1,dog,perhaps\n", "line 4: verdict 'perhaps' is not yes"),
        (HEADER + "a,v1,cat,yes\na,,dog,no\n", "line 3: item_id is empty"),
        (HEADER + "a,v1,cat,yes\na,v1,cat,no\n", "line 3: verifier 'a' judged label 'cat'"),
    ],
)
def test_malformed_files_exit_2_with_a_clear_message_and_write_nothing(
    tmp_path, capsys, content, message
):
    # given
    path = tmp_path / "bad.csv"
    path.write_text(content)
    # when
    code = main(["verify", str(path), "--out", str(tmp_path / "out")])
    # then
    assert code == 2
    assert message in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv"]


def test_bad_keep_and_missing_file_exit_2(verdicts_csv, tmp_path, capsys):
    assert main(["verify", str(verdicts_csv), "--out", str(tmp_path / "o"), "--keep", "0"]) == 2
    assert "--keep must be at least 1" in capsys.readouterr().err
    assert main(["verify", str(tmp_path / "nope.csv"), "--out", str(tmp_path / "o")]) == 2
    assert "nope.csv" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_python_dash_m_verify_reports_errors_on_stderr(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("nothing,useful\n1,2\n")
    done = subprocess.run(
        [sys.executable, "-m", "quality", "verify", str(path), "--out", str(tmp_path / "o")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "missing column(s): rater_id, item_id, label, verdict" in done.stderr
    assert done.stdout == ""
