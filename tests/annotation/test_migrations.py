"""Data migrations, run on rows the earlier schema held."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from annotation.models import Assignment
from tests.annotation.rater_fixtures import answer, onboard, rater_client, tiny_study

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("annotation", "0004_participation_qualification_set")]
AFTER = [("annotation", "0005_backfill_answered_before")]


def migrate(targets) -> None:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)


def test_open_sessions_get_the_answers_of_the_raters_earlier_sessions():
    # given: a rater who finished one session and started the next, before the count
    tiny = tiny_study(stimuli=12, rest_every=0)
    client, user = rater_client()
    onboard(client, tiny)
    golden = {str(s.public_id): v for s, v in zip(tiny.golden, (20.0, 80.0), strict=True)}
    for _ in range(8):  # the first session
        item = client.get(tiny.base + "next/").json()["item"]["id"]
        sent = client.post(
            tiny.base + "answers/", answer(item, golden.get(item, 45.0)), format="json"
        )
        assert sent.status_code == 201
    client.get(tiny.base + "next/")  # starts the second
    Assignment.objects.update(answered_before=0)
    try:
        migrate(BEFORE)
        # when
        migrate(AFTER)
        # then
        second = Assignment.objects.get(rater__user=user, state="active")
        assert second.answered_before == 8
        assert Assignment.objects.get(rater__user=user, state="finished").answered_before == 0
    finally:
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
