"""Metric agreement on the researcher's surface, and exports written to a file by a job."""

import csv
import io
from pathlib import Path

import pandas as pd
import pytest
from django.conf import settings
from rest_framework.test import APIClient
from scipy import stats

from media_pipeline.models import MetricScore
from quality import export
from quality.api import download_name
from quality.models import ExportJob
from tests.factories import UserFactory
from tests.quality.test_analysis_runs import RNG, rated_study, request_run, researcher

pytestmark = pytest.mark.django_db


def scored_run(django_capture_on_commit_callbacks):
    """A finished run of a rated study whose stimuli carry two metric scores."""
    study, videos = rated_study(stimuli=20)
    MetricScore.objects.bulk_create(
        MetricScore(stimulus=v, metric=name, version="2", value=value, device="cpu", runtime_s=0.0)
        for i, v in enumerate(videos)
        for name, value in (("brightness", i * 2.0), ("contrast", float(RNG.uniform())))
    )
    client = researcher()
    run = request_run(client, study, django_capture_on_commit_callbacks)
    run.refresh_from_db()
    assert run.status == "done", run.error
    return study, run, client


def body_of(response) -> str:
    return b"".join(response.streaming_content).decode()


def queue_export(client, study, name, django_capture_on_commit_callbacks, **extra):
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/api/studies/{study.slug}/export-jobs/", {"name": name, **extra}, format="json"
        )
    return response


def test_metric_agreement_csv_holds_every_row_of_the_run(django_capture_on_commit_callbacks):
    # given
    study, run, client = scored_run(django_capture_on_commit_callbacks)
    agreement = run.summary["metric_agreement"]
    # when
    response = client.get(f"/api/studies/{study.slug}/exports/metric_agreement.csv")
    # then: one line per (metric, target), then one ridge line per target, cell by cell
    assert response.status_code == 200
    table = list(csv.DictReader(io.StringIO(body_of(response))))
    metric_lines = [line for line in table if line["kind"] == "metric"]
    assert len(metric_lines) == len(agreement["rows"]) == 2 * 4
    for line, row in zip(metric_lines, agreement["rows"], strict=True):
        assert (line["metric"], line["target"], int(line["n"])) == (
            row["metric"],
            row["target"],
            row["n"],
        )
        for key in ("srcc", "plcc", "srcc_ci95_low", "srcc_ci95_high", "plcc_ci95_high"):
            assert float(line[key]) == pytest.approx(row[key], abs=1e-12)
    trained = [line for line in table if line["kind"] == "trained"]
    assert {line["target"] for line in trained} == set(agreement["ridge"])
    for line in trained:
        ridge = agreement["ridge"][line["target"]]
        assert line["metric"] == "ridge(brightness+contrast)"
        assert float(line["srcc"]) == pytest.approx(ridge["srcc_mean"], abs=1e-12)
        assert int(line["splits"]) == ridge["splits"] == 10


def test_metric_agreement_figure_and_table_on_the_results_page(
    client, django_capture_on_commit_callbacks
):
    study, run, api = scored_run(django_capture_on_commit_callbacks)
    response = api.get(f"/api/analysis-runs/{run.pk}/figures/metric-agreement.png")
    assert response.status_code == 200 and response.content[:4] == b"\x89PNG"
    client.force_login(UserFactory(is_staff=True))
    page = client.get(f"/studies/{study.slug}/results/").content.decode()
    assert 'id="agreement"' in page and "ridge (brightness, contrast)" in page
    brightness = next(
        row
        for row in run.summary["metric_agreement"]["rows"]
        if (row["metric"], row["target"]) == ("brightness", "subject")
    )
    assert f"{brightness['srcc']:.3f} / {brightness['plcc']:.3f}" in page
    assert 'id="correlation"' in page and "Kendall" in page


def test_without_metric_scores_there_is_no_agreement_figure(django_capture_on_commit_callbacks):
    study, _ = rated_study()
    client = researcher()
    run = request_run(client, study, django_capture_on_commit_callbacks)
    response = client.get(f"/api/analysis-runs/{run.pk}/figures/metric-agreement.png")
    assert response.status_code == 404
    export_response = client.get(f"/api/studies/{study.slug}/exports/metric_agreement.csv")
    assert body_of(export_response).splitlines() == [",".join(export.AGREEMENT_HEADER)]


@pytest.mark.parametrize(
    "name", ["ratings.csv", "mos.csv", "metric_agreement.csv", "metric_pairwise.csv"]
)
def test_an_export_job_writes_the_same_bytes_as_the_stream(
    django_capture_on_commit_callbacks, name
):
    # given
    study, run, client = scored_run(django_capture_on_commit_callbacks)
    stream = client.get(f"/api/studies/{study.slug}/exports/{name}?run={run.pk}")
    streamed = body_of(stream)
    # when
    response = queue_export(client, study, name, django_capture_on_commit_callbacks, run=run.pk)
    # then
    assert response.status_code == 202
    job = client.get(f"/api/export-jobs/{response.json()['id']}/").json()
    assert job["status"] == "done" and job["run"] == run.pk
    assert job["size_bytes"] == len(streamed.encode())
    download = client.get(job["download_url"])
    assert download.status_code == 200
    assert b"".join(download.streaming_content).decode() == streamed
    # named as the streamed file is: every export of a run carries the run's id (raw
    # ratings too: which count, and up to when, is the run's)
    assert download["Content-Disposition"] == stream["Content-Disposition"]
    assert f"-run{run.pk}.csv" in download["Content-Disposition"]
    stored = Path(settings.MEDIA_ROOT) / ExportJob.objects.get().file.name
    assert not stored.with_name(stored.name + ".part").exists()


def test_a_file_prepared_before_files_kept_their_export_name_downloads_as_before():
    study, _ = rated_study()
    job = ExportJob(study=study, name="mos.csv", file=f"exports/{study.slug}/7-0a1b2c-mos.csv")
    assert download_name(job) == f"{study.slug}-mos.csv"
    job.file = f"exports/{study.slug}/7-0a1b2c-{study.slug}-mos-run3.csv"
    assert download_name(job) == f"{study.slug}-mos-run3.csv"


def test_export_jobs_refuse_what_cannot_be_made(django_capture_on_commit_callbacks):
    study, _ = rated_study()
    client = researcher()
    # an unknown export, and a run export before any run
    assert (
        queue_export(client, study, "secrets.csv", django_capture_on_commit_callbacks).status_code
        == 400
    )
    response = queue_export(client, study, "mos.csv", django_capture_on_commit_callbacks)
    assert response.status_code == 404 and "analysis run" in response.json()["detail"]
    assert not ExportJob.objects.exists()


def test_a_job_not_yet_done_cannot_be_downloaded(django_capture_on_commit_callbacks):
    study, _ = rated_study()
    client = researcher()
    response = client.post(
        f"/api/studies/{study.slug}/export-jobs/", {"name": "ratings.csv"}, format="json"
    )  # not executed: the commit callbacks are not run
    assert response.json()["status"] == "queued" and response.json()["download_url"] is None
    refused = client.get(f"/api/export-jobs/{response.json()['id']}/download")
    assert refused.status_code == 409


def test_a_failing_export_is_recorded_and_leaves_no_file(
    django_capture_on_commit_callbacks, monkeypatch
):
    study, _ = rated_study()
    client = researcher()

    def broken_rows(*, study, through=None):
        yield ("R1", 1, "subject", 50.0, 1)
        raise RuntimeError("database went away")

    monkeypatch.setattr(export, "ratings_rows", broken_rows)
    response = queue_export(client, study, "ratings.csv", django_capture_on_commit_callbacks)
    job = ExportJob.objects.get(pk=response.json()["id"])
    assert (job.status, job.error, job.file.name) == ("failed", "database went away", "")
    folder = Path(settings.MEDIA_ROOT) / "exports" / study.slug
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("role", ["rater", "anonymous"])
def test_export_jobs_are_for_researchers_only(role):
    # given: a finished job of a study
    study, _ = rated_study()
    job = ExportJob.objects.create(study=study, name="ratings.csv", status="done")
    client = APIClient()
    if role == "rater":
        client.force_authenticate(UserFactory())
    # when / then: session authentication answers 403 to anonymous users too
    create = client.post(
        f"/api/studies/{study.slug}/export-jobs/", {"name": "ratings.csv"}, format="json"
    )
    assert create.status_code == 403
    assert client.get(f"/api/export-jobs/{job.pk}/").status_code == 403
    assert client.get(f"/api/export-jobs/{job.pk}/download").status_code == 403
    assert ExportJob.objects.count() == 1


def test_a_partly_scored_metric_is_judged_on_its_stimuli_and_keeps_the_others(
    django_capture_on_commit_callbacks,
):
    # given: brightness on all 20 stimuli, si on 16, a new metric on only 4 so far
    study, videos = rated_study(stimuli=20)
    coverage = {"brightness": 20, "si": 16, "newmetric": 4}
    values = {
        v.pk: (i * 2.0, float(RNG.uniform()), float(RNG.uniform())) for i, v in enumerate(videos)
    }
    MetricScore.objects.bulk_create(
        MetricScore(stimulus=v, metric=name, version="1", value=value, device="cpu", runtime_s=0.0)
        for i, v in enumerate(videos)
        for name, value in zip(coverage, values[v.pk], strict=True)
        if i < coverage[name]
    )
    client = researcher()
    # when
    run = request_run(client, study, django_capture_on_commit_callbacks)
    run.refresh_from_db()
    # then: each metric's rows use its own stimuli (SRCC checked with scipy); the new
    # metric, under 5 stimuli, is left out instead of removing the whole benchmark
    agreement = run.summary["metric_agreement"]
    mos = pd.DataFrame(run.mos).astype({"video_id": int})
    subject = mos[mos["dimension"] == "subject"].set_index("video_id")["mos"]
    rows = {(r["metric"], r["target"]): r for r in agreement["rows"]}
    assert {metric for metric, _ in rows} == {"brightness", "si"}
    for metric, column, stimuli in (("brightness", 0, videos), ("si", 1, videos[:16])):
        row = rows[(metric, "subject")]
        x = [values[v.pk][column] for v in stimuli]
        y = [subject[v.pk] for v in stimuli]
        assert row["n"] == len(stimuli)
        assert row["srcc"] == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    # the ridge predictor combines both: the 16 stimuli that have both
    assert {target["n"] for target in agreement["ridge"].values()} == {16}
    table = list(csv.DictReader(io.StringIO(body_of(
        client.get(f"/api/studies/{study.slug}/exports/metric_agreement.csv")
    ))))  # fmt: skip
    assert {int(line["n"]) for line in table if line["kind"] == "trained"} == {16}
    assert {int(line["n"]) for line in table if line["metric"] == "si"} == {16}


def test_metric_pairwise_csv_holds_every_pair_of_the_run(django_capture_on_commit_callbacks):
    # given
    study, run, client = scored_run(django_capture_on_commit_callbacks)
    pairwise = run.summary["metric_agreement"]["pairwise"]
    # when
    response = client.get(f"/api/studies/{study.slug}/exports/metric_pairwise.csv")
    # then: one line per (target, pair of metrics), cell by cell
    table = list(csv.DictReader(io.StringIO(body_of(response))))
    assert list(table[0]) == list(export.PAIRWISE_HEADER)
    assert len(table) == len(pairwise) == 4
    for line, pair in zip(table, pairwise, strict=True):
        assert (line["target"], line["metric_a"], line["metric_b"], int(line["n"])) == (
            pair["target"],
            "brightness",
            "contrast",
            20,
        )
        for key in ("srcc_a", "srcc_b", "p_value"):
            assert float(line[key]) == pytest.approx(pair[key], abs=1e-12)


def test_pairs_of_a_run_before_the_oriented_test_are_not_exported(
    django_capture_on_commit_callbacks,
):
    # given: a run stored by quality.stats/1.0, whose pairs came from the signed test
    study, run, client = scored_run(django_capture_on_commit_callbacks)
    old = {"target": "subject", "a": "brightness", "b": "contrast", "n": 20, "p_value": 0.0}
    run.summary["metric_agreement"]["pairwise"] = [old]
    run.save(update_fields=["summary"])
    # when
    response = client.get(f"/api/studies/{study.slug}/exports/metric_pairwise.csv")
    # then: the header alone, no row of empty metric names
    assert list(csv.reader(io.StringIO(body_of(response)))) == [list(export.PAIRWISE_HEADER)]
