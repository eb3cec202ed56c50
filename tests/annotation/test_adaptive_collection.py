"""Adaptive collection of a single-stimulus study (issue 22): settings, the review that
settles videos, serving only open videos, and the monitor's figures."""

from __future__ import annotations

import io
import threading
import uuid
from datetime import datetime, timedelta

import numpy as np
import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.models import (
    AdaptiveSettings,
    Answer,
    Assignment,
    Dimension,
    Item,
    ItemMember,
    Participation,
    Rating,
    Session,
    SessionItem,
    SettledStimulus,
    Stimulus,
    Study,
)
from annotation.monitor import study_progress
from annotation.services.adaptive import adaptive_configure, adaptive_review
from annotation.services.adaptive_summary import adaptive_summary
from annotation.services.rater_flow import progress_payload
from annotation.services.session_start import assignment_start_next
from quality.stats.adaptive.confidence_sequence import AnytimeConfidenceSequence
from quality.stats.adaptive.group_sequential import GroupSequentialPlan
from quality.stats.adaptive.stopping import StoppingRule, decide
from quality.stats.adaptive.two_stage import TwoStagePlan
from tests.annotation.design_fixtures import tiny_preference_study
from tests.annotation.rater_fixtures import (
    TinyStudy,
    answer,
    consent_and_tutorial,
    onboard,
    rater_client,
    tiny_study,
)
from tests.factories import RaterFactory, UserFactory
from tests.frontend_staff.test_admin import admin_form

pytestmark = pytest.mark.django_db

KEYS = ("subject", "completeness", "interaction")


def adaptive(tiny: TinyStudy, **settings) -> AdaptiveSettings:
    """Adaptive collection on: the anytime plan, at least 5 ratings, a cap of 35, unless
    the test says otherwise."""
    settings = {"plan": "anytime", "min_ratings": 5, "max_ratings": 35, **settings}
    settings.setdefault("fixed_ratings", settings["max_ratings"])
    return AdaptiveSettings.objects.create(study=tiny.study, enabled=True, **settings)


def videos(tiny: TinyStudy) -> list[Stimulus]:
    return list(Stimulus.objects.filter(study=tiny.study, role=Stimulus.Role.STIMULUS))


def item_of(stimulus: Stimulus) -> Item:
    return ItemMember.objects.get(stimulus=stimulus).item


def scores_of(value: float) -> tuple[float, float, float]:
    """A rating's three dimensions: the value, and the value 2 points either side."""
    return (value, max(0.0, value - 2), min(100.0, value + 2))


def session_of(
    study: Study,
    answers: list[tuple[Stimulus, float]],
    *,
    state: str = Assignment.State.FINISHED,
    eligible: bool | None = True,
    excluded_rater: bool = False,
) -> Assignment:
    """A new rater's session in the study's first session with these answers, stored in
    this order (a value scores the three dimensions, see scores_of)."""
    rater = RaterFactory()
    participation = Participation.objects.create(
        rater=rater,
        study=study,
        qualification_state=Participation.Qualification.PASSED,
        is_excluded=excluded_rater,
    )
    session = Session.objects.filter(study=study).order_by("index").first()
    items = [item_of(stimulus) for stimulus, _ in answers]
    assignment = Assignment.objects.create(
        rater=rater,
        session=session,
        order_seed=1,
        order=[item.pk for item in items],
        position=len(items),
        state=state,
        eligible_for_next=eligible,
    )
    dimensions = list(Dimension.objects.filter(study=study).order_by("order"))
    for item, (stimulus, value) in zip(items, answers, strict=True):
        answer = Answer.objects.create(
            item=item,
            participation=participation,
            assignment=assignment,
            values_digest=uuid.uuid4().hex,
            layout=[str(stimulus.public_id)],
        )
        Rating.objects.bulk_create(
            Rating(answer=answer, stimulus=stimulus, dimension=d, score=s)
            for d, s in zip(dimensions, scores_of(value), strict=True)
        )
    return assignment


def rated(study: Study, per_video: dict[Stimulus, list[float]], **kwargs) -> None:
    """Rater r rates every video that has an r-th value: the values arrive in list order."""
    for r in range(max(len(values) for values in per_video.values())):
        answers = [(video, values[r]) for video, values in per_video.items() if len(values) > r]
        session_of(study, answers, **kwargs)


def settled() -> dict[int, tuple[int, str, float]]:
    return {
        row.stimulus_id: (row.ratings, row.reason, row.half_width)
        for row in SettledStimulus.objects.all()
    }


# --- settings --------------------------------------------------------------------------


def test_the_defaults_are_valid_and_off():
    tiny = tiny_study()
    settings = AdaptiveSettings(study=tiny.study)
    settings.full_clean()
    assert (settings.enabled, settings.plan) == (False, "two_stage")
    assert settings.target_half_width == 8.6
    assert (settings.min_ratings, settings.max_ratings, settings.alpha) == (15, 80, 0.05)
    assert settings.fixed_ratings == 35
    assert settings.look_counts() == (10, 20, 35)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"min_ratings": 81}, "min_ratings"),  # past the cap of 80
        ({"min_ratings": 1}, "min_ratings"),  # the two-stage plan's first stage
        ({"target_half_width": 0.0}, "target_half_width"),
        ({"target_half_width": 50.0}, "target_half_width"),  # the whole 0-100 range
        ({"alpha": 1.0}, "alpha"),
        ({"plan": "group_sequential", "looks": "10,x"}, "looks"),
        ({"plan": "group_sequential", "looks": "20,10"}, "looks"),
        ({"plan": "group_sequential", "looks": "1,10"}, "looks"),
        ({"plan": "group_sequential", "looks": "10,20,85"}, "looks"),  # past the cap of 80
        ({"plan": "group_sequential", "looks": ""}, "looks"),
    ],
)
def test_invalid_settings_are_refused_with_the_field_named(changes, field):
    tiny = tiny_study()
    with pytest.raises(ValidationError) as refused:
        AdaptiveSettings(study=tiny.study, **changes).full_clean()
    assert field in refused.value.message_dict


def test_only_a_slider_study_can_switch_it_on():
    tiny = tiny_preference_study()
    with pytest.raises(ValidationError) as refused:
        AdaptiveSettings(study=tiny.study, enabled=True).full_clean()
    assert "enabled" in refused.value.message_dict
    AdaptiveSettings(study=tiny.study, enabled=False).full_clean()


def test_the_command_switches_it_on_and_off_and_refuses_bad_numbers():
    tiny = tiny_study()
    slug = tiny.study.slug
    # when
    out = io.StringIO()
    call_command(
        "adaptive", slug, "--on", "--width", "8", "--plan", "group_sequential",
        "--looks", "5,10,20", "--cap", "20", "--min", "4", stdout=out,
    )  # fmt: skip
    # then
    sessions = tiny.study.session_size
    assert f"  sessions: {sessions} videos each: sessions this short" in out.getvalue()
    settings = AdaptiveSettings.objects.get(study=tiny.study)
    assert (settings.enabled, settings.plan, settings.looks) == (
        True,
        "group_sequential",
        "5,10,20",
    )
    assert (settings.target_half_width, settings.min_ratings, settings.max_ratings) == (8, 4, 20)
    # when: a minimum past the cap
    with pytest.raises(CommandError, match="min_ratings"):
        call_command("adaptive", slug, "--min", "30")
    assert AdaptiveSettings.objects.get(study=tiny.study).min_ratings == 4
    # when: looks that are not numbers under another plan (before: kept, and refused
    # only once the plan became group-sequential, for a value not given with it)
    with pytest.raises(CommandError, match="whole numbers separated by commas"):
        call_command("adaptive", slug, "--plan", "anytime", "--looks", "a,b")
    assert AdaptiveSettings.objects.get(study=tiny.study).looks == "5,10,20"
    # when
    call_command("adaptive", slug, "--off")
    assert AdaptiveSettings.objects.get(study=tiny.study).enabled is False
    # and a study of another design is refused
    with pytest.raises(CommandError, match="single-stimulus"):
        call_command("adaptive", tiny_preference_study().study.slug, "--on")


# --- the review -------------------------------------------------------------------------


def expected_stop(plan, rule: StoppingRule, values: list[float]):
    """The pure rule on the same scores, one rating at a time: (n, reason, half-width) at
    the first stop, or None."""
    states = [plan.start() for _ in KEYS]
    for value in values:
        states = [
            plan.update(state, score=score)
            for state, score in zip(states, scores_of(value), strict=True)
        ]
        intervals = {key: plan.interval(state) for key, state in zip(KEYS, states, strict=True)}
        decision = decide(rule=rule, intervals=intervals)
        if decision.stop:
            return decision.n, decision.reason, decision.widest_half_width
    return None


@pytest.mark.parametrize(
    ("chosen", "plan", "rule"),
    [
        (
            {"plan": "anytime", "target_half_width": 15.0, "max_ratings": 30},
            AnytimeConfidenceSequence(alpha=0.05, low=0.0, high=100.0),
            StoppingRule(target_half_width=15.0, min_ratings=5, max_ratings=30),
        ),
        (
            {"plan": "group_sequential", "looks": "5,10,20", "target_half_width": 10.0,
             "max_ratings": 20},
            GroupSequentialPlan(looks=(5, 10, 20), alpha=0.05, low=0.0, high=100.0),
            StoppingRule(target_half_width=10.0, min_ratings=5, max_ratings=20),
        ),
        (
            {"plan": "two_stage", "min_ratings": 6, "target_half_width": 6.0,
             "max_ratings": 24},
            TwoStagePlan(first_stage=6, alpha=0.05, low=0.0, high=100.0),
            StoppingRule(target_half_width=6.0, min_ratings=6, max_ratings=24),
        ),
    ],
    ids=["anytime", "group_sequential", "two_stage"],
)  # fmt: skip
def test_a_video_settles_exactly_when_the_stopping_rule_says_so(chosen, plan, rule):
    # given: a video the raters agree on, one they split on, one with few ratings
    tiny = tiny_study()
    adaptive(tiny, **chosen)
    tight, spread, few = videos(tiny)[:3]
    rng = np.random.default_rng(3)
    values = {
        tight: [float(v) for v in np.clip(np.round(rng.normal(60, 4, 24)), 0, 100)],
        spread: [5.0, 95.0] * 12,
        few: [50.0] * 4,
    }
    rated(tiny.study, values)
    # when
    review = adaptive_review(study=tiny.study)
    # then: the same stops as the pure rule, on the same scores in the same order
    expected = {
        video.pk: expected_stop(plan, rule, scores)
        for video, scores in values.items()
        if expected_stop(plan, rule, scores) is not None
    }
    assert expected and few.pk not in expected  # the case is not trivial
    got = settled()
    assert got.keys() == expected.keys()
    for video, (n, reason, half) in expected.items():
        assert got[video][:2] == (n, reason)
        assert got[video][2] == pytest.approx(half)
    assert sorted(review.settled_now) == sorted(expected)


def test_golden_and_qualification_videos_never_settle():
    # given: many agreeing ratings of golden videos in sessions, and qualification answers
    tiny = tiny_study()
    adaptive(tiny, target_half_width=40.0)
    rated(tiny.study, {golden: [50.0] * 8 for golden in tiny.golden})
    rater = RaterFactory()
    participation = Participation.objects.create(rater=rater, study=tiny.study)
    for attempt in range(1, 7):
        for stimulus in tiny.qualification:
            answer = Answer.objects.create(
                item=item_of(stimulus),
                participation=participation,
                attempt=attempt,
                values_digest="x",
            )
            Rating.objects.create(
                answer=answer,
                stimulus=stimulus,
                dimension=Dimension.objects.get(study=tiny.study, key="subject"),
                score=50.0,
            )
    # when
    review = adaptive_review(study=tiny.study)
    # then
    assert review.settled_now == []
    assert not SettledStimulus.objects.exists()


@pytest.mark.parametrize(
    "excluded",
    [
        {"excluded_rater": True},
        {"state": Assignment.State.EXCLUDED},
        {"eligible": False},  # failed the golden gate
        {"state": Assignment.State.ACTIVE, "eligible": None},  # not gated yet
    ],
    ids=["rater_excluded", "session_excluded", "failed_gate", "session_open"],
)
def test_ratings_that_do_not_count_settle_nothing(excluded):
    # given: 5 ratings would settle a video at +-40 (the anytime interval is +-34.4)
    tiny = tiny_study()
    adaptive(tiny, target_half_width=40.0)
    video = videos(tiny)[0]
    rated(tiny.study, {video: [50.0] * 5}, **excluded)
    rated(tiny.study, {video: [50.0] * 4})  # and 4 that count
    # when
    adaptive_review(study=tiny.study)
    # then
    assert not SettledStimulus.objects.exists()
    # when: one more that counts
    rated(tiny.study, {video: [50.0]})
    adaptive_review(study=tiny.study)
    # then: settled on the 5 that count
    assert settled()[video.pk][:2] == (5, "precise")


def test_a_study_that_keeps_failed_gate_sessions_counts_them():
    tiny = tiny_study(keep_failed_gate_sessions=True)
    adaptive(tiny, target_half_width=40.0)
    video = videos(tiny)[0]
    rated(tiny.study, {video: [50.0] * 5}, eligible=False)
    adaptive_review(study=tiny.study)
    assert settled()[video.pk][:2] == (5, "precise")


def test_nothing_happens_while_adaptive_collection_is_off():
    tiny = tiny_study()
    AdaptiveSettings.objects.create(study=tiny.study, enabled=False, target_half_width=40.0)
    rated(tiny.study, {videos(tiny)[0]: [50.0] * 5})
    assert adaptive_review(study=tiny.study) is None
    assert adaptive_summary(study=tiny.study) is None
    assert not SettledStimulus.objects.exists()


def test_a_second_review_changes_nothing():
    # given
    tiny = tiny_study()
    adaptive(tiny, target_half_width=40.0)
    first, second = videos(tiny)[:2]
    rated(tiny.study, {first: [50.0] * 5, second: [50.0] * 3})
    assert adaptive_review(study=tiny.study).settled_now == [first.pk]
    row = SettledStimulus.objects.get()
    # when: more ratings of the settled video arrive, and the study is reviewed again
    rated(tiny.study, {first: [0.0, 100.0]})
    again = adaptive_review(study=tiny.study)
    # then: the settlement stands as it was
    assert again.settled_now == []
    assert list(SettledStimulus.objects.values_list("pk", "ratings")) == [(row.pk, 5)]


@pytest.mark.django_db(transaction=True)
def test_two_reviews_at_once_settle_each_video_once():
    # given
    tiny = tiny_study()
    adaptive(tiny, target_half_width=40.0)
    rated(tiny.study, {video: [50.0] * 5 for video in videos(tiny)[:4]})
    barrier = threading.Barrier(2)
    results, errors = [], []

    def review():
        try:
            barrier.wait()
            results.append(adaptive_review(study=Study.objects.get(pk=tiny.study.pk)))
        except Exception as error:  # noqa: BLE001 - reported by the assertion below
            errors.append(error)
        finally:
            connection.close()

    # when
    threads = [threading.Thread(target=review) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # then: four rows, each video settled by exactly one of the two reviews
    assert errors == []
    assert SettledStimulus.objects.count() == 4
    settled_by = sorted(pk for result in results for pk in result.settled_now)
    assert settled_by == sorted(v.pk for v in videos(tiny)[:4])


# --- serving ----------------------------------------------------------------------------


def passed_participation(study: Study) -> Participation:
    return Participation.objects.create(
        rater=RaterFactory(),
        study=study,
        consent_at=timezone.now(),
        tutorial_done_at=timezone.now(),
        qualification_state=Participation.Qualification.PASSED,
    )


def settle(*stimuli: Stimulus) -> None:
    SettledStimulus.objects.bulk_create(
        SettledStimulus(stimulus=s, reason="precise", ratings=5, half_width=4.0) for s in stimuli
    )


def test_a_new_session_leaves_settled_videos_out_and_keeps_open_and_golden_ones():
    # given: two of the six videos settled
    tiny = tiny_study()
    adaptive(tiny)
    all_videos = videos(tiny)
    settle(*all_videos[:2])
    # when
    assignment = assignment_start_next(participation=passed_participation(tiny.study))
    # then
    served = set(assignment.order)
    assert served == {item_of(v).pk for v in all_videos[2:] + tiny.golden}
    assert len(assignment.order) == 6


def test_settled_videos_are_served_again_once_adaptive_collection_is_off():
    tiny = tiny_study()
    AdaptiveSettings.objects.create(study=tiny.study, enabled=False)
    settle(*videos(tiny)[:2])
    assignment = assignment_start_next(participation=passed_participation(tiny.study))
    assert len(assignment.order) == 8


def test_no_session_is_handed_out_once_all_its_videos_settled():
    tiny = tiny_study()
    adaptive(tiny)
    settle(*videos(tiny))
    assert assignment_start_next(participation=passed_participation(tiny.study)) is None


def test_a_rater_whose_sessions_all_settled_is_told_they_are_done():
    # given: every video settled while the rater took the qualification test
    tiny = tiny_study()
    adaptive(tiny)
    client, _ = rater_client()
    consent_and_tutorial(client, tiny)
    settle(*videos(tiny))
    # when: they pass it
    for _ in range(2):
        item = client.get(tiny.base + "next/").json()["item"]["id"]
        assert client.post(tiny.base + "answers/", answer(item, 52.0), format="json").status_code
    # then: done, not waiting for a session that will never come
    assert client.get(tiny.base + "state/").json()["step"] == "done"
    assert client.get(tiny.base + "next/").json()["item"] is None
    # and a rater arriving now is told at once, before any test
    late, _ = rater_client()
    assert late.get(tiny.base + "state/").json()["step"] == "full"


def regular_of(session: Session) -> set[int]:
    return set(
        SessionItem.objects.filter(session=session, is_golden=False).values_list(
            "item_id", flat=True
        )
    )


def finish_rating(assignment: Assignment, participation: Participation) -> None:
    """The rater answers their whole session (the answers alone: what a fill reads)."""
    for pk in assignment.order:
        Answer.objects.create(
            item_id=pk, participation=participation, assignment=assignment,
            values_digest=uuid.uuid4().hex, layout=[],
        )  # fmt: skip
    assignment.position = len(assignment.order)
    assignment.state = Assignment.State.FINISHED
    assignment.save(update_fields=["position", "state"])


def test_a_session_thinned_by_settled_videos_is_filled_from_the_other_open_videos():
    # given: two sessions of 6 videos; 4 of the first session's settled
    tiny = tiny_study(stimuli=12)
    adaptive(tiny)
    first, second = Session.objects.filter(study=tiny.study).order_by("index")
    settled_videos = [v for v in videos(tiny) if item_of(v).pk in regular_of(first)][:4]
    settle(*settled_videos)
    participation = passed_participation(tiny.study)
    # when
    assignment = assignment_start_next(participation=participation)
    # then: the first session's 2 open videos, 4 of the second's, and the golden ones:
    # as many videos to rate as the session was built with, never a settled one
    assert assignment.session == first
    golden = set(assignment.order) - regular_of(first) - regular_of(second)
    regular = set(assignment.order) - golden
    assert golden == {item_of(v).pk for v in tiny.golden}
    assert len(regular) == 6 and len(assignment.order) == 8
    assert regular_of(first) - {item_of(v).pk for v in settled_videos} <= regular
    assert len(regular & regular_of(second)) == 4
    # and when the rater takes the second session: the videos they rated are left out
    finish_rating(assignment, participation)
    following = assignment_start_next(participation=participation)
    assert following.session == second
    assert set(following.order) - golden == regular_of(second) - regular
    assert golden <= set(following.order)


def test_a_rater_who_rated_every_open_video_is_given_no_session_of_golden_ones_only():
    # given: half of each session's videos settled; the rater's first session is filled
    # with the second's open ones
    tiny = tiny_study(stimuli=12)
    adaptive(tiny)
    first, second = Session.objects.filter(study=tiny.study).order_by("index")
    settle(*[v for v in videos(tiny) if item_of(v).pk in regular_of(first)][:3])
    settle(*[v for v in videos(tiny) if item_of(v).pk in regular_of(second)][:3])
    participation = passed_participation(tiny.study)
    assignment = assignment_start_next(participation=participation)
    assert len(set(assignment.order) & regular_of(second)) == 3
    finish_rating(assignment, participation)
    # when: the second session is still open, but holds nothing this rater has not rated
    following = assignment_start_next(participation=participation)
    # then: done for now, not waiting for a session that holds nothing for them
    assert following is None
    assert not Assignment.objects.filter(session=second).exists()
    assert progress_payload(participation)["step"] == "done"
    # and another rater gets the second session's open videos (and the first's as fill)
    other = assignment_start_next(participation=passed_participation(tiny.study))
    assert len(set(other.order) - {item_of(v).pk for v in tiny.golden}) == 6


def test_sessions_are_not_filled_while_adaptive_collection_is_off():
    tiny = tiny_study(stimuli=12)
    AdaptiveSettings.objects.create(study=tiny.study, enabled=False)
    first = Session.objects.filter(study=tiny.study).order_by("index").first()
    assignment = assignment_start_next(participation=passed_participation(tiny.study))
    assert set(assignment.order) - {item_of(v).pk for v in tiny.golden} == regular_of(first)


def test_a_review_prunes_only_what_the_raters_page_cannot_hold_and_keeps_answers():
    # given: a rater 2 answers into a session (window 1: the page holds the current item
    # and preloads the next; one more is kept), in a known order
    tiny = tiny_study(window_size=1)
    adaptive(tiny, target_half_width=40.0)
    a, b, c, d, e, f = videos(tiny)
    g1, g2 = tiny.golden
    order = [item_of(s).pk for s in (a, tiny.golden[0], b, c, d, e, g2, f)]
    active = session_of(tiny.study, [(a, 50.0), (g1, 20.0)], state=Assignment.State.ACTIVE)
    active.order, active.position = order, 2
    active.save(update_fields=["order", "position"])
    answers = list(Answer.objects.filter(assignment=active).values_list("pk", flat=True))
    # and others' kept ratings settle a (answered), c (held ahead) and e (not held)
    rated(tiny.study, {a: [50.0] * 5, c: [50.0] * 5, e: [50.0] * 5})
    # when
    review = adaptive_review(study=tiny.study)
    # then: e left out after the held positions; nothing before changed, no answer lost
    assert sorted(review.settled_now) == sorted([a.pk, c.pk, e.pk])
    assert review.sessions_pruned == 1
    active.refresh_from_db()
    assert active.order == [item_of(s).pk for s in (a, g1, b, c, d, g2, f)]
    assert active.position == 2
    assert list(Answer.objects.filter(assignment=active).values_list("pk", flat=True)) == answers


def test_a_finished_session_sends_a_review(django_capture_on_commit_callbacks):
    # given: adaptive on, and a rater about to finish their session
    tiny = tiny_study(rest_every=0)
    adaptive(tiny, target_half_width=40.0)
    rated(tiny.study, {video: [50.0] * 4 for video in videos(tiny)})
    client, user = rater_client()
    onboard(client, tiny)
    golden = {str(s.public_id): v for s, v in zip(tiny.golden, (20.0, 80.0), strict=True)}
    # when: the rater rates the whole session (their ratings are the fifth of each video)
    with django_capture_on_commit_callbacks(execute=True):
        while item := client.get(tiny.base + "next/").json()["item"]:
            body = answer(item["id"], golden.get(item["id"], 50.0))
            assert client.post(tiny.base + "answers/", body, format="json").status_code == 201
    # then: the review ran on the commit of the last answer and settled every video
    assert Assignment.objects.get(rater__user=user).eligible_for_next is True
    assert AdaptiveSettings.objects.get(study=tiny.study).reviewed_at is not None
    assert set(settled()) == {video.pk for video in videos(tiny)}


def test_a_new_stopping_rule_re_judges_the_settled_videos(django_capture_on_commit_callbacks):
    # given: a and b settled at +-40 on 5 equal ratings each
    tiny = tiny_study()
    adaptive(tiny, target_half_width=40.0)
    a, b = videos(tiny)[:2]
    rated(tiny.study, {a: [50.0] * 5, b: [50.0] * 5})
    adaptive_review(study=tiny.study)
    assert set(settled()) == {a.pk, b.pk}
    # when: the target narrows to +-5, which 5 ratings cannot reach
    with django_capture_on_commit_callbacks(execute=True):
        adaptive_configure(study=tiny.study, target_half_width=5.0)
    # then: both are open again (served to new sessions), not counted as settled
    assert settled() == {}
    assert adaptive_summary(study=tiny.study)["videos_settled"] == 0
    # when: it widens back: the review sent on commit settles them again
    with django_capture_on_commit_callbacks(execute=True):
        adaptive_configure(study=tiny.study, target_half_width=40.0)
    assert set(settled()) == {a.pk, b.pk}
    # and a change that is not the rule's (the baseline's count) leaves them settled
    before = SettledStimulus.objects.order_by("pk").values_list("pk", flat=True)
    adaptive_configure(study=tiny.study, fixed_ratings=20)
    assert list(SettledStimulus.objects.order_by("pk").values_list("pk", flat=True)) == list(before)


def test_switching_on_again_takes_videos_settled_before_out_of_open_sessions(
    django_capture_on_commit_callbacks,
):
    # given: a settled, then adaptive collection off, and a session started meanwhile
    # that holds a far ahead of the rater's position
    tiny = tiny_study(window_size=1)
    adaptive(tiny, target_half_width=40.0)
    a, b, c, d, e, f = videos(tiny)
    rated(tiny.study, {a: [50.0] * 5})
    adaptive_review(study=tiny.study)
    adaptive_configure(study=tiny.study, enabled=False)
    active = session_of(tiny.study, [(b, 50.0)], state=Assignment.State.ACTIVE)
    active.order = [item_of(s).pk for s in (b, c, d, e, f, a)]
    active.position = 1
    active.save(update_fields=["order", "position"])
    # when: switched on again
    with django_capture_on_commit_callbacks(execute=True):
        adaptive_configure(study=tiny.study, enabled=True)
    # then: a is left out of the positions the rater's page does not hold yet
    active.refresh_from_db()
    assert active.order == [item_of(s).pk for s in (b, c, d, e, f)]


def test_a_change_in_the_admin_form_is_acted_on_at_once(client, django_capture_on_commit_callbacks):
    # given: a and b rated 5 times each, adaptive collection off
    tiny = tiny_study()
    adaptive(tiny, target_half_width=40.0)
    AdaptiveSettings.objects.filter(study=tiny.study).update(enabled=False)
    a, b = videos(tiny)[:2]
    rated(tiny.study, {a: [50.0] * 5, b: [50.0] * 5})
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    url = f"/admin/annotation/study/{tiny.study.pk}/change/"
    data = admin_form(client, url)
    data["adaptive-0-enabled"] = "on"
    # when: switched on in the admin
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, data)
    # then: reviewed on the save's commit, as the API's switch is
    assert response.status_code == 302
    assert set(settled()) == {a.pk, b.pk}
    assert AdaptiveSettings.objects.get(study=tiny.study).reviewed_at is not None


# --- the monitor ------------------------------------------------------------------------


def test_the_summary_states_the_saving_against_the_fixed_design():
    # given: cap 10; two videos settle on 5 ratings each, one has 3, and 2 answers wait in
    # an open session
    tiny = tiny_study()
    adaptive(tiny, target_half_width=40.0, max_ratings=10)
    a, b, c = videos(tiny)[:3]
    Stimulus.objects.filter(pk=c.pk).update(original_name="cat_dance_07.mp4")
    rated(tiny.study, {a: [50.0] * 5, b: [60.0] * 5, c: [40.0] * 3})
    session_of(tiny.study, [(a, 50.0), (c, 50.0)], state=Assignment.State.ACTIVE)
    # when
    adaptive_review(study=tiny.study)
    summary = adaptive_summary(study=tiny.study)
    # then
    c_interval = AnytimeConfidenceSequence().sequence([40.0, 40.0, 40.0])
    assert {k: summary[k] for k in (
        "videos", "videos_settled", "videos_open", "settled_by_reason", "ratings_collected",
        "ratings_awaiting_gate", "ratings_on_settled", "fixed_design_ratings",
        "fixed_on_settled", "projected_ratings", "saving", "saving_share", "verdict",
        "open_rated",
    )} == {
        "videos": 6,
        "videos_settled": 2,
        "videos_open": 4,
        "settled_by_reason": {"precise": 2, "plan_complete": 0, "cap": 0},
        "ratings_collected": 13,
        "ratings_awaiting_gate": 2,
        "ratings_on_settled": 10,
        "fixed_design_ratings": 60,
        "fixed_on_settled": 20,
        "projected_ratings": 50,
        "saving": 10,
        "saving_share": 0.1667,
        "verdict": "saving",
        "open_rated": 1,
    }  # fmt: skip
    # the widest open interval: c's widest dimension (completeness, 2 points lower, or
    # interaction, 2 higher), 3 ratings
    (widest,) = summary["widest_open"]
    assert (widest["video_id"], widest["name"], widest["n"]) == (c.pk, "cat_dance_07.mp4", 3)
    assert widest["half_width"] >= round(
        float((c_interval.upper[-1] - c_interval.lower[-1]) / 2), 2
    )
    assert summary["sentence"] == (
        "Adaptive collection is saving: 2 settled videos took 10 kept ratings where the "
        "fixed design spends 20 (10 each), 10 fewer (50% of those); so far that is 17% of "
        "the 60 the fixed design spends on the study."
    )


def test_the_progress_counts_towards_the_cap_and_what_the_open_videos_may_still_take():
    # given: the study above: cap 10, a and b settled on 5 ratings each, c open with 3,
    # and 2 answers waiting in an open session; 35 raters wanted per video otherwise
    tiny = tiny_study()
    adaptive(tiny, target_half_width=40.0, max_ratings=10)
    a, b, c = videos(tiny)[:3]
    rated(tiny.study, {a: [50.0] * 5, b: [60.0] * 5, c: [40.0] * 3})
    session_of(tiny.study, [(a, 50.0), (c, 50.0)], state=Assignment.State.ACTIVE)
    adaptive_review(study=tiny.study)
    # when
    before = timezone.now()
    progress = study_progress(study=tiny.study)
    # then: at most the cap per video; the 4 open videos may take 10 each, less the 3 c
    # has: 37 more ratings at the last hour's pace (15 answers), not 6 x 35 - 15
    assert (progress["target_per_stimulus"], progress["target_is_cap"]) == (10, True)
    assert (progress["answers"], progress["answers_last_hour"]) == (15, 15)
    finish = datetime.fromisoformat(progress["expected_finish"])
    expected = before + timedelta(hours=37 / 15)
    assert abs((finish - expected).total_seconds()) < 60
    # and without adaptive collection, the study's 35 raters per video
    adaptive_configure(study=tiny.study, enabled=False)
    assert study_progress(study=tiny.study)["target_is_cap"] is False
    assert study_progress(study=tiny.study)["target_per_stimulus"] == 35


def test_the_summary_says_plainly_when_it_costs():
    # given: a target the anytime interval cannot reach by the cap of 6 (it is +-31.5
    # there), and a rating counted after the stop (a session that finished later)
    tiny = tiny_study()
    adaptive(tiny, target_half_width=10.0, min_ratings=5, max_ratings=6)
    a = videos(tiny)[0]
    rated(tiny.study, {a: [50.0] * 6})
    adaptive_review(study=tiny.study)
    rated(tiny.study, {a: [50.0]})
    # when
    summary = adaptive_summary(study=tiny.study)
    # then
    assert (summary["verdict"], summary["saving"]) == ("costing", -1)
    assert summary["settled_by_reason"]["cap"] == 1
    assert summary["sentence"] == (
        "Adaptive collection is costing: 1 settled video took 7 kept ratings, 1 more than "
        "the fixed design's 6 (6 each), and its intervals are wider than the fixed design's "
        "for the same ratings. 1 of 1 settled only at the cap: a target of +-10 is too "
        "narrow for this study's spread of scores; widen it or switch adaptive collection off."
    )


def test_the_summary_before_any_video_settled():
    tiny = tiny_study()
    adaptive(tiny)
    summary = adaptive_summary(study=tiny.study)
    assert (summary["verdict"], summary["videos_settled"], summary["widest_open"]) == (
        "too_early",
        0,
        [],
    )
    assert summary["sentence"] == (
        "No video has settled yet, so nothing is saved so far (0 kept ratings; a video "
        "settles after at least 5)."
    )


def test_the_summary_says_when_sessions_are_too_short_for_the_z_scored_mos():
    # given: sessions of 300 videos set, but 49 videos: the one session holds 49
    tiny = tiny_study(stimuli=49, session_size=300)
    adaptive(tiny)
    short = adaptive_summary(study=tiny.study)["sessions_note"]
    assert short.startswith("49 videos each: sessions this short make the Z-scored MOS")
    assert "sessions of 50 videos or more keep it as accurate" in short
    # given: 50 videos
    tiny = tiny_study(stimuli=50, session_size=300)
    adaptive(tiny)
    assert adaptive_summary(study=tiny.study)["sessions_note"] == "50 videos each"


def test_the_monitor_api_carries_the_adaptive_panel_only_when_it_is_on():
    tiny = tiny_study()
    client = APIClient()
    client.force_authenticate(UserFactory(is_staff=True))
    url = f"/api/studies/{tiny.study.slug}/monitor/"
    assert client.get(url).json()["adaptive"] is None
    adaptive(tiny)
    body = client.get(url).json()["adaptive"]
    assert (body["verdict"], body["fixed_design_ratings"]) == ("too_early", 6 * 35)


# --- tasks and the demo -----------------------------------------------------------------


def test_the_sweep_reviews_running_studies_with_adaptive_collection_on():
    # given: one study on, one off, one on but paused
    on, off, paused = tiny_study(), tiny_study(), tiny_study()
    adaptive(on, target_half_width=40.0)
    AdaptiveSettings.objects.create(study=off.study, enabled=False, target_half_width=40.0)
    adaptive(paused, target_half_width=40.0)
    Study.objects.filter(pk=paused.study.pk).update(state=Study.State.PAUSED)
    for tiny in (on, off, paused):
        rated(tiny.study, {videos(tiny)[0]: [50.0] * 5})
    # when
    from annotation.tasks import review_adaptive, sweep_adaptive

    reviewed = sweep_adaptive.delay().get()
    # then
    assert reviewed == 1
    assert set(settled()) == {videos(on)[0].pk}
    assert review_adaptive.delay(paused.study.pk).get() == 1  # asked for, it reviews
    assert review_adaptive.delay(10**9).get() == 0  # a study deleted meanwhile


def test_the_demo_switch_turns_it_on_with_the_demo_numbers_once():
    from frontend.demo import gaia

    # given: a slider study with golden videos the experts scored
    tiny = tiny_study()
    # when
    gaia.adaptive_on(tiny.study)
    settled_count = gaia.adaptive_on(tiny.study)
    # then: four simulated raters more (made once), adaptive on with the demo's numbers
    settings = AdaptiveSettings.objects.get(study=tiny.study)
    assert settings.enabled
    assert {k: getattr(settings, k) for k in gaia.ADAPTIVE_DEMO} == gaia.ADAPTIVE_DEMO
    # and a run that states each video's interval; the count of settled videos returned
    from quality.models import AnalysisRun

    run = AnalysisRun.objects.filter(study=tiny.study, status="done").latest("pk")
    assert run.summary["adaptive"]["settled"] == settled_count == len(settled())
    simulated = Participation.objects.filter(study=tiny.study, rater__is_simulated=True)
    assert sorted(simulated.values_list("rater__external_id", flat=True)) == [
        f"SIM-{tiny.study.slug}-{n:02d}" for n in range(8, 12)
    ]


def test_scores_by_video_pivots_answers_in_arrival_order_and_drops_incomplete_ones():
    # given: a study whose dimensions' order is not their ids' order, and ratings rows
    # (answer, video, dimension, score) as the database gives them, ordered by answer
    from annotation.services.adaptive_ratings import scores_by_video

    tiny = tiny_study()
    dims = list(tiny.study.dimensions.order_by("order").values_list("pk", flat=True))
    Dimension.objects.filter(pk=dims[0]).update(order=99)  # the first moves last
    order = [*dims[1:], dims[0]]
    rng = np.random.default_rng(3)
    rows, expected = [], {}
    for answer_id in range(1, 200):
        video = int(rng.choice([70, 30, 50, 10]))
        scores = rng.integers(0, 101, len(order)).astype(float)
        present = rng.random(len(order)) > 0.05  # now and then a dimension is missing
        for pk, score, here in sorted(zip(dims, scores, present, strict=True), key=lambda x: -x[0]):
            if here:
                rows.append((answer_id, video, pk, score))
        if present.all():  # the reference, written the plain way
            by_pk = dict(zip(dims, scores, strict=True))
            expected.setdefault(video, []).append([by_pk[pk] for pk in order])
    # when
    got = scores_by_video(study=tiny.study, rows=iter(rows))
    # then: videos in the order of their first complete answer, each in arrival order
    assert list(got) == list(expected)
    for video, scores in expected.items():
        np.testing.assert_array_equal(got[video], np.array(scores))
    assert scores_by_video(study=tiny.study, rows=iter([])) == {}
