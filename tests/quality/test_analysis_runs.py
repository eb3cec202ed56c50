"""Stored analysis runs, exports and figures, on a study rated through the services."""

import csv
import io
import json

import numpy as np
import pandas as pd
import pytest
from django.contrib.auth.models import Group
from rest_framework.test import APIClient

from annotation.models import Rating, Session, Stimulus, Study
from annotation.models.session import pseudonym_for
from annotation.roles import RESEARCHERS_GROUP
from media_pipeline.models import MetricScore
from quality.designs import ANALYSES
from quality.models import AnalysisRun
from quality.services import analysis_run_execute, analysis_run_request
from tests.factories import StimulusFactory, UserFactory, make_study
from tests.quality.rated import finished_session

pytestmark = pytest.mark.django_db

RNG = np.random.default_rng(7)
DIMS = ["subject", "completeness", "interaction"]


def rated_study(*, raters=8, stimuli=12, line_clicker=True):
    """A study whose ratings are written straight into the tables (the flow is tested
    elsewhere): each rater rates every stimulus in one session."""
    from annotation.services.studies import study_build_sessions

    study = make_study(session_size=stimuli, golden_per_session=0)
    videos = StimulusFactory.create_batch(
        stimuli, study=study, source_model="M1", action_class="hand"
    )
    for i, video in enumerate(videos):
        video.source_model = f"M{i % 3}"
        video.original_name = f"v{i}.mp4"
        video.save()
    (session,) = study_build_sessions(study=study)
    truth = RNG.uniform(10, 90, size=(stimuli, len(DIMS)))
    for r in range(raters):

        def score(v, d, r=r):
            if line_clicker and r == 0:
                return 50.0
            return round(float(np.clip(truth[v, d] + RNG.normal(0, 8), 0, 100)), 1)

        finished_session(rater=None, session=session, videos=videos, score=score)
    return study, videos


def researcher():
    user = UserFactory()
    user.groups.add(Group.objects.get_or_create(name=RESEARCHERS_GROUP)[0])
    client = APIClient()
    client.force_authenticate(user)
    return client


def request_run(client, study, django_capture_on_commit_callbacks) -> AnalysisRun:
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/api/studies/{study.slug}/analysis-runs/")
    assert response.status_code == 202
    return AnalysisRun.objects.get(pk=response.json()["id"])


def test_a_run_is_computed_stored_and_exported(django_capture_on_commit_callbacks):
    # given
    study, videos = rated_study()
    client = researcher()
    # when
    run = request_run(client, study, django_capture_on_commit_callbacks)
    run.refresh_from_db()
    # then: the line clicker is excluded with the reason and the figures
    assert run.status == "done", run.error
    assert run.ratings_count == 8 * 12 * 3
    (exclusion,) = run.exclusions
    assert exclusion["rater_id"].startswith("R") and "line" in exclusion["reason"]
    assert len(run.mos) == 12 * 3
    assert set(run.summary["alpha"]) == set(DIMS)
    # the raw MOS equals a pandas groupby over the kept raters' ratings
    ratings = pd.DataFrame(
        list(
            Rating.objects.values_list(
                "answer__assignment__rater_id", "stimulus_id", "dimension__key", "score"
            )
        ),
        columns=["rater", "video", "dimension", "score"],
    )
    clicker = (
        Rating.objects.filter(score=50.0)
        .values_list("answer__assignment__rater_id", flat=True)
        .first()
    )
    expected = ratings[ratings.rater != clicker].groupby(["video", "dimension"])["score"].mean()
    for row in run.mos:
        assert row["mos_raw"] == pytest.approx(
            expected[(int(row["video_id"]), row["dimension"])], abs=1e-9
        )
    # the MOS CSV, cell by cell
    response = client.get(f"/api/studies/{study.slug}/exports/mos.csv")
    assert response.status_code == 200
    table = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert len(table) == 12
    by_key = {(int(r["video_id"]), r["dimension"]): r for r in run.mos}
    for line in table:
        video = Stimulus.objects.get(pk=int(line["stimulus_id"]))
        assert (line["file_name"], line["source_model"]) == (
            video.original_name,
            video.source_model,
        )
        for dim in DIMS:
            stored = by_key[(video.pk, dim)]
            for field in ("mos", "mos_raw", "std", "n", "ci95_low_raw", "ci95_high_raw"):
                assert float(line[f"{field}_{dim}"]) == pytest.approx(float(stored[field]))
        assert float(line["all_combined"]) == pytest.approx(
            run.summary["all_combined"][str(video.pk)]
        )


def test_raw_ratings_export_flags_exclusions_and_feeds_the_cli(
    django_capture_on_commit_callbacks, tmp_path
):
    study, videos = rated_study()
    client = researcher()
    run = request_run(client, study, django_capture_on_commit_callbacks)
    run.refresh_from_db()
    # a ninth rater rates after the run: in the next run, not in this one's export
    (session,) = Session.objects.filter(study=study)
    late = finished_session(rater=None, session=session, videos=videos, score=lambda v, d: 70.0)
    body = b"".join(
        client.get(f"/api/studies/{study.slug}/exports/ratings.csv").streaming_content
    ).decode()
    table = list(csv.DictReader(io.StringIO(body)))
    assert len(table) == 8 * 12 * 3 == run.ratings_count
    raters = b"".join(
        client.get(f"/api/studies/{study.slug}/exports/raters.csv").streaming_content
    ).decode()
    decision = {
        row["rater_id"]: row["latest_run_decision"] for row in csv.DictReader(io.StringIO(raters))
    }
    assert decision[pseudonym_for(late.rater_id)] == "not_in_run"
    assert sorted(set(decision.values())) == ["excluded", "kept", "not_in_run"]
    assert list(table[0]) == [
        "rater_id",
        "video_id",
        "dimension",
        "score",
        "session_id",
        "excluded",
    ]
    flagged = {row["rater_id"] for row in table if row["excluded"]}
    assert flagged == {run.exclusions[0]["rater_id"]}
    # the export is the CLI's input format: the CLI gives the same MOS as the stored run
    import subprocess
    import sys

    (tmp_path / "ratings.csv").write_text(body)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "quality",
            "analyze",
            str(tmp_path / "ratings.csv"),
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    cli = pd.read_csv(tmp_path / "out" / "mos.csv")
    stored = pd.DataFrame(run.mos)
    merged = cli.merge(stored.astype({"video_id": int}), on=["video_id", "dimension"])
    assert len(merged) == 36
    np.testing.assert_allclose(merged["mos_x"], merged["mos_y"], atol=1e-9)


def test_provenance_and_rater_statistics(django_capture_on_commit_callbacks):
    study, _ = rated_study()
    secret = "https://app.prolific.com/submissions/complete?cc=C1SECRET"
    Study.objects.filter(pk=study.pk).update(completion_url=secret, screenout_url=secret)
    client = researcher()
    run = request_run(client, study, django_capture_on_commit_callbacks)
    response = client.get(f"/api/studies/{study.slug}/exports/provenance.json")
    provenance = json.loads(response.content)
    assert provenance["analysis_run"]["id"] == run.pk
    assert (
        f'filename="{study.slug}-provenance-run{run.pk}.json"' in (response["Content-Disposition"])
    )
    assert provenance["study_settings"]["line_click_share"] == 0.4
    # no secret in a file researchers share: the entry token, the completion code
    assert "entry_token" not in provenance["study_settings"]
    assert "C1SECRET" not in response.content.decode()
    assert len(provenance["analysis_run"]["exclusions"]) == 1
    raters = b"".join(
        client.get(f"/api/studies/{study.slug}/exports/raters.csv").streaming_content
    ).decode()
    lines = raters.splitlines()
    assert lines[0].startswith("rater_id,qualification_state") and len(lines) == 9


@pytest.mark.parametrize("design", sorted(ANALYSES))
def test_every_design_offers_raters_csv_with_its_whole_header(design):
    # given: a study of the design that nobody joined yet
    study = make_study(design=design)
    assert {"raters.csv", "provenance.json"} <= set(ANALYSES[design].exports)
    # when
    response = researcher().get(f"/api/studies/{study.slug}/exports/raters.csv")
    # then
    assert response.status_code == 200
    text = b"".join(response.streaming_content).decode()
    assert text.splitlines() == [
        "rater_id,qualification_state,qualification_share,sessions_started,"
        "sessions_finished,answers,golden_agreement_min,live_guard_line_click_flag,"
        "sessions_failed_gate,sessions_excluded_by_admin,sessions_rejected_in_audit,"
        "excluded_by_admin,excluded_reason,withdrew,"
        "latest_run_id,latest_run_decision,latest_run_rules"
    ]


@pytest.mark.parametrize(
    "name", ["srcc-curve", "mos-by-model", "mos-by-class", "model-ranking", "mos-vs-std"]
)
def test_figures_render_as_png(django_capture_on_commit_callbacks, name):
    study, _ = rated_study()
    client = researcher()
    run = request_run(client, study, django_capture_on_commit_callbacks)
    response = client.get(f"/api/analysis-runs/{run.pk}/figures/{name}.png")
    assert response.status_code == 200 and response["Content-Type"] == "image/png"
    assert response.content[:8] == b"\x89PNG\r\n\x1a\n" and len(response.content) > 5000


def test_metric_agreement_is_part_of_the_run(django_capture_on_commit_callbacks):
    study, videos = rated_study()
    mos_like = {v.pk: i for i, v in enumerate(videos)}
    MetricScore.objects.bulk_create(
        MetricScore(
            stimulus=v, metric=name, version=version, value=value, device="cpu", runtime_s=0.0
        )
        for v in videos
        for name, version, value in (
            ("brightness", "2", mos_like[v.pk] * 2.0),
            ("si", "2", RNG.uniform()),
            ("si", "1", RNG.uniform()),  # the old definition: left out, not averaged in
        )
    )
    run = request_run(researcher(), study, django_capture_on_commit_callbacks)
    run.refresh_from_db()
    agreement = run.summary["metric_agreement"]
    assert agreement["stimuli"] == 12
    targets = {row["target"] for row in agreement["rows"]}
    assert targets == {*DIMS, "all_combined"}
    assert {row["metric"] for row in agreement["rows"]} == {"brightness", "si"}


def test_metric_agreement_uses_each_metrics_newest_version_only():
    # given: si stored at version 1 for every video and at version 2 for six of them
    study, videos = rated_study()
    MetricScore.objects.bulk_create(
        [MetricScore(stimulus=v, metric="si", version="1", value=1.0, device="cpu", runtime_s=0)
         for v in videos]
        + [MetricScore(stimulus=v, metric="si", version="2", value=i, device="cpu", runtime_s=0)
           for i, v in enumerate(videos[:6])]
    )  # fmt: skip
    # when
    run = analysis_run_request(study=study)
    analysis_run_execute(run_id=run.pk)
    run.refresh_from_db()
    # then: only the six videos scored with the new definition count
    assert run.summary["metric_agreement"]["stimuli"] == 6


def test_a_study_without_ratings_gives_a_failed_run_with_a_reason(
    django_capture_on_commit_callbacks,
):
    study = make_study()
    run = request_run(researcher(), study, django_capture_on_commit_callbacks)
    run.refresh_from_db()
    assert (run.status, run.error) == ("failed", "the study has no ratings yet")
