"""Every exclusion reaches the numbers: a rater or session an admin excluded, a session
that failed the golden gate, and line clickers leave the run's MOS, with the reason on
record; the raw-ratings export marks each left-out rating so that the CLI reproduces the
run; an exclusion made after a run marks it out of date.

Oracle: `python -m quality analyze` on exactly the ratings that should count, chosen here
with plain queries (not with the selector under test)."""

import csv
import io
import json
from datetime import UTC, timedelta

import numpy as np
import pandas as pd
import pytest
from django.contrib.auth.models import Group
from rest_framework.test import APIClient

from annotation.models import Assignment, Participation, Rating
from annotation.models.session import pseudonym_for
from annotation.roles import RESEARCHERS_GROUP
from annotation.services.admin_actions import (
    assignment_exclude,
    assignment_reopen,
    participation_exclude,
)
from annotation.services.studies import study_build_sessions
from annotation.services.withdrawal import participation_withdraw
from quality.cli import main as quality_cli
from quality.models import AnalysisRun
from quality.services import (
    analyse_running_studies,
    analysis_run_execute,
    analysis_run_request,
    analysis_run_staleness,
)
from tests.factories import RaterFactory, StimulusFactory, UserFactory, make_study
from tests.quality.rated import finished_session, run_now

pytestmark = pytest.mark.django_db

RATERS = 6


@pytest.fixture
def study():
    """Two sessions of six videos; six raters each finish both, scoring a known truth plus
    their own noise. Rater 0's second session failed the golden gate."""
    study = make_study(session_size=6, golden_per_session=0, state="running")
    videos = StimulusFactory.create_batch(12, study=study)
    sessions = study_build_sessions(study=study)
    rng = np.random.default_rng(3)
    truth = rng.uniform(10, 90, size=(12, 3))
    by_pk = {v.pk: i for i, v in enumerate(videos)}
    for r in range(RATERS):
        rater = None
        for s, session in enumerate(sessions):
            mine = [v for v in videos if session.items.filter(item__members__stimulus=v).exists()]
            failed = r == 0 and s == 1
            assignment = finished_session(
                rater=rater,
                session=session,
                videos=mine,
                score=lambda v, d, mine=mine: round(
                    float(np.clip(truth[by_pk[mine[v].pk], d] + rng.normal(0, 9), 0, 100)), 1
                ),
                golden_agreement_plcc=0.31 if failed else 0.93,
                eligible_for_next=not failed,
            )
            rater = assignment.rater
            Participation.objects.get_or_create(rater=rater, study=study)
    return study


@pytest.fixture
def admin():
    return UserFactory(is_staff=True, username="dr-admin")


def cli_mos(ratings, tmp_path) -> pd.DataFrame:
    """The CLI's MOS over exactly these Rating rows."""
    rows = ratings.values_list(
        "answer__assignment__rater_id",
        "stimulus_id",
        "dimension__key",
        "score",
        "answer__assignment__session__index",
    )
    frame = pd.DataFrame(
        [(pseudonym_for(r), v, d, s, i) for r, v, d, s, i in rows],
        columns=["rater_id", "video_id", "dimension", "score", "session_id"],
    )
    path = tmp_path / "counted.csv"
    frame.to_csv(path, index=False)
    assert quality_cli(["analyze", str(path), "--out", str(tmp_path / "cli")]) == 0
    return pd.read_csv(tmp_path / "cli" / "mos.csv")


def assert_same_mos(run: AnalysisRun, expected: pd.DataFrame) -> None:
    stored = pd.DataFrame(run.mos).astype({"video_id": int})
    merged = expected.merge(stored, on=["video_id", "dimension"], suffixes=("_cli", "_run"))
    assert len(merged) == len(expected) == len(stored)
    for column in ("mos", "mos_raw", "std", "n"):
        np.testing.assert_allclose(merged[f"{column}_cli"], merged[f"{column}_run"], atol=1e-9)


def raters_csv(study) -> dict[str, dict]:
    """The raters.csv export as an admin downloads it, by rater id."""
    client = APIClient()
    client.force_authenticate(UserFactory(is_staff=True))
    body = b"".join(
        client.get(f"/api/studies/{study.slug}/exports/raters.csv").streaming_content
    ).decode()
    return {row["rater_id"]: row for row in csv.DictReader(io.StringIO(body))}


def rater_of(study, index: int):
    return Participation.objects.filter(study=study).order_by("rater_id")[index]


def test_an_excluded_rater_leaves_every_number_with_the_admins_reason(study, admin, tmp_path):
    # given: rater 2 excluded by an admin
    participation = rater_of(study, 2)
    participation_exclude(participation=participation, reason="copied answers", by=admin)
    # when
    run = run_now(study)
    # then: the MOS is the CLI's on everyone else's ratings (rater 0's failed session too)
    counted = Rating.objects.exclude(answer__assignment__rater_id=participation.rater_id).exclude(
        answer__assignment__eligible_for_next=False
    )
    assert_same_mos(run, cli_mos(counted, tmp_path))
    (by_admin,) = [e for e in run.exclusions if e["rule"] == "admin_excluded_rater"]
    assert by_admin == {
        "rule": "admin_excluded_rater",
        "rater_id": pseudonym_for(participation.rater_id),
        "session": None,
        "reason": "copied answers",
        "figures": {},
        "decided_by": "dr-admin",
        "decided_at": by_admin["decided_at"],
        "ratings": 12 * 3,
    }
    assert run.summary["excluded_ratings"]["admin_excluded_rater"] == 36
    assert run.summary["counts"]["ratings"] == Rating.objects.count() - 36 - 6 * 3


def test_a_rater_who_withdrew_leaves_every_number_under_their_own_rule(study, tmp_path):
    # given: a run, then rater 3 withdraws
    before = run_now(study)
    participation = rater_of(study, 3)
    participation_withdraw(participation=participation, data={"withdraw": True})
    (reason,) = analysis_run_staleness(run=before)
    assert reason.startswith("exclusions changed since this run")
    # when
    run = run_now(study)
    # then: the MOS is the CLI's on everyone else's ratings
    counted = Rating.objects.exclude(answer__assignment__rater_id=participation.rater_id).exclude(
        answer__assignment__eligible_for_next=False
    )
    assert_same_mos(run, cli_mos(counted, tmp_path))
    (withdrew,) = [e for e in run.exclusions if e["rule"] == "rater_withdrew"]
    participation.refresh_from_db()
    assert withdrew == {
        "rule": "rater_withdrew",
        "rater_id": pseudonym_for(participation.rater_id),
        "session": None,
        "reason": "the rater withdrew from the study",
        "figures": {},
        "decided_by": None,
        "decided_at": participation.withdrawn_at.isoformat(),
        "ratings": 12 * 3,
    }
    assert run.summary["excluded_ratings"]["rater_withdrew"] == 36
    assert run.summary["excluded_ratings"]["admin_excluded_rater"] == 0
    # and raters.csv tells a withdrawal from an admin's exclusion
    rows = raters_csv(study)
    row = rows[pseudonym_for(participation.rater_id)]
    assert (row["withdrew"], row["excluded_by_admin"], row["latest_run_rules"]) == (
        "True",
        "False",
        "rater_withdrew",
    )
    assert {r["withdrew"] for k, r in rows.items() if k != row["rater_id"]} == {"False"}


def test_an_excluded_session_leaves_the_numbers_and_the_others_stay(study, admin, tmp_path):
    # given: rater 3's first session excluded
    participation = rater_of(study, 3)
    session = Assignment.objects.get(rater_id=participation.rater_id, session__index=1)
    assignment_exclude(assignment=session, reason="watched nothing", by=admin)
    # when
    run = run_now(study)
    # then
    counted = Rating.objects.exclude(answer__assignment=session).exclude(
        answer__assignment__eligible_for_next=False
    )
    assert_same_mos(run, cli_mos(counted, tmp_path))
    (by_admin,) = [e for e in run.exclusions if e["rule"] == "admin_excluded_session"]
    assert (by_admin["rater_id"], by_admin["session"], by_admin["reason"]) == (
        pseudonym_for(participation.rater_id),
        1,
        "watched nothing",
    )
    assert (by_admin["decided_by"], by_admin["ratings"]) == ("dr-admin", 6 * 3)
    assert Participation.objects.get(pk=participation.pk).is_excluded is False


@pytest.mark.parametrize("keep", [False, True])
def test_a_session_that_failed_the_golden_gate_is_dropped_unless_the_study_keeps_it(
    study, tmp_path, keep
):
    # given
    study.keep_failed_gate_sessions = keep
    study.save()
    # when
    run = run_now(study)
    # then
    counted = Rating.objects.all()
    if not keep:
        counted = counted.exclude(answer__assignment__eligible_for_next=False)
    assert_same_mos(run, cli_mos(counted, tmp_path))
    gate = [e for e in run.exclusions if e["rule"] == "golden_gate_failed"]
    if keep:
        assert gate == [] and run.summary["selection"]["keep_failed_gate_sessions"] is True
    else:
        (failed,) = gate
        assert (failed["session"], failed["ratings"], failed["decided_by"]) == (2, 18, None)
        assert failed["figures"] == {"golden_agreement": 0.31, "gate": "golden PLCC above 0.7"}
        assert failed["reason"] == "golden agreement 0.310; the gate asks for golden PLCC above 0.7"


def test_the_export_marks_each_left_out_rating_and_the_cli_reproduces_the_run(
    study, admin, tmp_path, capsys
):
    # given: every kind of exclusion, line clicker included
    participation_exclude(participation=rater_of(study, 2), reason="bot", by=admin)
    third = Assignment.objects.get(rater_id=rater_of(study, 3).rater_id, session__index=2)
    assignment_exclude(assignment=third, reason="asleep", by=admin)
    clicker = rater_of(study, 4).rater_id
    Rating.objects.filter(answer__assignment__rater_id=clicker).update(score=50.0)
    run = run_now(study)
    client = APIClient()
    user = UserFactory()
    user.groups.add(Group.objects.get_or_create(name=RESEARCHERS_GROUP)[0])
    client.force_authenticate(user)
    # when
    body = b"".join(
        client.get(f"/api/studies/{study.slug}/exports/ratings.csv").streaming_content
    ).decode()
    # then: one rule per left-out rating, the rest empty
    table = pd.read_csv(io.StringIO(body), keep_default_na=False)
    marks = table.groupby("excluded").size().to_dict()
    assert marks == {
        "": Rating.objects.count() - 36 - 18 - 18 - 36,
        "admin_excluded_rater": 36,
        "admin_excluded_session": 18,
        "golden_gate_failed": 18,
        "line_clicker": 36,
    }
    assert {e["rule"] for e in run.exclusions} == set(marks) - {""}
    # and the CLI on the export as it is leaves the marked rows out, gives the run's MOS
    # and says how many it left out
    path = tmp_path / "ratings.csv"
    path.write_text(body)
    assert quality_cli(["analyze", str(path), "--out", str(tmp_path / "out")]) == 0
    assert_same_mos(run, pd.read_csv(tmp_path / "out" / "mos.csv"))
    assert f"{36 + 18 + 18 + 36} row(s) marked excluded in the file left out" in (
        capsys.readouterr().out
    )
    # and provenance lists them with their counts
    provenance = json.loads(
        client.get(f"/api/studies/{study.slug}/exports/provenance.json").content
    )
    assert provenance["analysis_run"]["exclusions"] == run.exclusions
    assert provenance["analysis_run"]["excluded_ratings"]["line_clicker"] == 36


def test_raters_csv_shows_the_live_flag_beside_the_runs_decision(study, admin):
    # given: a live flag on rater 1 that the run does not confirm, rater 2 excluded, and
    # a rater who failed the qualification test (no session, no rating)
    flagged = rater_of(study, 1).rater_id
    Assignment.objects.filter(rater_id=flagged).update(flagged_line_clicker=True)
    participation_exclude(participation=rater_of(study, 2), reason="bot", by=admin)
    failed = Participation.objects.create(
        rater=RaterFactory(),
        study=study,
        qualification_state=Participation.Qualification.FAILED,
    )
    run = run_now(study)
    # when
    rows = raters_csv(study)
    # then
    live = rows[pseudonym_for(flagged)]
    assert (live["live_guard_line_click_flag"], live["latest_run_decision"]) == ("True", "kept")
    gone = rows[pseudonym_for(rater_of(study, 2).rater_id)]
    assert (gone["latest_run_decision"], gone["latest_run_rules"]) == (
        "excluded",
        "admin_excluded_rater",
    )
    screened = rows[pseudonym_for(failed.rater_id)]
    assert (screened["qualification_state"], screened["latest_run_decision"]) == (
        "failed",
        "no_ratings",
    )
    gated = rows[pseudonym_for(rater_of(study, 0).rater_id)]
    assert (gated["latest_run_decision"], gated["latest_run_rules"]) == (
        "sessions_excluded",
        "golden_gate_failed",
    )
    assert {row["latest_run_id"] for row in rows.values()} == {str(run.pk)}


def test_an_exclusion_after_a_run_marks_it_out_of_date_and_a_reopen_reverses_it(
    study, admin, tmp_path
):
    # given: a run, then an admin excludes a session
    run = run_now(study)
    assert analysis_run_staleness(run=run) == []
    session = Assignment.objects.get(rater_id=rater_of(study, 5).rater_id, session__index=1)
    assignment_exclude(assignment=session, reason="distracted", by=admin)
    # then: the run is out of date, and the periodic job queues a new one
    (reason,) = analysis_run_staleness(run=run)
    assert reason.startswith("exclusions changed since this run")
    assert len(analyse_running_studies()) == 1
    AnalysisRun.objects.filter(status="queued").delete()
    newer = run_now(study)
    assert analysis_run_staleness(run=newer) == []
    # when: the admin reopens the session
    assignment_reopen(assignment=session, reason="checked: fine", by=admin)
    # then: the session is finished again, counts again, and the newer run is out of date
    assert Assignment.objects.get(pk=session.pk).state == "finished"
    assert analysis_run_staleness(run=newer) != []
    assert analysis_run_staleness(run=run) == []  # the state the first run saw
    latest = run_now(study)
    counted = Rating.objects.exclude(answer__assignment__eligible_for_next=False)
    assert_same_mos(latest, cli_mos(counted, tmp_path))
    assert [e["rule"] for e in latest.exclusions] == ["golden_gate_failed"]


def test_a_reopened_rater_counts_again(study, admin, tmp_path):
    # given: rater 2 excluded while a session was open, then reopened
    participation = rater_of(study, 2)
    open_one = Assignment.objects.get(rater_id=participation.rater_id, session__index=2)
    Assignment.objects.filter(pk=open_one.pk).update(state="active", finished_at=None)
    participation_exclude(participation=participation, reason="suspicious", by=admin)
    assert Assignment.objects.get(pk=open_one.pk).state == "excluded"
    # when
    assignment_reopen(assignment=open_one, reason="false alarm", by=admin)
    run = run_now(study)
    # then
    participation.refresh_from_db()
    assert (participation.is_excluded, participation.excluded_by) == (False, None)
    counted = Rating.objects.exclude(answer__assignment__eligible_for_next=False)
    assert_same_mos(run, cli_mos(counted, tmp_path))
    assert all(e["rule"] == "golden_gate_failed" for e in run.exclusions)


def test_a_study_whose_ratings_are_all_excluded_fails_with_the_reason(study, admin):
    for participation in Participation.objects.filter(study=study):
        participation_exclude(participation=participation, reason="test", by=admin)
    run = analysis_run_request(study=study)
    analysis_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "failed"
    assert run.error == (
        f"every one of the study's {Rating.objects.count()} ratings is excluded "
        "(admin_excluded_rater)"
    )


def test_the_results_page_says_why_the_last_run_failed(study, admin, client):
    # given: a finished run, then one that failed (every rater excluded since)
    done = run_now(study)
    for participation in Participation.objects.filter(study=study):
        participation_exclude(participation=participation, reason="test", by=admin)
    failed = analysis_run_request(study=study)
    analysis_run_execute(run_id=failed.pk)
    client.force_login(admin)
    # when
    page = client.get(f"/studies/{study.slug}/results/").content.decode()
    # then: the failure and its reason, above the last finished run's results
    warning = page[
        page.index('id="failed-run"') : page.index("</p>", page.index('id="failed-run"'))
    ]
    assert f"Analysis run {failed.pk} of " in warning
    assert "failed: every one of the study&#x27;s" in warning
    assert "The results below are of the last run that finished." in warning
    assert f"Analysis run {done.pk} of " in page
    # when: the failed run is older than the last finished one
    AnalysisRun.objects.filter(pk=failed.pk).update(
        created_at=done.created_at - timedelta(minutes=1)
    )
    page = client.get(f"/studies/{study.slug}/results/").content.decode()
    # then: the failure is history
    assert 'id="failed-run"' not in page and f"Analysis run {done.pk} of " in page


def test_the_results_page_counts_the_exclusions_and_says_when_the_run_is_out_of_date(
    study, admin, client
):
    # given: a run, then a rater excluded after it
    run_now(study)
    participation_exclude(participation=rater_of(study, 2), reason="bot", by=admin)
    client.force_login(admin)
    # when
    page = client.get(f"/studies/{study.slug}/results/").content.decode()
    # then: the gate's session is counted, and the page says the run is out of date
    counts = page[
        page.index('id="exclusion-counts"') : page.index(
            "</table>", page.index('id="exclusion-counts"')
        )
    ]
    gate = "<th>session failed the golden gate</th><td>1</td><td>1</td><td>18</td>"
    assert f'<tr data-rule="golden_gate_failed">{gate}</tr>' in counts
    admin_rule = "<th>rater excluded by an admin</th><td>0</td><td>0</td><td>0</td>"
    assert f'<tr data-rule="admin_excluded_rater">{admin_rule}</tr>' in counts
    assert 'id="stale"' in page and "exclusions changed since this run" in page
    # when: a new run
    latest = run_now(study)
    page = client.get(f"/studies/{study.slug}/results/").content.decode()
    # then
    assert 'id="stale"' not in page
    # its moment written as on every staff page (config.formats): 2026-11-27 22:26
    when = latest.finished_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M")
    assert f"Analysis run {latest.pk} of {when}," in page
    assert "<td>bot</td><td>dr-admin</td><td>36</td>" in page
