"""Adaptive collection in real Chromium: a rater rates a study whose best-known videos
have settled, and is never shown them; the admin's monitor shows the saving."""

import uuid

import pytest

from annotation.models import (
    AdaptiveSettings,
    Answer,
    Assignment,
    Dimension,
    ItemMember,
    Participation,
    Rating,
    Session,
    SettledStimulus,
    Stimulus,
    Study,
)
from annotation.services.adaptive import adaptive_review
from tests.annotation.rater_fixtures import TinyStudy
from tests.factories import RaterFactory, UserFactory
from tests.frontend.rater_browser import onboard, rate_until
from tests.frontend.test_monitor_browser import signed_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def kept_session(study: Study, videos: list[Stimulus], value: float) -> None:
    """Another rater's finished session that passed the golden gate: one answer to each
    video, `value` on every dimension."""
    rater = RaterFactory()
    participation = Participation.objects.create(
        rater=rater, study=study, qualification_state=Participation.Qualification.PASSED
    )
    items = [ItemMember.objects.get(stimulus=video).item for video in videos]
    assignment = Assignment.objects.create(
        rater=rater,
        session=Session.objects.get(study=study),
        order_seed=1,
        order=[item.pk for item in items],
        position=len(items),
        state=Assignment.State.FINISHED,
        eligible_for_next=True,
    )
    for item, video in zip(items, videos, strict=True):
        answer = Answer.objects.create(
            item=item,
            participation=participation,
            assignment=assignment,
            values_digest=uuid.uuid4().hex,
        )
        Rating.objects.bulk_create(
            Rating(answer=answer, stimulus=video, dimension=dimension, score=value)
            for dimension in Dimension.objects.filter(study=study)
        )


def settled_study(rater_study) -> tuple[TinyStudy, list[Stimulus]]:
    """The tiny study (6 videos, 2 golden, one session) with adaptive collection on at
    +-40 (a cap of 40, against a fixed design of 35), and two videos with 5 kept ratings
    each: the review settles them."""
    tiny = rater_study(rest_every=0)
    AdaptiveSettings.objects.create(
        study=tiny.study, enabled=True, plan="anytime", target_half_width=40.0,
        min_ratings=5, max_ratings=40, fixed_ratings=35,
    )  # fmt: skip
    videos = list(Stimulus.objects.filter(study=tiny.study, role=Stimulus.Role.STIMULUS))
    for _ in range(5):
        kept_session(tiny.study, videos[:2], 50.0)
    adaptive_review(study=tiny.study)
    assert set(SettledStimulus.objects.values_list("stimulus_id", flat=True)) == {
        v.pk for v in videos[:2]
    }
    return tiny, videos


def test_a_rater_in_chromium_is_never_shown_a_settled_video(page, live_server, rater_study):
    # given
    tiny, videos = settled_study(rater_study)
    # when: a rater qualifies and rates their whole session in the browser
    onboard(page, live_server, tiny)
    golden = {str(s.public_id): v for s, v in zip(tiny.golden, (20.0, 80.0), strict=True)}
    shown = rate_until(page, lambda item: golden.get(item, 55.0), "finished")
    # then: the open videos and the golden ones, never a settled one
    open_and_golden = [str(v.public_id) for v in videos[2:] + tiny.golden]
    assert sorted(shown) == sorted(open_and_golden)
    assert not {str(v.public_id) for v in videos[:2]} & set(shown)
    # and the finished session's ratings count: the review it sent (on commit) has read
    # them, one rating for each open video
    settings = AdaptiveSettings.objects.get(study=tiny.study)
    assert settings.reviewed_at is not None
    assert settings.review["open_rated"] == 4


def test_the_monitor_shows_the_saving(live_server, context, page, rater_study):
    # given
    tiny, _ = settled_study(rater_study)
    signed_in(context, live_server, UserFactory(is_staff=True))
    # when
    page.goto(f"{live_server.url}/studies/{tiny.study.slug}/monitor/")
    # then: 2 settled videos took 10 ratings where the fixed design spends 2 x 35
    verdict = page.locator("#adaptive-verdict")
    verdict.filter(has_text="saving").wait_for()
    assert verdict.get_attribute("data-verdict") == "saving"
    assert verdict.inner_text() == (
        "Adaptive collection is saving: 2 settled videos took 10 kept ratings where the "
        "fixed design spends 70 (35 each), 60 fewer (86% of those); so far that is 29% of "
        "the 210 the fixed design spends on the study."
    )
    figures = page.locator("#adaptive-figures").inner_text()
    assert "2 of 6" in figures
    assert "210 (6 videos × 35)" in figures  # the fixed design's, not the cap's
    # the tiny study's sessions are short: the monitor says what that costs
    assert f"{tiny.study.session_size} videos each: sessions this short" in figures
