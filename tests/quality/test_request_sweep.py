"""Analysis runs and export jobs asked for twice, and those whose message was lost or
came twice: one row per request that still waits, a lost send made good, a run computed
once however often its message comes, a run whose worker died taken back, one past its
time limit ended."""

from datetime import timedelta

import pytest
from django.utils import timezone

from config.run_liveness import db_session
from quality import services
from quality.models import AnalysisRun, ExportJob
from tests.annotation.test_questionnaire_design import run_at_once
from tests.factories import make_study
from tests.media_pipeline.test_job_recovery import ENDED_SESSION
from tests.quality.test_analysis_runs import rated_study, request_run, researcher


def post_run(client, study, capture):
    """POST a run request; the commit callbacks (the task's send) are counted, not run."""
    with capture(execute=False) as callbacks:
        response = client.post(f"/api/studies/{study.slug}/analysis-runs/")
    assert response.status_code == 202, response.content
    return response.json()["id"], len(callbacks)


@pytest.mark.django_db
def test_a_run_asked_for_again_while_it_waits_is_the_same_run(
    django_capture_on_commit_callbacks,
):
    # given
    study = make_study()
    client = researcher()
    # when: a double click
    first, sends_first = post_run(client, study, django_capture_on_commit_callbacks)
    second, sends_second = post_run(client, study, django_capture_on_commit_callbacks)
    # then: one run, one task sent
    assert second == first
    assert (sends_first, sends_second) == (1, 0)
    assert AnalysisRun.objects.filter(study=study).count() == 1


@pytest.mark.django_db
def test_a_run_asked_for_with_other_settings_or_after_the_last_started_is_a_new_run(
    django_capture_on_commit_callbacks,
):
    # given: a waiting run
    study = make_study()
    client = researcher()
    first, _ = post_run(client, study, django_capture_on_commit_callbacks)
    # when the settings change, the next request is another analysis
    study.line_click_share = 0.5
    study.save(update_fields=["line_click_share"])
    changed, sends = post_run(client, study, django_capture_on_commit_callbacks)
    assert changed != first and sends == 1
    # and once a run has started, answers may have come since: another run
    AnalysisRun.objects.filter(pk=changed).update(status=AnalysisRun.Status.RUNNING)
    after_start, sends = post_run(client, study, django_capture_on_commit_callbacks)
    assert after_start not in (first, changed) and sends == 1
    assert AnalysisRun.objects.filter(study=study).count() == 3


@pytest.mark.django_db(transaction=True)
def test_two_requests_at_once_queue_one_run(monkeypatch):
    # given: sends recorded, not run (in-process, a run would finish before the next ask)
    sends: list[tuple] = []
    monkeypatch.setattr(services, "send_on_commit", lambda task, *args: sends.append(args))
    study = make_study()
    # when
    ids = [run.pk for run in run_at_once(*[lambda: services.analysis_run_request(study=study)] * 4)]
    # then
    assert len(ids) == 4 and len(set(ids)) == 1, ids
    assert AnalysisRun.objects.filter(study=study).count() == 1
    assert sends == [(ids[0],)]


@pytest.mark.django_db
def test_an_export_asked_for_again_while_it_waits_is_the_same_job(
    django_capture_on_commit_callbacks,
):
    # given: a study with a finished run
    study, _ = rated_study(raters=4, stimuli=6)
    client = researcher()
    run = request_run(client, study, django_capture_on_commit_callbacks)

    def post(name):
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            response = client.post(
                f"/api/studies/{study.slug}/export-jobs/", {"name": name}, format="json"
            )
        assert response.status_code == 202, response.content
        return response.json()["id"], len(callbacks)

    # when
    first, sends_first = post("mos.csv")
    again, sends_again = post("mos.csv")
    other, sends_other = post("ratings.csv")
    # then: the same export is one job; another export is its own
    assert again == first and other != first
    assert (sends_first, sends_again, sends_other) == (1, 0, 1)
    assert sorted(ExportJob.objects.filter(study=study).values_list("name", "run")) == [
        ("mos.csv", run.pk),
        ("ratings.csv", run.pk),
    ]


@pytest.fixture
def sent(monkeypatch):
    """The (task name, row id) pairs the sweep sends, instead of sending them."""
    calls: list[tuple[str, int]] = []

    def fake_send(task, *args):
        calls.append((task.name.rsplit(".", 1)[-1], *args))
        return True

    monkeypatch.setattr(services, "send_now", fake_send)
    return calls


def aged(model, status, *, created_s=0, started_s=None, **fields):
    """A row of `model` in `status`, asked for `created_s` and started `started_s`
    seconds ago."""
    now = timezone.now()
    row = model.objects.create(status=status, **fields)
    started = None if started_s is None else now - timedelta(seconds=started_s)
    model.objects.filter(pk=row.pk).update(
        created_at=now - timedelta(seconds=created_s), started_at=started
    )
    return row


@pytest.mark.django_db
def test_the_sweep_sends_lost_requests_again_and_ends_abandoned_ones(sent):
    # given: runs and exports of every age and state
    study = make_study()
    lost_run = aged(AnalysisRun, "queued", created_s=400, study=study)
    fresh_run = aged(AnalysisRun, "queued", created_s=30, study=study)
    working_run = aged(AnalysisRun, "running", created_s=900, started_s=600, study=study)
    dead_run = aged(AnalysisRun, "running", created_s=2000, started_s=800, study=study)
    done_run = aged(AnalysisRun, "done", created_s=5000, started_s=4000, study=study)
    lost_job = aged(ExportJob, "queued", created_s=301, study=study, name="ratings.csv")
    working_job = aged(
        ExportJob, "running", created_s=2000, started_s=1800, study=study, name="ratings.csv"
    )
    dead_job = aged(
        ExportJob, "running", created_s=3000, started_s=2000, study=study, name="ratings.csv"
    )
    # when
    swept = services.sweep_stale_requests(older_than_s=300)
    # then: the lost ones are sent again, the abandoned ones failed with the reason
    assert sorted(sent) == sorted([("run_analysis", lost_run.pk), ("build_export", lost_job.pk)])
    assert swept == {
        "analysis_runs_sent": [lost_run.pk],
        "analysis_runs_failed": [dead_run.pk],
        "export_jobs_sent": [lost_job.pk],
        "export_jobs_failed": [dead_job.pk],
    }
    for row, minutes in ((dead_run, 11), (dead_job, 31)):
        row.refresh_from_db()
        assert row.status == "failed"
        assert f"did not finish within its time limit of {minutes} min" in row.error
        assert row.finished_at is not None
    for row, status in (
        (fresh_run, "queued"),
        (working_run, "running"),
        (done_run, "done"),
        (working_job, "running"),
    ):
        row.refresh_from_db()
        assert row.status == status


@pytest.mark.django_db
def test_a_lost_run_sent_again_is_computed_once(django_capture_on_commit_callbacks, sent):
    # given: a rated study whose run request was lost with the broker
    study, _ = rated_study(raters=4, stimuli=6)
    with django_capture_on_commit_callbacks(execute=False):
        run = services.analysis_run_request(study=study)
    AnalysisRun.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(seconds=600))
    # when: the sweep sends it again, and the message arrives twice
    services.sweep_stale_requests()
    assert sent == [("run_analysis", run.pk)]
    services.analysis_run_execute(run_id=run.pk)
    run.refresh_from_db()
    finished_at = run.finished_at
    services.analysis_run_execute(run_id=run.pk)
    # then: computed, and the second delivery left it alone
    run.refresh_from_db()
    assert run.status == "done", run.error
    assert run.finished_at == finished_at
    assert run.ratings_count == 4 * 6 * 3


@pytest.mark.django_db
@pytest.mark.parametrize("taken", [1, 3], ids=["once", "three-times"])
def test_a_run_whose_worker_was_lost_starts_over_when_its_message_comes_back(taken):
    # given: a run left running by a worker that died (its database session ended),
    # after `taken` takes, each by a worker that died (out of memory, say)
    study, _ = rated_study(raters=4, stimuli=6)
    run = aged(
        AnalysisRun,
        "running",
        started_s=30,
        study=study,
        attempts=taken,
        runner_session=ENDED_SESSION,
    )
    # when: the message comes back (acks_late, reject_on_worker_lost)
    services.analysis_run_execute(run_id=run.pk)
    # then: computed by this worker; or, after three, failed with the reason, not tried
    # a fourth time
    run.refresh_from_db()
    if taken < services.MAX_ATTEMPTS:
        assert run.status == "done", run.error
        assert (run.attempts, run.runner_session) == (taken + 1, db_session())
        assert run.ratings_count == 4 * 6 * 3
    else:
        assert (run.status, run.attempts) == ("failed", 3)
        assert "its worker stopped before it finished, 3 times" in run.error


@pytest.mark.django_db
@pytest.mark.parametrize("model", [AnalysisRun, ExportJob])
def test_a_message_delivered_while_a_live_worker_runs_the_row_is_not_run_twice(model):
    # given: a row a live worker took 30 s ago (this test's own session stands for it)
    study, _ = rated_study(raters=4, stimuli=6)
    fields = {"name": "ratings.csv"} if model is ExportJob else {}
    row = aged(
        model,
        "running",
        started_s=30,
        study=study,
        attempts=1,
        runner_session=db_session(),
        **fields,
    )
    before = model.objects.values("status", "started_at", "attempts").get(pk=row.pk)
    execute = services.export_job_execute if model is ExportJob else services.analysis_run_execute
    # when: a second copy of its message arrives (the sweep resent it during a backlog)
    execute(**{("job_id" if model is ExportJob else "run_id"): row.pk})
    # then: left to the worker that has it
    assert model.objects.values("status", "started_at", "attempts").get(pk=row.pk) == before


@pytest.mark.django_db
def test_the_sweep_takes_back_rows_whose_worker_died_and_gives_up_after_three(sent):
    # given: running rows within their time limits: one held by a live worker, two whose
    # workers' sessions ended, one of them already taken three times
    study = make_study()
    alive = aged(AnalysisRun, "running", started_s=60, study=study, runner_session=db_session())
    died = aged(
        AnalysisRun, "running", started_s=60, study=study, attempts=1, runner_session=ENDED_SESSION
    )
    died_often = aged(
        ExportJob,
        "running",
        started_s=60,
        study=study,
        name="mos.csv",
        attempts=3,
        runner_session=ENDED_SESSION,
    )
    # when
    swept = services.sweep_stale_requests(older_than_s=300)
    # then: the one whose worker died once is queued and sent at once; the other failed
    assert sent == [("run_analysis", died.pk)]
    assert swept == {
        "analysis_runs_sent": [died.pk],
        "analysis_runs_failed": [],
        "export_jobs_sent": [],
        "export_jobs_failed": [died_often.pk],
    }
    statuses = [type(row).objects.get(pk=row.pk).status for row in (alive, died, died_often)]
    assert statuses == ["running", "queued", "failed"]
    assert "3 times" in ExportJob.objects.get(pk=died_often.pk).error
