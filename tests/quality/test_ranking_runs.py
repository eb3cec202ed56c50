"""Analysis runs of a ranking study: the consensus and Recall@K against a metric the GPU
workers scored, the rankings export that `python -m quality rank` reproduces, and the
results page."""

import io
import json

import numpy as np
import pandas as pd
import pytest
from django.test import Client
from scipy import stats

from annotation.designs.ranking import Ranking
from annotation.services.studies import study_build_sessions
from frontend.demo.simulate import simulate_raters
from media_pipeline.models import MetricScore
from quality.cli import main as quality_cli
from quality.designs.ranking import rankings_frame
from tests.annotation.design_fixtures import CONDITIONS
from tests.factories import StimulusFactory, UserFactory, make_study
from tests.quality.rated import batches_of, received_later, run_now

pytestmark = pytest.mark.django_db

# The people's order is a > b > c; the metric's is b > c > a (higher is better).
METRIC = {"model-a": 1.0, "model-b": 3.0, "model-c": 2.0}


@pytest.fixture
def study():
    """Three conditions on six prompts, two criteria; five raters rank a > b > c (one of
    them swaps the last two on every other prompt); every video has a metric score."""
    study = make_study(design="ranking", golden_per_session=0, state="running")
    for prompt in range(6):
        for condition in CONDITIONS:
            video = StimulusFactory(study=study, condition=condition, content=f"p{prompt}")
            MetricScore.objects.create(
                stimulus=video, metric="sharpness", version="1", value=METRIC[condition],
                device="cpu", runtime_s=0.1,
            )  # fmt: skip
    study_build_sessions(study=study)

    def values(item, layout, profile, rng):
        order = sorted(layout, key=lambda video: video.condition)
        if profile["swap"] and int(item.content[1:]) % 2:
            order[1], order[2] = order[2], order[1]
        ids = [str(video.public_id) for video in layout]
        return Ranking(tuple((str(v.public_id),) for v in order), tuple(sorted(ids)))

    profiles = [{"swap": False}] * 4 + [{"swap": True}]
    simulate_raters(study=study, profiles=profiles, values=values, seed=1)
    return study


def test_a_run_finds_the_consensus_and_compares_it_with_the_metric(study):
    # when
    run = run_now(study)
    summary = run.summary
    # then: the people's order, per question and pooled
    assert summary["against_metric"] == "sharpness"
    for question in ("aesthetics", "text_consistency"):
        assert summary["kemeny"][question]["*"]["order"] == ["model-a", "model-b", "model-c"]
        # Recall@1: the metric's best (b) is not the people's (a); @3 holds all three
        assert summary["recall_at"][question] == {"1": 0.0, "3": 1.0}
        # Kendall tau and Spearman rho of the two rankings, against scipy
        human, metric = [3, 2, 1], [METRIC[c] for c in CONDITIONS]
        correlation = summary["model_correlation"][question]
        assert correlation["kendall_tau"] == pytest.approx(stats.kendalltau(human, metric)[0])
        assert correlation["spearman_rho"] == pytest.approx(stats.spearmanr(human, metric)[0])
    consensus = [r for r in summary["consensus"] if r["prompt_id"] == "*"]
    assert {r["condition"] for r in consensus if r["kemeny_rank"] == 1} == {"model-a"}


def test_the_rankings_export_feeds_the_cli_which_finds_the_same_consensus(study, tmp_path):
    run = run_now(study)
    user = UserFactory(is_staff=True)
    client = Client()
    client.force_login(user)
    # when
    exported = client.get(f"/api/studies/{study.slug}/exports/rankings.csv")
    # then: the CLI's format, one line per answer, conditions best first
    assert exported.status_code == 200
    text = b"".join(exported.streaming_content).decode()
    frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    assert list(frame.columns) == [
        "rater_id", "question", "prompt_id", "ranking", "session_id", "excluded",
    ]  # fmt: skip
    assert len(frame) == len(rankings_frame(study=study)) == 5 * 6 * 2
    assert set(frame["ranking"]) == {"model-a>model-b>model-c", "model-a>model-c>model-b"}
    # and the run's model scores: the metric averaged per condition
    exported = client.get(f"/api/studies/{study.slug}/exports/model_scores.csv")
    scores_text = b"".join(exported.streaming_content).decode()
    scores_frame = pd.read_csv(io.StringIO(scores_text))
    assert dict(zip(scores_frame["condition"], scores_frame["score"], strict=True)) == (
        pytest.approx(METRIC)
    )
    # when: the CLI on the two exports as they are
    rankings = tmp_path / "rankings.csv"
    rankings.write_text(text)
    scores = tmp_path / "scores.csv"
    scores.write_text(scores_text)
    out = tmp_path / "out"
    assert quality_cli(["rank", str(rankings), "--out", str(out), "--against", str(scores),
                        "--bootstrap", "200", "--seed", "0"]) == 0  # fmt: skip
    # then: the same consensus and Recall@K as the run's
    cli = json.loads((out / "summary.json").read_text())
    assert cli["kemeny"] == run.summary["kemeny"]
    assert cli["recall_at"] == run.summary["recall_at"]
    consensus = pd.read_csv(out / "consensus.csv", dtype={"prompt_id": str})
    stored = pd.DataFrame(run.summary["consensus"])
    assert np.allclose(consensus["borda"], stored["borda"])
    assert list(consensus["condition"]) == list(stored["condition"])


def test_the_results_page_shows_the_consensus_and_the_recall_table(study):
    run = run_now(study)
    client = Client()
    client.force_login(UserFactory(is_staff=True))
    page = client.get(f"/studies/{study.slug}/results/").content.decode()
    assert 'id="consensus"' in page and 'data-prompt="*"' in page
    assert 'id="recall-table"' in page and 'data-k="3"' in page
    assert "Recall@K = |top K of the human ranking" in page
    assert 'id="rater-taus"' in page and page.count("<tr") > 10
    figure = client.get(f"/api/analysis-runs/{run.pk}/figures/rank-distribution.png")
    assert figure.status_code == 200 and figure["Content-Type"] == "image/png"


def test_the_results_say_where_the_kemeny_order_is_not_unique():
    from types import SimpleNamespace

    from quality.designs.ranking import results_context

    row = {"question": "q", "condition": "a", "borda": 1.0, "pl_strength": 0.0,
           "pl_ci95_low": 0.0, "pl_ci95_high": 0.0, "kemeny_rank": 1}  # fmt: skip
    summary = {
        "consensus": [{**row, "prompt_id": "*"}, {**row, "prompt_id": "p1"}],
        "kemeny": {
            "q": {
                "*": {"unique": True, "n_optimal": 1, "alternative": None},
                "p1": {"unique": False, "n_optimal": 2, "alternative": ["b", "a"]},
            }
        },
    }
    context = results_context(run=SimpleNamespace(summary=summary))
    block = context["consensus_by_question"]["q"]
    assert block["pooled"]["note"] == ""
    assert block["prompts"]["p1"]["note"] == "not unique: 2 orders are as close, e.g. b > a"


def test_a_run_without_a_metric_exports_model_scores_as_only_a_header(study):
    MetricScore.objects.all().delete()
    run = run_now(study)
    assert run.summary["model_scores"] is None and run.summary["recall_at"] is None
    client = Client()
    client.force_login(UserFactory(is_staff=True))
    exported = client.get(f"/api/studies/{study.slug}/exports/model_scores.csv")
    assert b"".join(exported.streaming_content).decode().splitlines() == ["condition,score"]


def test_rankings_received_after_a_run_started_are_neither_in_it_nor_in_its_export(study):
    # given: a batch whose rankings arrived after the run started
    later = received_later(study)
    # when
    run = run_now(study)
    client = Client()
    client.force_login(UserFactory(is_staff=True))
    exported = client.get(f"/api/studies/{study.slug}/exports/rankings.csv")
    # then: the run read the others, and its export holds what it read
    text = b"".join(exported.streaming_content).decode()
    table = pd.read_csv(io.StringIO(text), keep_default_na=False)
    assert later not in batches_of(run, table)
    assert run.ratings_count == 4 * 6 * 2  # four raters' batches of 6 prompts x 2 criteria
