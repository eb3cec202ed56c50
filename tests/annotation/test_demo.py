import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db.models import Max, Min
from django.test import Client

from annotation.designs import DESIGNS
from annotation.models import (
    Answer,
    Assignment,
    BatchAudit,
    LabelAnswer,
    Participation,
    Payment,
    Rater,
    Session,
    Stimulus,
    Study,
    TutorialPair,
)
from annotation.monitor import study_monitor
from annotation.readiness import study_problems
from annotation.services.audits import audit_queue
from annotation.services.rater_flow import sessions_left
from frontend.demo.simulate import finished_run
from media_pipeline.models import MetricScore
from quality.models import AnalysisRun


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)  # as scripts/start: videos processed on commit
def test_demo_study_is_ready_to_rate(settings, tmp_path, capsys):
    # given: an empty var dir
    settings.VAR_DIR = tmp_path
    # when
    call_command("demo_study", "--stimuli", "4")
    # then: real prompts, every video processed and scored, accounts to sign in with
    study = Study.objects.get(slug="gaia-demo")
    assert study.state == "running"
    assert study.dimensions.count() == 3
    stimuli = Stimulus.objects.filter(study=study)
    assert {s.status for s in stimuli} == {"ready"}
    assert stimuli.filter(role="stimulus").count() == 4
    assert stimuli.filter(role="golden").count() == 4
    assert stimuli.filter(role="qualification").count() == 6
    assert TutorialPair.objects.filter(study=study).count() == 3
    assert all(s.prompt and s.action for s in stimuli)
    assert MetricScore.objects.filter(stimulus__study=study, metric="si").count() == 20
    assert set(User.objects.values_list("username", flat=True)) >= {"admin", "researcher", "rater"}
    printed = capsys.readouterr().out
    assert "rater link: /r/gaia-demo/?token=" in printed
    # and how to pass each demo's qualification test, below its link
    assert "to qualify: rate 75% of the 6 test videos within 1.5 sigma" in printed
    assert "to qualify: pick the sharper video of each test pair (both test pairs" in printed
    assert "does: sit and watch (e.g., TV); propose those" in printed
    assert "so that 60% of the answers agree with the experts' (a score within 2 points" in printed
    assert " 1 session," in printed and " 1 sessions" not in printed, printed
    # and every design has its demo, with labelled simulated answers and a finished run
    for demo in Study.objects.all():
        simulated = Rater.objects.filter(participations__study=demo, is_simulated=True)
        assert simulated.count() >= (3 if demo.design == "questionnaire" else 5)
        assert all(r.external_id.startswith(f"SIM-{demo.slug}-") for r in simulated)
        assert Answer.objects.filter(item__study=demo, assignment__isnull=False).exists()
        run = AnalysisRun.objects.get(study=demo)
        assert run.status == "done", run.error
        assert study_problems(study=demo) == [], demo  # nothing lacking before raters arrive
        link = f"rater link: /r/{demo.slug}/?token={demo.entry_token}"
        assert link in printed
        assert printed.split(link, 1)[1].splitlines()[1].startswith("  to qualify: "), demo
    assert set(Study.objects.values_list("design", flat=True)) == set(DESIGNS)
    # the demo's rater, signed in, finds every demo on the home page: no link needed
    browser = Client()
    browser.force_login(User.objects.get(username="rater"))
    home = browser.get("/").content.decode()
    for demo in Study.objects.all():
        assert f'href="/study/{demo.slug}/"' in home, demo.slug
    # every simulated rater took the qualification test and was scored on it, by the
    # service a real rater's answers go through
    for participation in Participation.objects.filter(rater__is_simulated=True):
        test = Answer.objects.filter(participation=participation, attempt__isnull=False)
        drawn = participation.qualification_set["items"]
        assert drawn and sorted(test.values_list("item_id", flat=True)) == sorted(drawn)
        assert participation.qualification_share is not None, participation
        assert participation.qualification_state == "passed", participation
    # no simulated rater goes on past a session that failed the golden gate
    gates = {}
    for rater, passed in (
        Assignment.objects.filter(rater__is_simulated=True)
        .order_by("session__index")
        .values_list("rater_id", "eligible_for_next")
    ):
        gates.setdefault(rater, []).append(passed)
    assert any(False in passed for passed in gates.values())  # the line clickers fail it
    assert all(False not in passed[:-1] for passed in gates.values()), gates
    # the simulated raters are timed as real ones: the monitor shows their pace, and
    # every answer was shown, answered and received in that order, before the run
    paced = [row for row in study_monitor(study=study)["assignments"] if row["position"] > 1]
    assert paced and all(5 <= row["seconds_per_stimulus"] <= 21 for row in paced), paced
    for demo in Study.objects.all():
        run_started = AnalysisRun.objects.get(study=demo).started_at
        for shown, answered, received in Answer.objects.filter(
            item__study=demo, assignment__isnull=False
        ).values_list("shown_at", "answered_at", "received_at"):
            assert shown < answered < received < run_started
    # the GAIA tutorial: a title to read, and the experts' answer to show on every pair
    for pair in TutorialPair.objects.filter(study=study).select_related("dimension"):
        assert pair.label == f"{pair.dimension.label}: an example"
        assert pair.generated.expert_scores.filter(dimension=pair.dimension).exists()
    scale = AnalysisRun.objects.get(study__slug="preference-demo").summary["scale"]
    ranked = [row["condition"] for row in sorted(scale, key=lambda row: row["rank"])]
    assert ranked == ["Crisp", "Soft", "Grainy", "Blocky"]  # the models' visible quality
    ranking = AnalysisRun.objects.get(study__slug="ranking-demo").summary
    for question in ("aesthetics", "text_consistency"):
        assert ranking["kemeny"][question]["*"]["order"][0] == "Crisp"
    # the questionnaire demo: exemplars, one accepted and one rejected audit, a batch
    # waiting for the newcomer's audit, and the rejected batch's session open again
    questionnaire = Study.objects.get(slug="questionnaire-demo")
    audits = BatchAudit.objects.filter(assignment__session__study=questionnaire)
    assert sorted(audits.values_list("verdict", flat=True)) == ["accepted", "rejected"]
    assert len(audit_queue(study=questionnaire)) == 1
    # every finished session is due its payment, as a real rater's, for the admin to
    # decide: the rejected batch's is rejected with the audit's reason
    finished = Assignment.objects.filter(rater__is_simulated=True, finished_at__isnull=False)
    assert Payment.objects.count() == finished.count() > 0
    rejected = Payment.objects.get(assignment__audit__verdict="rejected")
    assert rejected.status == "rejected" and rejected.note.startswith("batch rejected in its audit")
    assert set(Payment.objects.exclude(pk=rejected.pk).values_list("status", flat=True)) == {
        "pending"
    }
    assert Stimulus.objects.filter(study=questionnaire, role="tutorial").count() == 2
    asked = Stimulus.objects.filter(study=questionnaire, role="stimulus").first().asked_questions
    assert asked[0] == "aes_overall_score" and 4 <= len(asked) <= 6  # kept through transcoding
    assert asked[-1] == "comment"  # the optional comment, on every regular video
    comments = LabelAnswer.objects.filter(
        answer__item__study=questionnaire, dimension__key="comment"
    )
    assert comments.exclude(text="").exists()  # some simulated raters wrote one
    newcomer = Participation.objects.create(rater=Rater.objects.get(user__username="rater"),
                                            study=questionnaire)  # fmt: skip
    assert sessions_left(newcomer)
    # the propose-then-verify demo: 3 s segments, a verify session done by simulated
    # verifiers, and a propose session with room for one real proposer
    segments = Stimulus.objects.filter(study__slug="propose-verify-demo", role="stimulus")
    assert segments.count() == 9
    assert all(abs(s.duration_s - 3.0) < 0.2 for s in segments)
    verify_sessions = Session.objects.filter(
        study__slug="propose-verify-demo", items__item__dimension__key="verify"
    ).distinct()
    assert verify_sessions.count() == 1
    assert verify_sessions.get().assignments.count() == 3
    # its verifiers came after its proposers
    staged = Answer.objects.filter(item__study=segments.first().study, assignment__isnull=False)
    proposed = staged.filter(item__dimension__key="propose").aggregate(last=Max("received_at"))
    verified = staged.filter(item__dimension__key="verify").aggregate(first=Min("received_at"))
    assert proposed["last"] < verified["first"]
    proposer = Participation.objects.create(
        rater=Rater.objects.get(user__username="rater"), study=segments.first().study
    )
    assert sessions_left(proposer)
    # its proposers all count, so stage 1's recall curve has a point per proposer
    recall = AnalysisRun.objects.get(study__slug="propose-verify-demo").summary["recall"]
    assert list(recall["curve"]) == ["1", "2", "3"]
    # and running it again changes nothing
    call_command("demo_study", "--stimuli", "4")
    assert Stimulus.objects.filter(study=study).count() == 20
    assert AnalysisRun.objects.count() == Study.objects.count()
    # and a run of the ranking demo compares the consensus with a metric the GPU worker
    # computed
    run = finished_run(Study.objects.get(slug="ranking-demo"))
    assert run.summary["against_metric"] == "sharpness"
    for question in ("aesthetics", "text_consistency"):
        # 4 conditions: K <= 4; the sharpest model is the one people put first
        assert set(run.summary["recall_at"][question]) == {"1", "3"}
        assert run.summary["recall_at"][question]["1"] == 1.0


def test_gaia_prompts_carry_their_action_classes():
    from frontend.demo import gaia_prompts

    prompts = gaia_prompts()
    assert len(prompts) == 510
    first = prompts[0]
    assert (first.action, first.prompt) == ("Arranging Flowers", "A girl arranges daisies.")
    assert (first.action_class, first.action_subclass) == ("whole-body", "arts and crafts")
    classes = {p.action_class for p in prompts}
    assert {"whole-body", "hand", "facial"} <= classes
