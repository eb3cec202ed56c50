"""Active pair choice in a running preference study (adaptive collection): sessions made
when a rater starts them, of the pairs with most expected information, never a pair past
the study's repeat limit nor a content twice, other raters' pending pairs taken into
account, and a rater with nothing left is done."""

import threading

import pytest
from django.db import connection
from django.utils import timezone

from annotation.designs.preference import settings_of
from annotation.models import (
    Answer,
    Assignment,
    Item,
    ItemMember,
    Participation,
    PreferenceJudgment,
    Session,
    SessionItem,
    Stimulus,
    Study,
)
from annotation.services.active_pairs import active_pairs_left
from annotation.services.rater_flow import progress_payload
from annotation.services.session_start import assignment_start_next
from annotation.services.studies import session_make, study_build_sessions
from tests.annotation.design_fixtures import Answerer, running_study, tiny_preference_study
from tests.annotation.rater_fixtures import rater_client
from tests.annotation.test_journey import take_test_and_session
from tests.factories import RaterFactory, StimulusFactory

pytestmark = pytest.mark.django_db
CONDITIONS = ("A", "B", "C", "D")


def active_study(
    *, contents: int = 6, session_size: int = 3, repeat_limit: int = 25, conditions=CONDITIONS
):
    study = running_study(design="preference", session_size=session_size, golden_per_session=1)
    for content in range(contents):
        for condition in conditions:
            StimulusFactory(study=study, condition=condition, content=f"c{content}")
    for expected in ("best", "worst"):
        StimulusFactory(study=study, role=Stimulus.Role.GOLDEN, content="g", expected=expected)
    chosen = settings_of(study)
    chosen.active_pairs, chosen.pair_repeat_limit = True, repeat_limit
    chosen.save()
    study_build_sessions(study=study)
    return study


def conditions_of(item_id: int) -> tuple[str, ...]:
    shown = ItemMember.objects.filter(item_id=item_id, part=ItemMember.Part.SHOWN)
    return tuple(sorted(shown.values_list("stimulus__condition", flat=True)))


def item_of(study, pair: tuple[str, str], content: str = "c0") -> Item:
    for item in Item.objects.filter(study=study, role="stimulus", content=content):
        if conditions_of(item.pk) == tuple(sorted(pair)):
            return item
    raise LookupError(pair)


def judged(
    study,
    judgments: dict[tuple[str, str], int],
    *,
    state="finished",
    raters_excluded=False,
    gate_failed=False,
) -> None:
    """Finished sessions of background raters: each judges the pair's first condition
    better on content c0, as many raters as the count says (raters excluded from the
    study, or who withdrew, with ``raters_excluded``)."""
    items = {pair: item_of(study, pair) for pair in judgments}
    session = session_make(study=study, index=900 + Session.objects.count(), seed=1,
                           items=[i.pk for i in items.values()], golden_pool=[])  # fmt: skip
    for k in range(max(judgments.values())):
        rater = RaterFactory()
        participation = Participation.objects.create(
            rater=rater, study=study, is_excluded=raters_excluded
        )
        assignment = Assignment.objects.create(
            rater=rater,
            session=session,
            order_seed=k,
            state=state,
            eligible_for_next=False if gate_failed else None,
        )
        for pair, count in judgments.items():
            if k >= count:
                continue
            left, right = (
                Stimulus.objects.get(study=study, content="c0", condition=c) for c in pair
            )
            answer = Answer.objects.create(
                item=items[pair], participation=participation, assignment=assignment
            )
            PreferenceJudgment.objects.create(answer=answer, dimension_id=items[pair].dimension_id,
                                              left=left, right=right, choice="left")  # fmt: skip


def qualified(study) -> Participation:
    return Participation.objects.create(
        rater=RaterFactory(),
        study=study,
        consent_at=timezone.now(),
        tutorial_done_at=timezone.now(),
        qualification_state=Participation.Qualification.PASSED,
    )


def session_pairs(assignment: Assignment) -> list[tuple[str, ...]]:
    regular = assignment.session.items.filter(is_golden=False)
    return [conditions_of(pk) for pk in regular.values_list("item_id", flat=True)]


def test_the_session_goes_to_the_condition_nobody_has_compared_yet():
    # given: A, B and C compared at length (A > B > C); D never
    study = active_study()
    judged(study, {("A", "B"): 30, ("B", "C"): 30, ("A", "C"): 30})
    # when: a rater starts
    assignment = assignment_start_next(participation=qualified(study))
    # then: a session made for them, every pair of it with D (the pairs that teach most)
    assert assignment.session.index not in range(1, 900)
    pairs = session_pairs(assignment)
    assert len(pairs) == 3
    assert all("D" in pair for pair in pairs), pairs
    # and its golden item, and its items shown in its order
    assert assignment.session.items.filter(is_golden=True).count() == 1
    assert sorted(assignment.order) == sorted(
        assignment.session.items.values_list("item_id", flat=True)
    )


def test_pending_pairs_of_raters_still_rating_steer_the_next_raters_elsewhere():
    # given: four conditions nobody has compared, one pair a session
    study = active_study(session_size=1)
    # when: six raters start one after another, none answering yet
    firsts = [
        session_pairs(assignment_start_next(participation=qualified(study))) for _ in "123456"
    ]
    # then: each got another of the six pairs: the ones in flight count as (nearly)
    # judged. Without them every pair is equally informative and drawn at random (all
    # six different 1.5 % of the time).
    assert sorted(pair for [pair] in firsts) == [
        ("A", "B"), ("A", "C"), ("A", "D"), ("B", "C"), ("B", "D"), ("C", "D"),
    ]  # fmt: skip


def test_a_pair_is_never_shown_past_the_limit_nor_a_content_twice():
    # given: 4 conditions (6 pairs), each pair at most twice per rater, 3 contents
    study = active_study(contents=3, session_size=4, repeat_limit=2)
    participation = qualified(study)
    seen, sessions = [], 0
    # when: the rater takes session after session until nothing is left
    while (assignment := assignment_start_next(participation=participation)) is not None:
        sessions += 1
        seen += list(
            assignment.session.items.filter(is_golden=False).values_list("item_id", flat=True)
        )
        Assignment.objects.filter(pk=assignment.pk).update(state="finished")
    # then: 6 pairs x 2 shows, no item twice; then done
    assert len(seen) == 12 == len(set(seen))
    counts = {}
    for item in seen:
        counts[conditions_of(item)] = counts.get(conditions_of(item), 0) + 1
    assert set(counts.values()) == {2} and len(counts) == 6
    assert sessions == 3
    assert not active_pairs_left(participation=participation)
    assert progress_payload(participation)["step"] == "done"


def test_a_rater_with_pairs_left_is_not_done_although_every_prebuilt_session_is_theirs():
    study = active_study(contents=2, session_size=2, repeat_limit=1)
    participation = qualified(study)
    assert active_pairs_left(participation=participation)
    assert progress_payload(participation)["step"] == "rating"


def test_judgments_of_excluded_sessions_do_not_steer_the_choice():
    # given: D compared at length, but only in excluded sessions; A, B, C at length
    study = active_study()
    judged(study, {("A", "B"): 30, ("B", "C"): 30, ("A", "C"): 30})
    judged(study, {("A", "D"): 30, ("B", "D"): 30, ("C", "D"): 30}, state="excluded")
    # when
    assignment = assignment_start_next(participation=qualified(study))
    # then: D is still the unknown one
    assert all("D" in pair for pair in session_pairs(assignment))


@pytest.mark.parametrize(
    ("left_out", "kept_failed"),
    [
        ({"raters_excluded": True}, False),
        ({"gate_failed": True}, False),
        ({"gate_failed": True}, True),
    ],
    ids=["rater-excluded", "gate-failed", "gate-failed-kept"],
)
def test_judgments_the_analysis_leaves_out_do_not_steer_the_choice(left_out, kept_failed):
    # given: D compared at length, but only by raters excluded afterwards (their sessions
    # finished, so not excluded themselves) or in sessions that failed the golden gate
    study = active_study()
    Study.objects.filter(pk=study.pk).update(keep_failed_gate_sessions=kept_failed)
    study.refresh_from_db()
    judged(study, {("A", "B"): 30, ("B", "C"): 30, ("A", "C"): 30})
    judged(study, {("A", "D"): 30, ("B", "D"): 30, ("C", "D"): 30}, **left_out)
    # when
    assignment = assignment_start_next(participation=qualified(study))
    # then: D is still the unknown one, unless the study keeps failed-gate sessions
    d_everywhere = all("D" in pair for pair in session_pairs(assignment))
    assert d_everywhere is not kept_failed


@pytest.mark.django_db(transaction=True)
def test_raters_starting_at_once_get_sessions_of_their_own():
    study = active_study(contents=6, session_size=3)
    raters = [qualified(study) for _ in range(4)]
    made, errors = [], []

    def start(participation):
        try:
            made.append(assignment_start_next(participation=participation))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=start, args=(p,)) for p in raters]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    sessions = {assignment.session_id for assignment in made}
    assert len(sessions) == 4
    assert SessionItem.objects.filter(session_id__in=sessions, is_golden=False).count() == 12


def test_a_rater_qualifies_and_rates_an_active_session_through_the_api():
    # given: the journey's tiny preference study (3 conditions, 2 contents), active
    tiny = tiny_preference_study(contents=2, session_size=4)
    chosen = settings_of(tiny.study)
    chosen.active_pairs = True
    chosen.save()
    prebuilt = set(tiny.study.sessions.values_list("pk", flat=True))
    client, user = rater_client()
    # when
    seen = take_test_and_session(client, tiny, Answerer("preference"), golden_right=True)
    # then: a session made for them (4 pairs and its 2 golden ones), answered and gated
    assignment = Assignment.objects.get(rater__user=user)
    assert assignment.session_id not in prebuilt
    assert (len(seen), assignment.state, assignment.eligible_for_next) == (6, "finished", True)
    assert PreferenceJudgment.objects.filter(answer__assignment=assignment).count() == 6
