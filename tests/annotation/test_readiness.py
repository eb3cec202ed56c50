"""What a study still lacks before raters arrive (annotation.readiness), on the Studies
page, on the study's admin page and when it is started."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from annotation.models import (
    Assignment,
    Dimension,
    ExpertScore,
    Rater,
    Stimulus,
    Study,
    TutorialPair,
)
from annotation.readiness import study_problems
from annotation.services.studies import study_build_sessions, study_golden_top_up
from tests.annotation.design_fixtures import tiny_questionnaire_study
from tests.annotation.rater_fixtures import tiny_study
from tests.factories import StimulusFactory, UserFactory, make_study
from tests.frontend_staff.test_admin import admin_form

pytestmark = pytest.mark.django_db


def codes(study: Study) -> list[tuple[str, bool]]:
    return [(p.code, p.blocks) for p in study_problems(study=study)]


def teach_every_dimension(study: Study) -> None:
    for order, dimension in enumerate(study.dimensions.all()):
        generated, real = StimulusFactory.create_batch(2, study=study, role="tutorial")
        TutorialPair.objects.create(
            study=study, dimension=dimension, label=f"e{order}", generated=generated, real=real,
            order=order,
        )  # fmt: skip


def test_a_new_study_lacks_videos_a_consent_form_a_test_and_a_tutorial():
    study = make_study(state=Study.State.DRAFT)
    assert codes(study) == [
        ("no_videos", True),
        ("no_consent", False),
        ("no_completion_link", False),
        ("no_qualification", False),
        ("no_tutorial", False),
    ]
    untaught = study_problems(study=study)[-1].text
    assert "Subject quality, Action completeness, Action-scene interaction" in untaught


def test_a_marketplace_study_without_a_completion_link_says_so():
    tiny = tiny_study(consent_text="ok", completion_url="")
    teach_every_dimension(tiny.study)
    assert codes(tiny.study) == []  # open to signed-in raters: they need no link back
    tiny.study.open_to_signed_in = False
    assert codes(tiny.study) == [("no_completion_link", False)]


def test_a_closed_study_is_not_checked():
    study = make_study(state=Study.State.CLOSED)
    assert codes(study) == []
    study.state = Study.State.PAUSED
    assert codes(study)[0] == ("no_videos", True)


def test_a_study_asking_no_question_is_blocked_first():
    study = make_study(consent_text="ok", qualification_size=0)
    Dimension.objects.filter(study=study).delete()
    StimulusFactory(study=study)
    assert codes(study)[0] == ("no_questions", True)
    assert "manage.py import_questions" in study_problems(study=study)[0].text


def test_a_prepared_slider_study_is_ready():
    tiny = tiny_study(consent_text="I agree to take part.")
    teach_every_dimension(tiny.study)
    assert codes(tiny.study) == []


def test_videos_not_split_failed_or_processing_are_named_with_their_counts():
    # given: a ready study, then new, failed and processing videos
    tiny = tiny_study(consent_text="ok")
    teach_every_dimension(tiny.study)
    StimulusFactory.create_batch(3, study=tiny.study)
    StimulusFactory(study=tiny.study, status=Stimulus.Status.FAILED)
    StimulusFactory(study=tiny.study, status=Stimulus.Status.PROCESSING)
    # when
    problems = {p.code: p.text for p in study_problems(study=tiny.study)}
    # then: the processing one is not split yet either
    assert set(problems) == {"videos_failed", "videos_processing", "unsplit"}
    assert problems["videos_failed"].startswith("1 video(s) failed")
    assert "Process again what failed" in problems["videos_failed"]  # the way docs give
    assert problems["videos_processing"].startswith("1 video(s) still being processed")
    assert problems["unsplit"].startswith("4 video(s) are in no session")
    # and splitting them leaves only the videos' own problems
    study_build_sessions(study=tiny.study)
    assert {p.code for p in study_problems(study=tiny.study)} == {
        "videos_failed",
        "videos_processing",
    }


def test_videos_never_split_block_and_sessions_without_golden_open_the_gate():
    # given: videos imported but never split
    study = make_study(
        consent_text="ok", qualification_size=0, golden_per_session=2, open_to_signed_in=True
    )
    teach_every_dimension(study)
    StimulusFactory.create_batch(2, study=study)
    assert codes(study) == [("no_sessions", True)]
    # when: split with no golden video
    study_build_sessions(study=study)
    # then: the sessions' gate is open
    assert codes(study) == [("no_golden", False)]
    # and a golden pool smaller than asked, when the sessions were made, is said as such
    other = make_study(
        consent_text="ok", qualification_size=0, golden_per_session=2, open_to_signed_in=True
    )
    teach_every_dimension(other)
    golden = StimulusFactory(study=other, role="golden")
    for dimension in other.dimensions.all():
        ExpertScore.objects.create(stimulus=golden, dimension=dimension, mean=50, sigma=5)
    StimulusFactory.create_batch(2, study=other)
    study_build_sessions(study=other)
    assert [p.text for p in study_problems(study=other)] == [
        "1 session(s) have fewer than the 2 golden items asked for (the golden pool was "
        "smaller): import more golden videos, then split the videos into sessions (Studies "
        'action "Split new stimuli into sessions"); sessions no rater has started get them'
    ]


def add_golden(study: Study, count: int) -> list[Stimulus]:
    golden = StimulusFactory.create_batch(count, study=study, role="golden")
    for stimulus in golden:
        for dimension in study.dimensions.all():
            ExpertScore.objects.create(stimulus=stimulus, dimension=dimension, mean=50, sigma=5)
    return golden


def golden_held(study: Study) -> list[int]:
    return [
        session.items.filter(is_golden=True).count() for session in study.sessions.order_by("index")
    ]


def test_golden_videos_imported_after_the_split_reach_the_sessions_no_rater_started():
    # given: three sessions split before any golden video, one of them started by a rater
    study = make_study(
        consent_text="ok", qualification_size=0, golden_per_session=2, session_size=2,
        open_to_signed_in=True,
    )  # fmt: skip
    teach_every_dimension(study)
    StimulusFactory.create_batch(6, study=study)
    study_build_sessions(study=study)
    started = study.sessions.get(index=2)
    Assignment.objects.create(
        rater=Rater.objects.create(user=UserFactory()), session=started, order_seed=1
    )
    # when: three golden videos arrive, then the admin splits again (the Studies action)
    add_golden(study, 3)
    admin = Client()
    admin.force_login(UserFactory(is_staff=True, is_superuser=True))
    page = admin.post(
        "/admin/annotation/study/",
        {"action": "build_sessions", "_selected_action": [study.pk]},
        follow=True,
    ).content.decode()
    # then: the sessions no rater started hold two each, the started one none
    assert "golden items added to 2 session(s) no rater had started" in page
    assert golden_held(study) == [2, 0, 2]
    assert all(
        len(set(s.items.filter(is_golden=True).values_list("item_id", flat=True))) == 2
        for s in study.sessions.exclude(pk=started.pk)
    )
    # and readiness names only the started session; a second split adds nothing
    assert [p.text.split(",")[0] for p in study_problems(study=study)] == [
        "1 session(s) have no golden item"
    ]
    out = io.StringIO()
    call_command("build_sessions", study.slug, stdout=out)
    assert out.getvalue().strip() == f"{study.slug}: every stimulus is already in a session"
    assert golden_held(study) == [2, 0, 2]


def test_splitting_a_study_without_videos_says_there_are_none():
    # before: "every stimulus is already in a session", while readiness said "no videos"
    study = make_study()
    StimulusFactory(study=study, role="golden")
    out = io.StringIO()
    call_command("build_sessions", study.slug, stdout=out)
    assert out.getvalue().strip() == (
        f"{study.slug}: no videos to rate yet: import them first (manage.py import_study)"
    )


def test_a_session_short_of_golden_gets_only_what_it_lacks_and_never_a_repeat():
    study = make_study(qualification_size=0, golden_per_session=3, session_size=4)
    first = add_golden(study, 1)
    StimulusFactory.create_batch(4, study=study)
    study_build_sessions(study=study)
    assert golden_held(study) == [1]
    add_golden(study, 1)
    assert study_golden_top_up(study=study) == 1
    session = study.sessions.get()
    golden = list(
        session.items.filter(is_golden=True).values_list("item__members__stimulus", flat=True)
    )
    assert len(golden) == 2 and first[0].pk in golden
    assert study_golden_top_up(study=study) == 0  # the pool is spent: nothing to add


def test_a_short_test_and_unscored_reference_videos_are_named():
    tiny = tiny_study(consent_text="ok", qualification_size=5)
    teach_every_dimension(tiny.study)
    ExpertScore.objects.filter(stimulus=tiny.golden[0]).first().delete()
    problems = {p.code: p.text for p in study_problems(study=tiny.study)}
    assert set(problems) == {"short_qualification", "unscored_reference"}
    assert problems["short_qualification"] == (
        "the qualification test takes 2 item(s), all there are, not the 5 asked for"
    )
    assert problems["unscored_reference"].startswith("1 golden or qualification video(s)")


def test_a_questionnaire_without_exemplars_says_so():
    tiny = tiny_questionnaire_study(consent_text="ok")
    assert codes(tiny.study) == []
    Stimulus.objects.filter(study=tiny.study, role="tutorial").delete()
    assert codes(tiny.study) == [("no_exemplars", False)]


def test_a_questionnaires_reference_videos_without_the_experts_answers_are_counted():
    from annotation.models import ExpertLabel

    tiny = tiny_questionnaire_study(consent_text="ok")
    ExpertLabel.objects.filter(stimulus__in=tiny.golden[:1] + tiny.qualification).delete()
    assert codes(tiny.study) == [("unanswered_reference", False)]
    (lack,) = study_problems(study=tiny.study)
    assert lack.text.startswith("3 golden or qualification video(s) have no experts' answer")


def test_a_propose_verify_study_without_a_vocabulary_is_blocked():
    from tests.annotation.design_fixtures import tiny_propose_study

    # given: a propose-then-verify study with videos but no vocabulary
    study = make_study(design="propose_verify", consent_text="ok", qualification_size=0)
    StimulusFactory(study=study)
    # then: it blocks (a proposer would have no action to pick), with what to do
    assert ("no_vocabulary", True) in codes(study)
    (lack,) = [p for p in study_problems(study=study) if p.code == "no_vocabulary"]
    assert "manage.py import_vocabulary" in lack.text
    # and a study with one does not
    assert "no_vocabulary" not in [code for code, _ in codes(tiny_propose_study().study)]


def test_the_studies_page_and_the_admin_say_what_a_study_lacks():
    # given: a draft with nothing in it, and a ready study
    draft = make_study(name="Empty draft", state=Study.State.DRAFT)
    ready = tiny_study(name="Ready", consent_text="ok").study
    teach_every_dimension(ready)
    admin = Client()
    admin.force_login(UserFactory(is_staff=True, is_superuser=True))
    # when
    page = admin.get("/studies/").content.decode()
    # then: per study, its problems (blocking ones marked) or "ready"
    rows = {slug: page.split(f'data-study="{slug}"')[1].split("</tr>")[0] for slug in
            (draft.slug, ready.slug)}  # fmt: skip
    assert '<li class="problem-blocks">No videos to rate' in rows[draft.slug]
    assert '<li class="problem">The consent form is empty' in rows[draft.slug]
    assert ">ready<" in rows[ready.slug] and "<li" not in rows[ready.slug]
    # and the admin's page of the draft says them too
    change = admin.get(f"/admin/annotation/study/{draft.pk}/change/").content.decode()
    assert "Before raters arrive: no videos to rate" in change
    # and so does the live monitor, of a study that lacks something only
    monitor = admin.get(f"/studies/{draft.slug}/monitor/").content.decode()
    assert '<section class="card" id="problems">' in monitor and "No videos to rate" in monitor
    ready_monitor = admin.get(f"/studies/{ready.slug}/monitor/").content.decode()
    assert '<section class="card" id="problems" hidden>' in ready_monitor


def test_the_api_gives_the_problems_to_admins():
    study = make_study(
        state=Study.State.DRAFT, consent_text="ok", qualification_size=0, open_to_signed_in=True
    )
    teach_every_dimension(study)
    admin = Client()
    admin.force_login(UserFactory(is_staff=True))
    body = admin.get(f"/api/studies/{study.slug}/problems/").json()
    assert body == [
        {
            "code": "no_videos",
            "text": "no videos to rate: import them (manage.py import_study, or Stimuli, Add)",
            "blocks": True,
        }
    ]


def test_researchers_see_no_problems_column():
    from django.contrib.auth.models import Group

    from annotation.roles import RESEARCHERS_GROUP

    make_study(name="Empty draft")
    user = UserFactory()
    user.groups.add(Group.objects.get_or_create(name=RESEARCHERS_GROUP)[0])
    client = Client()
    client.force_login(user)
    page = client.get("/studies/").content.decode()
    assert "Before raters arrive" not in page and "problem" not in page


def test_starting_a_study_in_the_admin_says_what_it_still_lacks():
    # given: a draft with videos split into sessions but no golden video
    study = make_study(
        name="Draft", state=Study.State.DRAFT, consent_text="ok", open_to_signed_in=True
    )
    teach_every_dimension(study)
    StimulusFactory.create_batch(2, study=study)
    study_build_sessions(study=study)
    admin = Client()
    admin.force_login(UserFactory(is_staff=True, is_superuser=True))
    url = f"/admin/annotation/study/{study.pk}/change/"
    data = admin_form(admin, url)
    data.update(state="running", _continue="Save and continue editing")
    # when
    response = admin.post(url, data, follow=True)
    # then: started, with what it lacks said once (not again by the page it leads to)
    study.refresh_from_db()
    assert study.state == Study.State.RUNNING
    said = [str(m) for m in response.context["messages"]]
    assert "Started, but 1 session(s) have no golden item" in said[0]
    assert "Started, but no qualification videos: raters start rating without a test." in said
    assert not [m for m in said if m.startswith("Before raters arrive")]
    # and the page says them again when opened afresh
    again = [str(m) for m in admin.get(url).context["messages"]]
    assert (
        "Before raters arrive: no qualification videos: raters start rating without a test."
        in again
    )
    # and saving it again, unchanged, does not repeat them
    response = admin.post(url, admin_form(admin, url), follow=True)
    assert not [m for m in response.context["messages"] if str(m).startswith("Started")]


def test_the_command_lists_the_problems_and_fails_when_raters_are_blocked():
    # given: a draft without videos, and a ready study
    draft = make_study(state=Study.State.DRAFT, consent_text="ok", open_to_signed_in=True)
    ready = tiny_study(consent_text="ok").study
    teach_every_dimension(ready)
    teach_every_dimension(draft)
    out = io.StringIO()
    # when / then: the draft's problems, blocking first, and a failure
    with pytest.raises(CommandError, match="1 problem\\(s\\) block raters"):
        call_command("study_problems", draft.slug, stdout=out)
    assert out.getvalue().splitlines() == [
        f"{draft.slug}: [blocks] no videos to rate: import them (manage.py import_study, "
        "or Stimuli, Add)",
        f"{draft.slug}: [weaker] no qualification videos: raters start rating without a test",
    ]
    # and the ready one is said ready
    out = io.StringIO()
    call_command("study_problems", ready.slug, stdout=out)
    assert out.getvalue() == f"{ready.slug}: ready\n"
