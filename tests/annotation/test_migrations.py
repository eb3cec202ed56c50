"""Data migrations, run on rows the earlier schema held (written with the historical
models of that schema)."""

import datetime as dt
import uuid

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from annotation.designs import values_digest

pytestmark = pytest.mark.django_db(transaction=True)

UTC = dt.UTC


def migrate(targets) -> None:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)


def models_at(target):
    """The historical models of the annotation app at `target`."""
    executor = MigrationExecutor(connection)
    state = executor.loader.project_state([target])
    return lambda name: state.apps.get_model("annotation", name)


@pytest.fixture
def back_to():
    """Migrate back to a migration (on an empty database); forward again after the test."""
    yield lambda target: migrate([target])
    migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


def a_study(model, n_stimuli: int, **roles):
    """A study with three dimensions and stimuli of the given roles, in historical models."""
    study = model("Study").objects.create(name="S", slug="s", entry_token=uuid.uuid4().hex)
    dims = [
        model("Dimension").objects.create(study=study, key=key, label=key, order=i)
        for i, key in enumerate(("subject", "completeness", "interaction"), start=1)
    ]
    made = {}
    for role, count in {"stimulus": n_stimuli, **roles}.items():
        made[role] = [
            model("Stimulus").objects.create(
                study=study,
                role=role,
                checksum=uuid.uuid4().hex,
                source_file=f"sources/{role}{i}.mp4",
                status="ready",
            )
            for i in range(count)
        ]
    user = model("User") if False else None  # noqa: F841 (auth users come from the app)
    return study, dims, made


def a_rater(model, study):
    from django.contrib.auth.models import User

    user = User.objects.create(username=f"u{uuid.uuid4().hex[:8]}")
    rater = model("Rater").objects.create(user_id=user.pk)
    participation = model("Participation").objects.create(rater=rater, study=study)
    return rater, participation


def test_open_sessions_get_the_answers_of_the_raters_earlier_sessions(back_to):
    # given: at 0004, a rater who finished one session of 8 and started the next
    back_to(("annotation", "0004_participation_qualification_set"))
    model = models_at(("annotation", "0004_participation_qualification_set"))
    study, _, made = a_study(model, 12)
    first, second = (model("Session").objects.create(study=study, index=i, seed=i) for i in (1, 2))
    rater, _ = a_rater(model, study)
    pks = [s.pk for s in made["stimulus"]]
    model("Assignment").objects.create(
        rater=rater, session=first, order_seed=1, order=pks[:8], position=8, state="finished"
    )
    model("Assignment").objects.create(
        rater=rater, session=second, order_seed=2, order=pks[8:], position=0, state="active"
    )
    # when
    migrate([("annotation", "0005_backfill_answered_before")])
    # then
    after = models_at(("annotation", "0005_backfill_answered_before"))("Assignment")
    assert after.objects.get(state="active").answered_before == 8
    assert after.objects.get(state="finished").answered_before == 0


def test_ratings_and_qualification_answers_become_answers_of_items(back_to):
    # given: at 0006, a session of two videos and a golden one, half rated, and a
    # qualification attempt of one video answered
    before = ("annotation", "0006_exclusions_on_record")
    back_to(before)
    model = models_at(before)
    study, dims, made = a_study(model, 2, golden=1, qualification=1, tutorial=1)
    (regular_a, regular_b), (golden,), (test_video,) = (
        made["stimulus"],
        made["golden"],
        made["qualification"],
    )
    session = model("Session").objects.create(study=study, index=1, seed=1)
    for stimulus, is_golden in ((regular_a, False), (regular_b, False), (golden, True)):
        model("SessionItem").objects.create(session=session, stimulus=stimulus, is_golden=is_golden)
    rater, participation = a_rater(model, study)
    participation.qualification_attempts = 1
    participation.qualification_set = {"attempt": 1, "items": [test_video.pk]}
    participation.save()
    assignment = model("Assignment").objects.create(
        rater=rater,
        session=session,
        order_seed=5,
        order=[regular_b.pk, golden.pk, regular_a.pk],
        position=1,
        golden_agreement_plcc=0.81,
    )
    rated = uuid.uuid4()
    received = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    scores = {"subject": 10.0, "completeness": 20.5, "interaction": 30.0}
    for dim in dims:
        model("Rating").objects.create(
            assignment=assignment,
            stimulus=regular_b,
            dimension=dim,
            score=scores[dim.key],
            client_uuid=rated,
            shown_at=received - dt.timedelta(seconds=9),
            watch_time_ms=4321,
            plays=2,
            stalls=1,
        )
    model("Rating").objects.filter(client_uuid=rated).update(received_at=received)
    tested = uuid.uuid4()
    for dim in dims:
        model("QualificationAnswer").objects.create(
            participation=participation,
            attempt=1,
            stimulus=test_video,
            dimension=dim,
            score=50.0,
            client_uuid=tested,
        )
    # when
    after = ("annotation", "0007_items_and_answers")
    migrate([after])
    model = models_at(after)
    # then: one item per answered video (not the tutorial's), named by the video's id
    items = {i.members.get().stimulus_id: i for i in model("Item").objects.all()}
    assert set(items) == {regular_a.pk, regular_b.pk, golden.pk, test_video.pk}
    assert {i.public_id for i in items.values()} == {
        s.public_id for s in (regular_a, regular_b, golden, test_video)
    }
    assert items[golden.pk].role == "golden" and items[test_video.pk].role == "qualification"
    # sessions, orders and qualification sets name items
    assert sorted(
        model("SessionItem").objects.values_list("item_id", "is_golden")
    ) == sorted([(items[regular_a.pk].pk, False), (items[regular_b.pk].pk, False),
                 (items[golden.pk].pk, True)])  # fmt: skip
    moved = model("Assignment").objects.get()
    assert moved.order == [items[s.pk].pk for s in (regular_b, golden, regular_a)]
    assert moved.golden_agreement == 0.81
    assert model("Participation").objects.get().qualification_set == {
        "attempt": 1,
        "items": [items[test_video.pk].pk],
    }
    # the session answer: its envelope keeps the telemetry, its digest is the services'
    answer = model("Answer").objects.get(client_uuid=rated)
    assert (answer.item_id, answer.assignment_id, answer.attempt) == (
        items[regular_b.pk].pk,
        moved.pk,
        None,
    )
    assert (answer.watch_time_ms, answer.plays, answer.stalls, answer.received_at) == (
        4321,
        2,
        1,
        received,
    )
    assert answer.shown_at == received - dt.timedelta(seconds=9)
    assert answer.layout == [str(regular_b.public_id)]
    assert answer.values_digest == values_digest({"scores": scores})
    assert {r.dimension_id: r.score for r in answer.ratings.all()} == {
        d.pk: scores[d.key] for d in dims
    }
    # the qualification answer: an answer with its attempt and its rating rows
    test_answer = model("Answer").objects.get(client_uuid=tested)
    assert (test_answer.attempt, test_answer.assignment_id, test_answer.participation_id) == (
        1,
        None,
        participation.pk,
    )
    assert sorted(test_answer.ratings.values_list("score", flat=True)) == [50.0, 50.0, 50.0]
    assert test_answer.values_digest == values_digest(
        {"scores": {"subject": 50.0, "completeness": 50.0, "interaction": 50.0}}
    )


def test_playback_reports_made_before_name_their_item_s_videos(back_to):
    # given: at 0025, a report of a skipped item of two videos, one with a file name
    before = ("annotation", "0025_study_idle_place_hours")
    back_to(before)
    model = models_at(before)
    study, _, made = a_study(model, 2)
    first, second = made["stimulus"]
    model("Stimulus").objects.filter(pk=first.pk).update(original_name="clip_a.mp4")
    item = model("Item").objects.create(study=study, role="stimulus")
    for slot, stimulus in enumerate((first, second)):
        model("ItemMember").objects.create(item=item, stimulus=stimulus, slot=slot)
    _, participation = a_rater(model, study)
    model("PlaybackReport").objects.create(participation=participation, item=item, attempt=1)
    # when
    after_name = ("annotation", "0026_playback_report_outlives_video")
    migrate([after_name])
    # then: named as playback_report_make names them (the file name, else the public id)
    report = models_at(after_name)("PlaybackReport").objects.get()
    second_id = model("Stimulus").objects.get(pk=second.pk).public_id
    assert report.videos == f"clip_a.mp4, {second_id}"
