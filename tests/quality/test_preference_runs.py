"""Analysis runs of a preference study: the scale, pairs and raters it stores, the
exclusions it applies, and exports that `python -m quality compare` reproduces."""

import csv
import io
import json

import numpy as np
import pandas as pd
import pytest
from django.contrib.auth.models import Group
from rest_framework.test import APIClient

from annotation.designs.preference import settings_of
from annotation.models import Participation, Session
from annotation.roles import RESEARCHERS_GROUP
from annotation.services.admin_actions import participation_exclude
from annotation.services.studies import study_build_sessions
from quality.cli import main as quality_cli
from quality.selectors import judgments_frame
from tests.annotation.design_fixtures import CONDITIONS
from tests.factories import StimulusFactory, UserFactory, make_study
from tests.quality.rated import batches_of, judged_session, received_later, run_now

pytestmark = pytest.mark.django_db

STRENGTH = {"model-a": 2.0, "model-b": 1.0, "model-c": 0.0}


@pytest.fixture
def study():
    """Three conditions on eight contents, one session; seven raters judge with
    Bradley-Terry preferences of known strengths (and some ties), the last always left."""
    study = make_study(design="preference", golden_per_session=0, state="running")
    for content in range(8):
        for condition in CONDITIONS:
            StimulusFactory(study=study, condition=condition, content=f"c{content}")
    chosen = settings_of(study)
    chosen.judgments_per_pair = 8
    chosen.bootstrap = 200
    chosen.save()
    study_build_sessions(study=study)
    (session,) = Session.objects.filter(study=study)
    rng = np.random.default_rng(4)

    def bradley_terry(left, right):
        if rng.random() < 0.2:
            return "equal"
        a, b = STRENGTH[left.condition], STRENGTH[right.condition]
        return "left" if rng.random() < 1 / (1 + np.exp(b - a)) else "right"

    for _ in range(6):
        judged_session(rater=None, session=session, choose=bradley_terry)
    judged_session(rater=None, session=session, choose=lambda left, right: "left")
    return study


def researcher():
    user = UserFactory()
    user.groups.add(Group.objects.get_or_create(name=RESEARCHERS_GROUP)[0])
    client = APIClient()
    client.force_authenticate(user)
    return client


def body(response) -> str:
    return b"".join(response.streaming_content).decode()


def test_a_run_stores_the_scale_the_pairs_and_the_raters(study):
    # when
    run = run_now(study)
    # then: the conditions in their true order, with intervals and ranks
    scale = pd.DataFrame(run.summary["scale"])
    assert list(scale.sort_values("rank")["condition"]) == ["model-a", "model-b", "model-c"]
    assert (scale["ci95_low"] <= scale["score"]).all() and (
        scale["score"] <= scale["ci95_high"]
    ).all()
    assert abs(scale["score"].sum()) < 1e-9  # centred
    pairs = pd.DataFrame(run.summary["pairs"])
    assert len(pairs) == 3 and set(pairs["n"]) == {6 * 8}  # the biased rater screened out
    assert run.ratings_count == 7 * 3 * 8
    (biased,) = [e for e in run.exclusions if e["rule"] == "position_bias"]
    assert biased["ratings"] == 24 and biased["figures"]["share"] == 1.0
    assert biased["reason"].startswith("chose the left side in 100% of 24 decisive answers")


def test_admin_exclusions_reach_the_preference_scale(study):
    # given: one of the honest raters excluded
    admin = UserFactory(is_staff=True)
    excluded = Participation.objects.filter(study=study).order_by("rater_id").first()
    participation_exclude(participation=excluded, reason="distracted", by=admin)
    # when
    run = run_now(study)
    # then
    rules = sorted(e["rule"] for e in run.exclusions)
    assert rules == ["admin_excluded_rater", "position_bias"]
    assert run.summary["counts"]["judgments"] == 6 * 24


def test_the_judgments_export_reproduces_the_run_through_the_cli(study, tmp_path):
    # given
    run = run_now(study)
    client = researcher()
    # when: the judgments export
    exported = body(client.get(f"/api/studies/{study.slug}/exports/judgments.csv"))
    table = pd.read_csv(io.StringIO(exported), keep_default_na=False)
    assert list(table.columns) == [
        "rater_id", "question", "content_id", "left", "right", "choice", "session_id", "excluded",
    ]  # fmt: skip
    assert set(table["excluded"]) == {"", "position_bias"}
    kept = tmp_path / "judgments.csv"  # as exported: the CLI leaves the marked rows out
    kept.write_text(exported)
    arguments = ["compare", str(kept), "--out", str(tmp_path / "out"), "--bootstrap", "200"]
    assert quality_cli([*arguments, "--no-screen"]) == 0
    # then: the CLI's scale is the run's
    cli = pd.read_csv(tmp_path / "out" / "scale.csv")
    stored = pd.DataFrame(run.summary["scale"])
    merged = cli.merge(stored, on=["question", "condition"], suffixes=("_cli", "_run"))
    assert len(merged) == 3
    for column in ("score", "ci95_low", "ci95_high", "rank", "n"):
        np.testing.assert_allclose(merged[f"{column}_cli"], merged[f"{column}_run"], atol=1e-9)
    # and the run's scale and pairs exports are its stored tables
    scale = pd.read_csv(
        io.StringIO(body(client.get(f"/api/studies/{study.slug}/exports/scale.csv")))
    )
    assert list(scale["condition"]) == list(stored["condition"])
    provenance = json.loads(
        client.get(f"/api/studies/{study.slug}/exports/provenance.json").content
    )
    assert provenance["analysis_run"]["exclusions"] == run.exclusions


@pytest.mark.parametrize("name", ["scale", "win-rate", "position-bias"])
def test_the_preference_figures_render(study, name):
    run = run_now(study)
    response = researcher().get(f"/api/analysis-runs/{run.pk}/figures/{name}.png")
    assert response.status_code == 200 and response.content[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_results_page_shows_the_scale(study, client):
    run_now(study)
    client.force_login(UserFactory(is_staff=True))
    page = client.get(f"/studies/{study.slug}/results/").content.decode()
    assert 'id="scale"' in page and "model-a" in page and 'data-rule="position_bias"' in page
    assert "judgments.csv" in page and "mos.csv" not in page


def test_judgments_received_after_a_run_started_are_neither_in_it_nor_in_its_export(study):
    # given: a batch whose judgments arrived after the run started
    later = received_later(study)
    # when
    run = run_now(study)
    exported = body(researcher().get(f"/api/studies/{study.slug}/exports/judgments.csv"))
    # then: the run read the others, and its export holds what it read
    table = pd.read_csv(io.StringIO(exported), keep_default_na=False)
    assert later not in batches_of(run, table)
    every = judgments_frame(study=study)
    theirs = (every["rater_id"] == later[0]) & (every["session_id"] == later[1])
    assert theirs.any() and run.ratings_count == len(every) - theirs.sum()


def test_an_undefined_win_rate_is_an_empty_cell_in_the_pairs_export():
    # given: one more study, whose b-c pair is only ever judged a tie (its win rate and
    # interval are undefined)
    ties = make_study(design="preference", golden_per_session=0, state="running")
    for content in range(4):
        for condition in CONDITIONS:
            StimulusFactory(study=ties, condition=condition, content=f"c{content}")
    study_build_sessions(study=ties)
    (session,) = Session.objects.filter(study=ties)

    def choose(left, right):
        if {left.condition, right.condition} == {"model-b", "model-c"}:
            return "equal"
        return "left" if STRENGTH[left.condition] > STRENGTH[right.condition] else "right"

    for _ in range(3):
        judged_session(rater=None, session=session, choose=choose)
    run_now(ties)
    # when
    exported = body(researcher().get(f"/api/studies/{ties.slug}/exports/pairs.csv"))
    # then: empty cells, as the CLI writes them, not "nan" (which R and spreadsheets read
    # as text)
    assert "nan" not in exported.lower()
    rows = list(csv.DictReader(io.StringIO(exported, newline="")))
    (tied,) = [
        row for row in rows if {row["condition_a"], row["condition_b"]} == {"model-b", "model-c"}
    ]
    assert tied["wins_a"] == tied["wins_b"] == "0" and int(tied["ties"]) > 0
    assert tied["win_rate_a"] == tied["ci95_low"] == tied["ci95_high"] == ""
