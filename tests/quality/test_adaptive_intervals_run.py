"""The analysis run of a study that collects adaptively states how sure it is of each
video: the study's plan interval on the scores the run counts, in arrival order, the
same as the pure plan gives; excluded raters' scores left out; shown on the results
page."""

import pytest
from django.test import Client

from annotation.services.adaptive import adaptive_review
from quality.stats.adaptive.two_stage import TwoStagePlan
from tests.annotation.rater_fixtures import tiny_study
from tests.annotation.test_adaptive_collection import adaptive, rated, scores_of, videos
from tests.factories import UserFactory
from tests.quality.rated import run_now

pytestmark = pytest.mark.django_db


def test_the_run_states_each_videos_interval_as_the_plan_gives_it():
    # given: Stein's plan with a first stage of 3; one video the raters agree on, one
    # they split on, one short of the first stage; and an excluded rater's 0 on the first
    tiny = tiny_study()
    adaptive(tiny, plan="two_stage", min_ratings=3, target_half_width=10.0)
    agreed, split, few = videos(tiny)[:3]
    values = {agreed: [50.0, 55.0, 60.0, 52.0, 58.0], split: [10.0, 90.0, 30.0, 70.0],
              few: [40.0, 41.0]}  # fmt: skip
    rated(tiny.study, values)
    rated(tiny.study, {agreed: [0.0]}, excluded_rater=True)
    adaptive_review(study=tiny.study)
    # when
    run = run_now(tiny.study)
    # then: per video and dimension, the pure plan's interval on the counted scores
    found = run.summary["adaptive"]
    plan = TwoStagePlan(first_stage=3)
    keys = list(tiny.study.dimensions.order_by("order").values_list("key", flat=True))
    expected = []
    for video, scores in values.items():
        for d, key in enumerate(keys):
            interval = plan.interval(plan.replay(scores=[scores_of(v)[d] for v in scores]))
            expected.append([video.pk, key, interval.n, interval.mean, interval.lower,
                             interval.upper])  # fmt: skip
    got = sorted(found["rows"], key=lambda row: (row[0], keys.index(row[1])))
    expected.sort(key=lambda row: (row[0], keys.index(row[1])))
    assert [row[:3] for row in got] == [row[:3] for row in expected]
    for ours, theirs in zip(got, expected, strict=True):
        assert ours[3:] == pytest.approx(theirs[3:], abs=1e-3)
    # and the counts: the agreed video within +-10, the one settled live among them
    assert (found["plan"], found["videos"], found["within_target"]) == ("two_stage", 3, 1)
    assert found["settled"] == 1
    assert found["widest"][0]["video_id"] in (split.pk, few.pk)
    # and the results page shows it
    client = Client()
    client.force_login(UserFactory(is_staff=True))
    page = client.get(f"/studies/{tiny.study.slug}/results/").content.decode()
    assert "How sure the run is of each video" in page
    assert "1 of 3 rated videos are within the target" in page


def test_a_study_without_adaptive_collection_has_no_intervals():
    tiny = tiny_study()
    rated(tiny.study, {videos(tiny)[0]: [50.0, 60.0]})
    assert "adaptive" not in run_now(tiny.study).summary


def test_the_intervals_count_only_what_arrived_by_the_run_s_start():
    # given: two videos rated twice; then one more rating of the first, and a settling
    # of the second, both arriving after the run started (the run reads what it had)
    from datetime import timedelta

    from django.utils import timezone

    from annotation.models import Answer, SettledStimulus

    tiny = tiny_study()
    adaptive(tiny, plan="two_stage", min_ratings=2, target_half_width=30.0)
    first, second = videos(tiny)[:2]
    rated(tiny.study, {first: [40.0, 60.0], second: [50.0, 52.0]})
    rated(tiny.study, {first: [90.0]})
    later = timezone.now() + timedelta(hours=1)
    last = Answer.objects.filter(item__members__stimulus=first).order_by("-pk").first()
    Answer.objects.filter(pk=last.pk).update(received_at=later)
    adaptive_review(study=tiny.study)
    SettledStimulus.objects.update(settled_at=later)
    # when
    found = run_now(tiny.study).summary["adaptive"]
    # then: the first video's intervals are on its two ratings received by then, and
    # nothing had settled yet (before: three ratings, and every video settled since)
    assert {row[2] for row in found["rows"] if row[0] == first.pk} == {2}
    assert found["settled"] == 0 and SettledStimulus.objects.exists()
