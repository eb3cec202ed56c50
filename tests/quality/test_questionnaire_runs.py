"""Analysis runs of a questionnaire study: the labels, alpha and ties of the counted
answers, the answers export that `python -m quality labels` reproduces, a batch rejected
in its audit left out and on record, the results page and the exports."""

import io
import json

import pandas as pd
import pytest
from django.test import Client

from annotation.designs.questionnaire import Labels
from annotation.designs.questionnaire_study import applicable, questions_of
from annotation.models import Assignment, Dimension, Stimulus
from annotation.models.session import pseudonym_for
from annotation.services.admin_actions import assignment_exclude
from annotation.services.audits import audit_decide, audit_open
from frontend.demo.simulate import simulate_raters
from quality.cli import main as quality_cli
from quality.designs.questionnaire import answers_frame
from quality.designs.questionnaire_page import panel_title
from quality.services import (
    analysis_run_execute,
    analysis_run_request,
    analysis_run_staleness,
)
from quality.stats.labels import LABEL_COLUMNS
from tests.annotation.design_fixtures import EXPERT_ANSWERS, tiny_questionnaire_study
from tests.factories import UserFactory
from tests.quality import rated

pytestmark = pytest.mark.django_db

# Per regular video (its index), each rater's (overall, object_text, light). Video 3 is
# asked only the score and the tags. With the first three raters: video 0 is labelled
# 3 on object_text, video 1 is a tie (3, 2, 1), video 2 is invalid (2 of 3 "invalid").
ANSWERS = {
    "a": {0: (7, 3, ["soft_light"]), 1: (4, 3, ["hard_light"]),
          2: (6, "invalid", ["diffused_light"]), 3: (2, None, [])},
    "b": {0: (8, 3, ["soft_light"]), 1: (5, 2, ["hard_light"]),
          2: (6, "invalid", ["soft_light"]), 3: (3, None, [])},
    "c": {0: (9, 3, ["soft_light", "hard_light"]), 1: (6, 1, []),
          2: (6, 2, ["diffused_light"]), 3: (4, None, ["soft_light"])},
    # the careless rater: every regular video wrong (the golden ones right)
    "careless": {i: (0, 1, ["hard_light", "diffused_light"]) for i in range(4)},
}  # fmt: skip
COMMENT = "too dark to judge the light"


def simulated(tiny) -> dict[str, Assignment]:
    """The four raters' finished batches (one session holds every video), keyed by
    profile; rater a comments on video 0."""
    study = tiny.study

    def values(item, layout, profile, rng):
        video = layout[0]
        asked = [q.dimension.key for q in applicable(video, questions_of(study.pk))]
        if video.role in (Stimulus.Role.GOLDEN, Stimulus.Role.QUALIFICATION):
            return Labels({key: EXPERT_ANSWERS[key] for key in asked if key in EXPERT_ANSWERS})
        index = int(video.prompt.rsplit(" ", 1)[1])
        overall, level, light = ANSWERS[profile["name"]][index]
        answers = {"overall": overall, "light": light}
        if "object_text" in asked:
            answers["object_text"] = level
        if profile["name"] == "a" and index == 0:
            answers["comment"] = COMMENT
        return Labels(answers)

    names = list(ANSWERS)
    raters = simulate_raters(
        study=study, profiles=[{"name": n} for n in names], values=values, seed=2
    )
    return {
        name: Assignment.objects.get(rater=rater, session__study=study)
        for name, rater in zip(names, raters, strict=True)
    }


@pytest.fixture
def tiny():
    return tiny_questionnaire_study(raters_per_video=3)


@pytest.fixture
def audited(tiny):
    """The careless batch rejected, a's accepted, b's being audited, c's not audited."""
    batches = simulated(tiny)
    expert = UserFactory(username="expert", is_staff=True)
    for name, wrong in (("careless", True), ("a", False)):
        audit = audit_open(assignment=batches[name], by=expert)
        findings = {str(item): {"wrong": wrong, "note": ""} for item in audit.sample}
        reason = "answers at random" if wrong else ""
        audit_decide(audit=audit, findings=findings, reason=reason, by=expert)
    audit_open(assignment=batches["b"], by=expert)
    return batches


def run_now(study, **settings):
    if settings:
        from annotation.designs.questionnaire_study import settings_of

        chosen = settings_of(study)
        for name, value in settings.items():
            setattr(chosen, name, value)
        chosen.save()
    return rated.run_now(study)


def staff() -> Client:
    client = Client()
    client.force_login(UserFactory(is_staff=True))
    return client


def download(client, study, name: str, run=None) -> str:
    query = f"?run={run.pk}" if run else ""
    response = client.get(f"/api/studies/{study.slug}/exports/{name}{query}")
    assert response.status_code == 200, response.content
    return b"".join(response.streaming_content).decode()


def video_ids(study) -> dict[int, str]:
    videos = Stimulus.objects.filter(study=study, role=Stimulus.Role.STIMULUS)
    return {int(v.prompt.rsplit(" ", 1)[1]): str(v.public_id) for v in videos}


def by_unit(labels: list[dict]) -> dict[tuple[str, str], dict]:
    return {(row["item_id"], row["question"]): row for row in labels}


def test_a_run_labels_the_counted_answers(tiny, audited):
    # when
    run = run_now(tiny.study)
    summary = run.summary
    videos = video_ids(tiny.study)
    labels = by_unit(summary["labels"])
    # then: three raters a unit (the careless batch is out); the rules of each kind
    assert {row["n"] for row in summary["labels"]} == {3}
    assert labels[(videos[0], "overall")]["value"] == pytest.approx(8.0)
    assert labels[(videos[0], "overall")]["std"] == pytest.approx(1.0)
    level = {i: labels[(videos[i], "object_text")] for i in range(3)}
    assert (level[0]["status"], level[0]["value"]) == ("ok", 3)
    assert (level[1]["status"], level[1]["value"]) == ("tie", None)
    assert (level[2]["status"], level[2]["value"]) == ("invalid", None)
    assert labels[(videos[0], "light")]["value"] == "soft_light"
    assert labels[(videos[3], "light")]["value"] == ""
    assert (videos[3], "object_text") not in labels  # not asked of video 3
    assert summary["questions"]["object_text"] == {
        "kind": "ordinal", "ok": 1, "invalid": 1, "tie": 1,
    }  # fmt: skip
    assert summary["ties"] == [
        {"item_id": videos[1], "prompt": "A vase of daisies, 1", "question": "object_text",
         "n": 3, "answers": ["1", "2", "3"]},
    ]  # fmt: skip
    # the answers' spread: every score step, the levels with "invalid", the tags
    spread = {entry["question"]: entry for entry in summary["distributions"]}
    assert list(spread) == ["overall", "object_text", "light"]  # the questionnaire's order
    assert [b["count"] for b in spread["object_text"]["bins"]] == [1, 2, 4, 2]
    assert spread["object_text"]["bins"][-1]["value"] == "invalid"
    assert len(spread["overall"]["bins"]) == 11 and spread["overall"]["answers"] == 12
    assert {b["value"]: b["count"] for b in spread["light"]["bins"]} == {
        "hard_light": 3, "soft_light": 5, "diffused_light": 2, "": 3,
    }  # fmt: skip
    assert set(summary["alpha"]) == {"overall", "object_text"}
    assert set(summary["tag_alpha"]["light"]) == {"hard_light", "soft_light", "diffused_light"}
    assert summary["settings"]["keep_share"] == 0.5 and summary["version"] == run.code_version
    assert run.ratings_count == 4 * (3 * 3 + 2)  # four raters; comments are no statistic


@pytest.mark.parametrize("method", ["majority", "dawid-skene"])
def test_the_answers_export_feeds_the_cli_which_finds_the_same_labels(
    tiny, audited, tmp_path, method
):
    run = run_now(tiny.study, method=method)
    client = staff()
    # when
    text = download(client, tiny.study, "answers.csv", run)
    frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    assert (frame["excluded"] != "").any()  # the rejected batch's answers
    answers = tmp_path / "answers.csv"  # as exported: the CLI leaves the marked rows out
    answers.write_text(text)
    out = tmp_path / "out"
    assert quality_cli(["labels", str(answers), "--out", str(out), "--method", method]) == 0
    # then: the same labels (and alpha) as the run's labels export
    cli = pd.read_csv(out / "labels.csv", dtype=str, keep_default_na=False)
    stored = pd.read_csv(
        io.StringIO(download(client, tiny.study, "labels.csv", run)),
        dtype=str,
        keep_default_na=False,
    )
    assert list(stored.columns) == list(LABEL_COLUMNS)
    assert len(stored) == len(run.summary["labels"]) == 4 * 3 - 1
    for column in ("item_id", "question", "kind", "n", "status"):
        assert list(cli[column]) == list(stored[column])
    for column in ("value", "std"):
        for a, b in zip(cli[column], stored[column], strict=True):
            try:
                assert float(a) == pytest.approx(float(b))
            except ValueError:
                assert a == b
    summary = json.loads((out / "summary.json").read_text())
    assert summary["alpha"] == pytest.approx(run.summary["alpha"])
    assert summary["counts"] == run.summary["counts"]


def test_a_rejected_batch_is_left_out_and_on_record(tiny, audited):
    careless = pseudonym_for(audited["careless"].rater_id)
    # when
    run = run_now(tiny.study)
    # then: the careless rater's answers counted nowhere
    assert careless not in run.summary["rater_agreement"]
    assert all(row["n"] == 3 for row in run.summary["labels"])
    (exclusion,) = run.exclusions
    assert exclusion["rule"] == "batch_rejected_in_audit"
    assert exclusion["rater_id"] == careless
    assert exclusion["reason"] == "batch rejected in its audit: answers at random"
    assert exclusion["decided_by"] == "expert"
    assert exclusion["ratings"] == 3 * 3 + 2
    assert run.summary["excluded_ratings"]["batch_rejected_in_audit"] == 11
    assert run.summary["excluded_ratings"]["admin_excluded_session"] == 0
    # and the audit history says who decided what
    history = {a["rater_id"]: a for a in run.summary["audits"]}
    assert history[careless]["verdict"] == "rejected"
    assert history[careless]["wrong"] == history[careless]["sample_size"] == 4
    assert history[careless]["reason"] == "answers at random"
    assert history[careless]["auditor"] == "expert"
    assert len(history[careless]["wrong_items"]) == 4
    assert set(history[careless]["wrong_items"]) == set(video_ids(tiny.study).values())
    assert history[pseudonym_for(audited["a"].rater_id)]["verdict"] == "accepted"
    assert history[pseudonym_for(audited["b"].rater_id)]["verdict"] == "open"
    assert run.summary["audit_counts"] == {
        "accepted": 1, "rejected": 1, "open": 1, "not_audited": 1,
    }  # fmt: skip
    # and the raw answers keep them, marked
    export = answers_frame(study=tiny.study)
    assert (export["rater_id"] == careless).sum() == 11


def test_raters_csv_counts_a_rejected_batch_as_finished_and_rejected_in_audit(tiny, audited):
    # given: the careless batch rejected in its audit, then a run; and rater c's session
    # excluded by an admin
    admin = UserFactory(username="admin", is_staff=True)
    assignment_exclude(assignment=audited["c"], reason="asked to be removed", by=admin)
    run = run_now(tiny.study)
    # when
    response = staff().get(f"/api/studies/{tiny.study.slug}/exports/raters.csv")
    # then: the careless rater finished the session; it was rejected, not excluded by
    # an admin, and the run left it out under the audit's rule
    rows = pd.read_csv(io.StringIO(b"".join(response.streaming_content).decode()))
    by_rater = rows.set_index("rater_id")
    careless = by_rater.loc[pseudonym_for(audited["careless"].rater_id)]
    assert careless["sessions_finished"] == 1
    assert careless["sessions_rejected_in_audit"] == 1
    assert careless["sessions_excluded_by_admin"] == 0
    assert careless["latest_run_decision"] == "sessions_excluded"
    assert careless["latest_run_rules"] == "batch_rejected_in_audit"
    assert careless["latest_run_id"] == run.pk
    c = by_rater.loc[pseudonym_for(audited["c"].rater_id)]
    assert (c["sessions_finished"], c["sessions_excluded_by_admin"]) == (1, 1)
    assert c["sessions_rejected_in_audit"] == 0
    assert c["latest_run_rules"] == "admin_excluded_session"
    a = by_rater.loc[pseudonym_for(audited["a"].rater_id)]
    assert (a["sessions_finished"], a["sessions_rejected_in_audit"]) == (1, 0)
    assert a["latest_run_decision"] == "kept"


def test_the_results_page_shows_alpha_the_ties_and_the_audits(tiny, audited):
    run = run_now(tiny.study)
    Stimulus.objects.filter(public_id=video_ids(tiny.study)[1]).update(original_name="jump.mp4")
    client = staff()
    # when
    page = client.get(f"/studies/{tiny.study.slug}/results/").content.decode()
    # then
    alpha = run.summary["alpha"]["overall"]
    assert f"{alpha:.3f}" in page and "(interval)" in page
    assert 'id="tie-table"' in page
    tie = f'<tr data-item="{video_ids(tiny.study)[1]}" data-question="object_text">'
    assert tie in page
    # each tie by what a researcher knows it by: the file's name, the question's label
    row = page[page.index(tie) : page.index("</tr>", page.index(tie))]
    question = Dimension.objects.get(study=tiny.study, key="object_text")
    assert "jump.mp4" in row
    assert question.label and question.label in row
    assert 'data-count="accepted">1 accepted' in page
    assert 'data-count="rejected">1 rejected' in page
    assert "answers at random" in page
    assert "batch rejected in its audit" in page  # the exclusions list
    assert "Answers left out" in page
    # the figure's panels are headed by what the raters read, not the keys
    found = next(d for d in run.summary["distributions"] if d["question"] == "object_text")
    assert panel_title(found, 0.5) == f"{question.label} (ordinal, α = 0.50)"
    figure = client.get(f"/api/analysis-runs/{run.pk}/figures/answer-distributions.png")
    assert figure.status_code == 200 and figure["Content-Type"] == "image/png"


HEADERS = {
    "answers.csv": "rater_id,item_id,question,kind,answer,session_id,excluded",
    "comments.csv": "rater_id,item_id,question,comment,session_id,excluded",
    "labels.csv": "item_id,question,kind,value,n,status,std",
    "audits.csv": "batch_id,rater_id,session_id,auditor,started_at,decided_at,sample_size,"
    "acceptance_number,wrong,verdict,reason,wrong_items",
}


@pytest.mark.parametrize("name", sorted(HEADERS))
def test_each_export_downloads_with_its_header(tiny, audited, name):
    run = run_now(tiny.study)
    client = staff()
    # when
    response = client.get(f"/api/studies/{tiny.study.slug}/exports/{name}")
    # then
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert f"{tiny.study.slug}-" in response["Content-Disposition"]
    lines = b"".join(response.streaming_content).decode().split("\r\n")
    assert lines[0] == HEADERS[name]
    rows = {
        "answers.csv": run.ratings_count,
        "comments.csv": 1,
        "labels.csv": len(run.summary["labels"]),
        "audits.csv": 3,
    }
    assert len([line for line in lines[1:] if line]) == rows[name]
    if name == "comments.csv":
        assert COMMENT in lines[1] and lines[1].endswith(",")  # a counted comment
    if name == "audits.csv":
        assert sum(",rejected,answers at random," in line for line in lines) == 1


def test_a_batch_rejected_after_a_run_makes_the_run_out_of_date(tiny):
    # given: a run over every batch
    batches = simulated(tiny)
    run = run_now(tiny.study)
    assert analysis_run_staleness(run=run) == []
    # when: an expert rejects a batch
    expert = UserFactory(is_staff=True)
    audit = audit_open(assignment=batches["careless"], by=expert)
    findings = {str(item): {"wrong": True, "note": ""} for item in audit.sample}
    audit_decide(audit=audit, findings=findings, reason="answers at random", by=expert)
    # then: the run no longer shows what counts
    (reason,) = analysis_run_staleness(run=run)
    assert reason.startswith("exclusions changed since this run")


def test_the_provenance_names_the_run_and_its_settings(tiny, audited):
    run = run_now(tiny.study)
    response = staff().get(f"/api/studies/{tiny.study.slug}/exports/provenance.json")
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    provenance = json.loads(response.content)
    assert provenance["analysis_run"]["id"] == run.pk
    assert provenance["analysis_run"]["settings"] == {
        "keep_share": 0.5, "method": "majority", "max_iterations": 100, "tolerance": 1e-5,
    }  # fmt: skip
    assert provenance["analysis_run"]["excluded_ratings"] == {
        "rater_withdrew": 0, "admin_excluded_rater": 0, "admin_excluded_session": 0,
        "golden_gate_failed": 0, "batch_rejected_in_audit": 11,
    }  # fmt: skip


def test_a_study_without_answers_cannot_be_analysed(tiny):
    run = analysis_run_request(study=tiny.study)
    analysis_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "failed"
    assert run.error == "the study has no answers to its questions yet (comments aside)"


def test_a_study_whose_every_batch_is_rejected_cannot_be_analysed(tiny):
    batches = simulated(tiny)
    expert = UserFactory(is_staff=True)
    for batch in batches.values():
        audit = audit_open(assignment=batch, by=expert)
        audit_decide(
            audit=audit,
            findings={str(item): {"wrong": True, "note": ""} for item in audit.sample},
            by=expert,
        )
    run = analysis_run_request(study=tiny.study)
    analysis_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "failed"
    assert run.error == "every one of the study's 44 answers is excluded (batch_rejected_in_audit)"


def test_answers_received_after_a_run_started_are_neither_in_it_nor_in_its_export(tiny, audited):
    # given: a batch whose answers arrived after the run started
    later = rated.received_later(tiny.study)
    every = answers_frame(study=tiny.study)
    theirs = (every["rater_id"] == later[0]) & (every["session_id"] == later[1])
    # when
    run = run_now(tiny.study)
    table = pd.read_csv(
        io.StringIO(download(staff(), tiny.study, "answers.csv")), keep_default_na=False
    )
    # then: the run read the others, and its export holds what it read
    assert later not in rated.batches_of(run, table)
    assert theirs.any() and run.ratings_count == len(every) - theirs.sum()
    # and: raters.csv says the run did not decide about a rater it never saw
    raters = pd.read_csv(io.StringIO(download(staff(), tiny.study, "raters.csv")))
    decision = dict(zip(raters["rater_id"], raters["latest_run_decision"], strict=True))
    assert decision[later[0]] == "not_in_run"
    assert "kept" in decision.values()


def test_score_bins_are_the_steps_an_answer_can_take():
    from types import SimpleNamespace

    import pandas as pd

    from quality.designs.questionnaire import _score_bins

    # 0-10 by 6: an answer is 0 or 6 (before: a third bin, 12, past the scale's end)
    question = SimpleNamespace(scale_min=0.0, scale_max=10.0, scale_step=6.0)
    bins = _score_bins(question, pd.Series(["0", "6", "6"]))
    assert [(b["value"], b["count"]) for b in bins] == [("0", 1), ("6", 2)]
    # and a step that divides the range keeps its last step
    question = SimpleNamespace(scale_min=0.0, scale_max=1.0, scale_step=0.1)
    assert len(_score_bins(question, pd.Series(["1"]))) == 11
