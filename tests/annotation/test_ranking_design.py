"""The ranking design (PROTOCOL.md 3.3, VGA-Bench): items of N videos for one prompt, a
per-rater order stored with the answer, rankings checked whole, ties only where allowed,
and the golden gate on the clearly best above the clearly worst."""

import pytest

from annotation.designs.ranking import VGA_CRITERIA, build_items, settings_of
from annotation.models import Answer, Assignment, Item, RankingPlacement
from tests.annotation.design_fixtures import Answerer, tiny_ranking_study
from tests.annotation.rater_fixtures import consent_and_tutorial, rater_client
from tests.factories import StimulusFactory

pytestmark = pytest.mark.django_db


def qualified(tiny):
    client, user = rater_client()
    answerer = Answerer("ranking")
    consent_and_tutorial(client, tiny)
    while (body := client.get(tiny.base + "next/").json())["step"] == "qualification":
        sent = client.post(tiny.base + "answers/", answerer.answer(body["item"]), format="json")
        assert sent.status_code == 201
    return client, user, answerer


def test_items_are_a_prompts_videos_per_criterion_with_the_vga_bench_wording():
    tiny = tiny_ranking_study(contents=2)
    questions = list(tiny.study.dimensions.order_by("order").values_list("key", "help_text"))
    assert questions == [(key, text) for key, _, text, _ in VGA_CRITERIA]
    regular = Item.objects.filter(study=tiny.study, role=Item.Role.STIMULUS)
    assert regular.count() == 2 * 2  # two prompts x two criteria
    assert {item.members.count() for item in regular} == {3}
    assert {(i.content, i.dimension.key) for i in regular} == {
        (p, q) for p in ("p0", "p1") for q in ("aesthetics", "text_consistency")
    }


def test_a_golden_item_with_fewer_videos_than_the_items_is_named_in_the_log(caplog):
    # given: items of 3 videos; golden contents of 3 and of 2 videos
    tiny = tiny_ranking_study(contents=1)
    for expected in ("best", "worst"):
        StimulusFactory(study=tiny.study, role="golden", content="short", expected=expected)
    # when
    with caplog.at_level("WARNING", logger="annotation.designs.ranking"):
        build_items(study=tiny.study)
    # then: the one that stands out is named, the others are not
    warned = [r.getMessage() for r in caplog.records if "raters can tell" in r.getMessage()]
    assert len(warned) == 1
    assert warned[0].startswith("golden content short of") and "2 videos" in warned[0]


def test_the_page_gets_the_videos_in_the_raters_order_and_nothing_that_tells_them_apart():
    tiny = tiny_ranking_study()
    client, user, _ = qualified(tiny)
    body = client.get(tiny.base + "next/").json()
    item = body["item"]
    assert set(item) == {"id", "question", "prompt", "media"}
    assert all(
        set(m) == {"id", "video_url", "poster_url", "width", "height"} for m in item["media"]
    )
    assert body["window"][0] == item
    # the order is the rater's own and the same on every request
    assert client.get(tiny.base + "next/").json()["item"] == item


def test_a_ranking_is_stored_place_by_place_with_the_layout():
    tiny = tiny_ranking_study()
    client, user, answerer = qualified(tiny)
    item = client.get(tiny.base + "next/").json()["item"]
    shown = [media["id"] for media in item["media"]]
    ranking = [shown[2], shown[0], shown[1]]
    # when
    sent = client.post(
        tiny.base + "answers/",
        {**answerer.answer(item), "ranking": ranking, "played": shown},
        format="json",
    )
    # then
    assert sent.status_code == 201
    answer = Answer.objects.get(item__public_id=item["id"], assignment__isnull=False)
    assert answer.layout == shown
    placements = RankingPlacement.objects.filter(answer=answer).order_by("rank")
    assert [(str(p.stimulus.public_id), p.rank, p.slot) for p in placements] == [
        (shown[2], 1, 2),
        (shown[0], 2, 0),
        (shown[1], 3, 1),
    ]


@pytest.mark.parametrize(
    ("make", "detail"),
    [
        (lambda s: {"ranking": s[:2], "played": s}, "'ranking' leaves 1 video(s) out"),
        (lambda s: {"ranking": [s[0], s[0], s[1]], "played": s}, "places a video more than once"),
        (lambda s: {"ranking": [*s[:2], "nope"], "played": s}, "does not show"),
        (lambda s: {"ranking": s, "played": s[:1]}, "2 video(s) not played yet"),
        (lambda s: {"ranking": [[s[0], s[1]], s[2]], "played": s}, "no tied places"),
        (lambda s: {"ranking": "a>b>c", "played": s}, "'ranking' must list the places"),
        (lambda s: {"ranking": [[], *s], "played": s}, "'ranking' must list the places"),
        (lambda s: {"ranking": s, "played": "all"}, "'played' must list"),
    ],
)
def test_a_ranking_that_is_not_whole_is_refused_and_nothing_is_stored(make, detail):
    tiny = tiny_ranking_study()
    client, _, answerer = qualified(tiny)
    item = client.get(tiny.base + "next/").json()["item"]
    shown = [media["id"] for media in item["media"]]
    # when
    sent = client.post(
        tiny.base + "answers/", {**answerer.answer(item), **make(shown)}, format="json"
    )
    # then
    assert sent.status_code == 400 and sent.json()["error"] == "invalid"
    assert detail in sent.json()["detail"]
    assert not RankingPlacement.objects.filter(answer__assignment__isnull=False).exists()


def test_ties_share_a_place_where_the_study_allows_them():
    tiny = tiny_ranking_study()
    ranking = settings_of(tiny.study)
    ranking.ties_allowed = True
    ranking.save()
    client, _, answerer = qualified(tiny)
    state = client.get(tiny.base + "state/").json()
    assert state["ties_allowed"] is True
    item = client.get(tiny.base + "next/").json()["item"]
    shown = [media["id"] for media in item["media"]]
    sent = client.post(
        tiny.base + "answers/",
        {**answerer.answer(item), "ranking": [[shown[1], shown[2]], shown[0]], "played": shown},
        format="json",
    )
    assert sent.status_code == 201
    ranks = dict(
        RankingPlacement.objects.filter(answer__item__public_id=item["id"]).values_list(
            "stimulus__public_id", "rank"
        )
    )
    assert sorted(ranks.values()) == [1, 1, 3]


@pytest.mark.parametrize(("right", "eligible"), [(True, True), (False, False)])
def test_the_golden_gate_is_the_best_above_the_worst(right, eligible):
    tiny = tiny_ranking_study()
    client, user, answerer = qualified(tiny)
    golden = {str(i.public_id) for i in Item.objects.filter(role=Item.Role.GOLDEN)}
    # when: the whole session, golden items right or reversed
    while (body := client.get(tiny.base + "next/").json())["step"] == "rating" and body["item"]:
        values = answerer.answer(body["item"], right=right or body["item"]["id"] not in golden)
        assert client.post(tiny.base + "answers/", values, format="json").status_code == 201
    # then
    assignment = Assignment.objects.get(rater__user=user)
    assert assignment.state == Assignment.State.FINISHED
    assert assignment.golden_agreement == (1.0 if right else 0.0)
    assert assignment.eligible_for_next is eligible


def test_an_import_refuses_a_model_twice_for_one_prompt(tmp_path):
    from annotation.errors import ImportFailed
    from annotation.models import Stimulus
    from annotation.services.study_import import study_import_manifest
    from tests.annotation.test_preference_design import write_manifest
    from tests.factories import make_study

    # given: a prompt whose fourth video is the first model again, and a golden prompt
    # of four videos (the sharp one best, the blurred one worst)
    study = make_study(design="ranking")
    manifest = write_manifest(
        tmp_path,
        ["v0.mp4,stimulus,mA,p1,", "v1.mp4,stimulus,mB,p1,", "v2.mp4,stimulus,mC,p1,",
         "v3.mp4,stimulus,mA,p1,", "v4.mp4,golden,,g1,best", "v5.mp4,golden,,g1,",
         "v6.mp4,golden,,g1,", "v7.mp4,golden,,g1,worst"],
    )  # fmt: skip
    # when
    with pytest.raises(ImportFailed) as refused:
        study_import_manifest(study=study, manifest=manifest)
    # then: its ranking would name the model twice; the golden prompt is fine
    assert refused.value.errors == [(5, "stimulus content 'p1' has 'mA' twice (also line 2)")]
    assert not Stimulus.objects.filter(study=study).exists()


def test_an_import_refuses_names_a_ranking_cannot_be_written_with(tmp_path):
    from annotation.errors import ImportFailed
    from annotation.models import Stimulus
    from annotation.services.study_import import study_import_manifest
    from tests.annotation.test_preference_design import write_manifest
    from tests.factories import make_study

    # given: conditions holding the rankings' separators, and a prompt named as the pooled
    # ranking (before, imported: 'm=1' came back from the run as two tied conditions)
    study = make_study(design="ranking")
    manifest = write_manifest(
        tmp_path,
        ["v0.mp4,stimulus,m=1,p1,", "v1.mp4,stimulus,a>b,p1,", "v2.mp4,stimulus,mC,p1,",
         "v3.mp4,stimulus,mA,*,", "v4.mp4,stimulus,mB,*,"],
    )  # fmt: skip
    # when
    with pytest.raises(ImportFailed) as refused:
        study_import_manifest(study=study, manifest=manifest)
    # then: each named by its line, and nothing imported
    assert refused.value.errors == [
        (2, "condition 'm=1' holds '=', which a ranking writes within a tie (a>b=c): rename it"),
        (3, "condition 'a>b' holds '>', which a ranking writes between places (a>b=c): rename it"),
        (5, "content '*' is the name of the pooled ranking in the results: rename it"),
        (6, "content '*' is the name of the pooled ranking in the results: rename it"),
    ]
    assert not Stimulus.objects.filter(study=study).exists()
