"""The side-by-side preference design (WYD): its items, balanced sessions, per-rater
counterbalanced sides, a blind payload, its golden gate and its import rows."""

from collections import Counter

import pytest
from django.core.exceptions import ValidationError

from annotation.designs import DESIGNS
from annotation.designs.preference import build_items
from annotation.designs.preference_questions import WYD_QUESTIONS
from annotation.errors import ImportFailed, ValidationFailed
from annotation.models import (
    Assignment,
    Dimension,
    Item,
    ItemMember,
    PreferenceJudgment,
    PreferenceSettings,
    Session,
    Stimulus,
)
from annotation.models.preference import parse_condition_pairs
from annotation.services.studies import study_build_sessions
from annotation.services.study_import import study_import_manifest
from tests.annotation.design_fixtures import CONDITIONS, Answerer, tiny_preference_study
from tests.annotation.rater_fixtures import consent_and_tutorial, rater_client
from tests.factories import StimulusFactory, make_study
from tests.videos import write_video

pytestmark = pytest.mark.django_db


def qualified(client, tiny):
    answerer = Answerer("preference")
    consent_and_tutorial(client, tiny)
    while (body := client.get(tiny.base + "next/").json())["step"] == "qualification":
        client.post(tiny.base + "answers/", answerer.answer(body["item"]), format="json")
    return answerer


def test_items_are_every_pair_of_conditions_on_every_shared_content():
    # given: three conditions on two contents, one of them missing model-c on a third
    tiny = tiny_preference_study(contents=2)
    study = tiny.study
    StimulusFactory(study=study, condition="model-a", content="c-extra")
    StimulusFactory(study=study, condition="model-b", content="c-extra")
    # when: built again (the fixture built them once)
    made = build_items(study=study)
    # then: only the new content's one pair is new, and every pair is of two conditions
    assert made == 1
    regular = Item.objects.filter(study=study, role="stimulus")
    pairs = Counter(
        tuple(sorted(m.stimulus.condition for m in item.members.all())) for item in regular
    )
    assert pairs == {
        ("model-a", "model-b"): 3,
        ("model-a", "model-c"): 2,
        ("model-b", "model-c"): 2,
    }
    assert {item.content for item in regular} == {"c0", "c1", "c-extra"}
    golden = Item.objects.filter(study=study, role="golden")
    assert golden.count() == 2
    assert {tuple(sorted(m.expected for m in item.members.all())) for item in golden} == {
        ("best", "worst")
    }


def test_a_reference_is_shown_in_the_middle_of_the_questions_about_one():
    # given: a study asking WYD's motion question, with a reference video per content
    study = make_study(design="preference", dimensions=[WYD_QUESTIONS[1]], golden_per_session=0)
    for condition in CONDITIONS[:2]:
        StimulusFactory(study=study, condition=condition, content="walk")
    reference = StimulusFactory(study=study, role=Stimulus.Role.REFERENCE, content="walk")
    # when
    build_items(study=study)
    # then
    (item,) = Item.objects.filter(study=study)
    parts = [(m.slot, m.part, m.stimulus_id) for m in item.members.order_by("slot")]
    assert parts[2] == (2, "reference", reference.pk)
    layout = DESIGNS["preference"].layout(item=item, seed=1)
    payload = DESIGNS["preference"].item_payload(item=item, layout=layout)
    assert payload["reference"]["id"] == str(reference.public_id)
    assert payload["question"]["text"].startswith("Choose the video that you think best matches")


def test_sessions_hold_the_same_number_of_judgments_of_every_pair():
    # given: four contents, two judgments per pair per session
    tiny = tiny_preference_study(contents=4)
    study = tiny.study
    study.preference.judgments_per_pair = 2
    study.preference.save()
    Session.objects.filter(study=study).delete()
    from annotation.services.studies import study_build_sessions

    # when
    sessions = study_build_sessions(study=study)
    # then: 2 sessions, each with 2 items of each of the 3 pairs (and the golden pairs)
    assert len(sessions) == 2
    for session in sessions:
        regular = Item.objects.filter(session_items__session=session, role="stimulus")
        pairs = Counter(
            tuple(sorted(m.stimulus.condition for m in item.members.all())) for item in regular
        )
        assert sorted(pairs.values()) == [2, 2, 2]
        assert session.items.filter(is_golden=True).count() == 2


def test_sides_alternate_within_each_pair_and_the_payload_is_blind():
    # given: two raters in the same session of four contents per pair
    tiny = tiny_preference_study(contents=4)
    seen = {}
    for rater in range(2):
        client, user = rater_client()
        qualified(client, tiny)
        body = client.get(tiny.base + "next/").json()
        assignment = Assignment.objects.get(rater__user=user)
        seen[rater] = assignment
        # then: nothing in the payload names a condition, a role or an expectation
        text = str(body["item"])
        for secret in (*CONDITIONS, "golden", "best", "worst", "expected"):
            assert secret not in text
    for assignment in seen.values():
        items = Item.objects.filter(pk__in=assignment.order, role="stimulus")
        lefts = Counter()
        for item in items:
            left, right = DESIGNS["preference"].layout(item=item, seed=assignment.order_seed)
            pair = tuple(sorted((left.condition, right.condition)))
            lefts[(pair, left.condition == pair[0])] += 1
        # each pair's 4 items: 2 with its first condition on the left, 2 on the right
        assert set(lefts.values()) == {2} and len(lefts) == 6


def test_the_answer_stores_the_sides_the_rater_saw():
    # given
    tiny = tiny_preference_study()
    client, _ = rater_client()
    answerer = qualified(client, tiny)
    item = client.get(tiny.base + "next/").json()["item"]
    # when
    sent = client.post(tiny.base + "answers/", answerer.answer(item), format="json")
    # then
    assert sent.status_code == 201
    judgment = PreferenceJudgment.objects.get(answer__item__public_id=item["id"])
    assert (str(judgment.left.public_id), str(judgment.right.public_id)) == (
        item["left"]["id"],
        item["right"]["id"],
    )
    assert judgment.answer.layout == [item["left"]["id"], item["right"]["id"]]
    assert judgment.dimension.key == "video_quality"


@pytest.mark.parametrize("choice", ["better", "", None, 1, ["left"]])
def test_a_choice_that_is_not_left_right_or_equal_is_refused(choice):
    tiny = tiny_preference_study()
    client, _ = rater_client()
    answerer = qualified(client, tiny)
    item = client.get(tiny.base + "next/").json()["item"]
    response = client.post(
        tiny.base + "answers/", {**answerer.answer(item), "choice": choice}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["detail"] == "'choice' must be one of left, right, equal"
    assert not PreferenceJudgment.objects.filter(answer__assignment__isnull=False).exists()


def test_the_golden_gate_is_the_share_of_golden_pairs_right():
    # given: a rater who gets one of the two golden pairs of their session wrong
    tiny = tiny_preference_study()
    client, user = rater_client()
    answerer = qualified(client, tiny)
    golden_seen = 0
    while (body := client.get(tiny.base + "next/").json())["step"] == "rating" and body["item"]:
        item = body["item"]
        is_golden = ItemMember.objects.filter(item__public_id=item["id"], expected="best").exists()
        right = not (is_golden and golden_seen == 0)
        golden_seen += is_golden
        client.post(tiny.base + "answers/", answerer.answer(item, right=right), format="json")
    # then: 1 of 2 right is below WYD's 0.8
    assignment = Assignment.objects.get(rater__user=user)
    assert (assignment.golden_agreement, assignment.eligible_for_next) == (0.5, False)


def write_manifest(tmp_path, rows: list[str]):
    clip = tmp_path / "a.mp4"
    for i, _ in enumerate(rows):
        write_video(tmp_path / f"v{i}.mp4", f"video {i}")
    del clip
    path = tmp_path / "manifest.csv"
    path.write_text("path,role,condition,content,expected\n" + "\n".join(rows) + "\n")
    return path


def test_an_import_names_each_row_a_preference_study_cannot_use(tmp_path):
    # given
    study = make_study(design="preference")
    manifest = write_manifest(
        tmp_path,
        [
            "v0.mp4,stimulus,model-a,c1,",
            "v1.mp4,stimulus,,c1,",
            "v2.mp4,golden,,g1,best",
            "v3.mp4,golden,,g1,",
            "v4.mp4,reference,,,",
            "v5.mp4,qualification,,q1,good",
        ],
    )
    # when
    with pytest.raises(ImportFailed) as refused:
        study_import_manifest(study=study, manifest=manifest)
    # then
    assert refused.value.errors == [
        (3, "a stimulus row of a preference study needs: condition"),
        (5, "a golden row of a preference study needs: expected"),
        (6, "a reference row of a preference study needs: content"),
        (7, "expected must be 'best' or 'worst', got 'good'"),
    ]
    assert not Stimulus.objects.filter(study=study).exists()


def test_an_import_refuses_contents_no_item_can_be_made_of(tmp_path):
    # given: a model twice for one content, a golden pair with two best videos, a
    # qualification content with a worst video only, two references of one content
    study = make_study(design="preference")
    manifest = write_manifest(
        tmp_path,
        [
            "v0.mp4,stimulus,model-a,c1,",
            "v1.mp4,stimulus,model-b,c1,",
            "v2.mp4,stimulus,model-a,c1,",
            "v3.mp4,golden,,g1,best",
            "v4.mp4,golden,,g1,best",
            "v5.mp4,qualification,,q1,worst",
            "v6.mp4,reference,,c1,",
            "v7.mp4,reference,,c1,",
        ],
    )
    # when
    with pytest.raises(ImportFailed) as refused:
        study_import_manifest(study=study, manifest=manifest)
    # then: each named by its line, and nothing imported
    pair = "(one best and one worst make its pair)"
    assert sorted(refused.value.errors) == [
        (4, "stimulus content 'c1' has 'model-a' twice (also line 2)"),
        (5, f"golden content 'g1' has no 'worst' video {pair}"),
        (6, f"golden content 'g1' has 2 'best' videos {pair}"),
        (7, f"qualification content 'q1' has no 'best' video {pair}"),
        (9, "reference content 'c1' has 2 videos, one is its reference"),
    ]
    assert not Stimulus.objects.filter(study=study).exists()


def test_a_second_import_is_checked_with_the_videos_the_study_has(tmp_path):
    # given: a study with a content of two models and a complete golden pair
    study = make_study(design="preference")
    first = write_manifest(
        tmp_path,
        ["v0.mp4,stimulus,model-a,c1,", "v1.mp4,stimulus,model-b,c1,",
         "v2.mp4,golden,,g1,best", "v3.mp4,golden,,g1,worst"],
    )  # fmt: skip
    study_import_manifest(study=study, manifest=first)
    (tmp_path / "later").mkdir()
    for name in ("w0", "w1", "w2"):
        write_video(tmp_path / "later" / f"{name}.mp4", f"another {name}")
    later = tmp_path / "later" / "manifest.csv"
    later.write_text(
        "path,role,condition,content,expected\nw0.mp4,stimulus,model-c,c1,\n"
        "w1.mp4,stimulus,model-a,c1,\nw2.mp4,golden,,g1,worst\n"
    )
    # when
    with pytest.raises(ImportFailed) as refused:
        study_import_manifest(study=study, manifest=later)
    # then: a third model is welcome; the first model again and a second worst are not
    pair = "(one best and one worst make its pair)"
    assert sorted(refused.value.errors) == [
        (3, "stimulus content 'c1' has 'model-a' twice (also a video imported before)"),
        (4, f"golden content 'g1' has 2 'worst' videos {pair}"),
        (4, "golden content 'g1' has 3 videos, at most 2 make its pair"),
    ]
    assert Stimulus.objects.filter(study=study).count() == 4


def test_a_new_preference_study_asks_wyds_video_quality_question():
    study = make_study(design="preference")
    (question,) = Dimension.objects.filter(study=study)
    assert (question.key, question.shows_reference) == ("video_quality", False)
    assert question.help_text.startswith("Choose the video that you think is of highest quality")


# --- the condition pairs an admin lists ---------------------------------------------


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("model-a, model-a", "'model-a' is compared with itself"),
        ("model-a, model-b\nmodel-b, model-a", "line 2: the pair model-b, model-a is listed twice"),
        ("model-a, model-b, model-c", "line 1 ('model-a, model-b, model-c'): write two"),
        ("model-a", "line 1 ('model-a'): write two conditions"),
        ("model-a, model-b\nmodel-a, model-x", "line 2: no video has the condition(s) model-x; "
         "the study's conditions: model-a, model-b, model-c"),
    ],
)  # fmt: skip
def test_listed_pairs_that_compare_nothing_are_refused_by_the_form_and_the_build(text, says):
    # given: a study with its videos and sessions
    tiny = tiny_preference_study()
    sessions = Session.objects.filter(study=tiny.study).count()
    preference = PreferenceSettings.objects.get(study=tiny.study)
    preference.condition_pairs = text
    # when / then: the admin form's validation names the line
    with pytest.raises(ValidationError) as refused:
        preference.full_clean()
    assert says in " ".join(refused.value.message_dict["condition_pairs"])
    # and a build on settings saved anyway (the shell, an older row) is refused alike,
    # where before it crashed on the database (a, a) or built nothing, silently (a typo)
    preference.save()
    StimulusFactory(study=tiny.study, condition="model-c", content="c9")
    with pytest.raises(ValidationFailed, match="condition pairs") as built:
        study_build_sessions(study=tiny.study)
    assert says in built.value.message
    assert Session.objects.filter(study=tiny.study).count() == sessions


def test_listed_pairs_may_name_conditions_with_spaces_and_precede_the_videos():
    # given: a study with no videos yet: any names pass, since the videos may come after
    study = make_study(design="preference")
    preference = PreferenceSettings.objects.create(
        study=study, condition_pairs="Model A, Model B\n\n"
    )
    preference.full_clean()
    # then: a name with a space is one condition (before, the line was split in four
    # and dropped without a word)
    assert parse_condition_pairs(preference.condition_pairs) == ([("Model A", "Model B")], [])


def test_a_raters_test_is_built_although_the_pairs_are_wrong(caplog):
    # given: a study whose listed pairs name a condition no video has
    tiny = tiny_preference_study()
    Item.objects.filter(study=tiny.study, role=Item.Role.QUALIFICATION).delete()
    PreferenceSettings.objects.filter(study=tiny.study).update(condition_pairs="model-a, zzz")
    client, _ = rater_client()
    consent_and_tutorial(client, tiny)
    # when: a rater starts the qualification test
    state = client.get(tiny.base + "next/").json()
    # then: the test's pairs are there (the sessions are the admin's to mend)
    assert state["item"] is not None
    assert Item.objects.filter(study=tiny.study, role=Item.Role.QUALIFICATION).exists()
    assert "items not built" in caplog.text
