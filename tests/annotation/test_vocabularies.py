"""Action vocabularies of propose-then-verify studies: the shipped AVA list, files,
applying them to a study, and the command."""

import json
from collections import Counter

import pytest
from django.core.management import CommandError, call_command

from annotation.errors import Conflict
from annotation.models import Action, ActionGroup
from annotation.services.vocabularies import (
    VocabularyError,
    read_vocabulary,
    template_path,
    vocabulary_apply,
    vocabulary_from,
)
from tests.annotation.design_fixtures import SMALL_VOCABULARY, tiny_propose_study
from tests.factories import make_study

pytestmark = pytest.mark.django_db


def test_the_ava_vocabulary_has_its_80_classes_in_their_groups_with_avas_ids():
    ava = read_vocabulary(template_path("ava"))
    assert Counter(group for _, group, _ in ava.actions) == {"pose": 14, "object": 49, "person": 17}
    assert sorted(action_id for action_id, _, _ in ava.actions) == list(range(1, 81))
    names = {action_id: name for action_id, _, name in ava.actions}
    assert (names[12], names[17], names[80]) == (
        "stand",
        "carry/hold (an object)",
        "watch (a person)",
    )
    assert [(g.key, g.limit, g.required) for g in ava.groups] == [
        ("pose", 1, True), ("object", 3, False), ("person", 3, False)
    ]  # fmt: skip
    assert "CC BY 4.0" in ava.source


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["actions"].append({"id": 11, "group": "pose", "name": "again"}),
         "id 11 is given twice"),
        (lambda d: d["actions"].append({"id": 90, "group": "dance", "name": "x"}),
         "group 'dance' is not a group"),
        (lambda d: d["actions"].append({"id": 94, "group": {"a": 1}, "name": "x"}),
         "action 94: 'group' must name a group, not a mapping"),
        (lambda d: d["groups"][0].update(limit=0), "limit must be a whole number >= 1"),
        (lambda d: d["actions"].append({"id": 91, "group": "pose", "name": ""}), "needs a name"),
        # before: cut short without a word
        (lambda d: d["actions"].append({"id": 92, "group": "pose", "name": "n" * 121}),
         "action 92: its name is longer than 120 characters"),
        (lambda d: d["groups"][0].update(label="L" * 81), "its label is longer than 80"),
        # before: accepted, and every proposal was then refused for want of a pose
        (lambda d: d.update(actions=[a for a in d["actions"] if a["group"] != "pose"]),
         "group 'pose' is required but has no actions"),
        (lambda d: d["actions"].append({"id": 93, "group": "pose", "name": "Sit"}),
         "action 93: 'Sit' is in group 'pose' twice"),
    ],
)  # fmt: skip
def test_a_bad_vocabulary_is_refused_saying_where(change, message):
    data = json.loads(json.dumps(SMALL_VOCABULARY))
    change(data)
    with pytest.raises(VocabularyError, match=message):
        vocabulary_from(data)


def fresh_study():
    from tests.annotation.design_fixtures import running_study

    return running_study(design="propose_verify")


def test_a_json_vocabulary_applies_and_replaces_the_studys(tmp_path):
    study = fresh_study()
    vocabulary_apply(study=study, vocabulary=vocabulary_from(SMALL_VOCABULARY))
    path = tmp_path / "mine.json"
    data = {"groups": [{"key": "pose", "limit": 1, "required": True}],
            "actions": [{"id": 1, "group": "pose", "name": "stand"}]}  # fmt: skip
    path.write_text(json.dumps(data))
    assert vocabulary_apply(study=study, vocabulary=read_vocabulary(path)) == 1
    names = Action.objects.filter(group__study=study).values_list("name", flat=True)
    assert list(names) == ["stand"]
    assert ActionGroup.objects.filter(study=study).count() == 1


def test_a_vocabulary_is_refused_once_the_study_has_answers_and_for_other_designs():
    from tests.annotation.design_fixtures import Answerer
    from tests.annotation.rater_fixtures import rater_client
    from tests.annotation.test_journey import take_test_and_session

    tiny = tiny_propose_study()
    client, _ = rater_client()
    take_test_and_session(client, tiny, Answerer("propose_verify"), golden_right=True)
    with pytest.raises(Conflict, match="has answers"):
        vocabulary_apply(study=tiny.study, vocabulary=vocabulary_from(SMALL_VOCABULARY))
    with pytest.raises(Conflict, match="only propose-then-verify studies"):
        vocabulary_apply(study=make_study(), vocabulary=vocabulary_from(SMALL_VOCABULARY))


def test_a_vocabulary_comes_before_the_sessions():
    tiny = tiny_propose_study(stimuli=0)  # its golden segments are built
    with pytest.raises(Conflict, match="import the vocabulary before building sessions"):
        vocabulary_apply(study=tiny.study, vocabulary=vocabulary_from(SMALL_VOCABULARY))


def test_the_command_applies_the_shipped_ava_list_and_fails_clearly(capsys):
    study = fresh_study()
    call_command("import_vocabulary", study.slug, "ava")
    assert Action.objects.filter(group__study=study).count() == 80
    assert "80 actions from AVA" in capsys.readouterr().out
    with pytest.raises(CommandError, match="no study 'nope'"):
        call_command("import_vocabulary", "nope", "ava")
    with pytest.raises(
        CommandError, match=r"no file 'avaa', and no shipped template of that name \(ava\)"
    ):
        call_command("import_vocabulary", study.slug, "avaa")
    with pytest.raises(CommandError, match="is a slider study"):
        call_command("import_vocabulary", make_study().slug, "ava")
    with pytest.raises(CommandError, match="no file .missing.yaml., and no shipped template"):
        call_command("import_vocabulary", study.slug, "missing.yaml")


def test_a_vocabulary_lacking_an_action_the_experts_named_is_refused():
    # given: a study with its vocabulary and a golden segment the experts labelled
    from annotation.models import Dimension, ExpertLabel, Stimulus
    from tests.factories import StimulusFactory

    study = fresh_study()
    vocabulary_apply(study=study, vocabulary=vocabulary_from(SMALL_VOCABULARY))
    golden = StimulusFactory(study=study, role=Stimulus.Role.GOLDEN, original_name="g.mp4")
    ExpertLabel.objects.create(
        stimulus=golden, dimension=Dimension.objects.get(study=study, key="propose"), value=[12, 17]
    )
    # when: a vocabulary without action 17 comes
    smaller = {**SMALL_VOCABULARY, "actions": SMALL_VOCABULARY["actions"][:3]}
    # then: refused, naming the video and the action; the old vocabulary stays
    with pytest.raises(Conflict, match="g.mp4 name action 17"):
        vocabulary_apply(study=study, vocabulary=vocabulary_from(smaller))
    assert Action.objects.filter(group__study=study).count() == 7


def test_the_pages_see_a_new_vocabulary_at_once():
    from annotation.designs.propose_study import vocabulary_of

    study = fresh_study()
    vocabulary_apply(study=study, vocabulary=vocabulary_from(SMALL_VOCABULARY))
    assert vocabulary_of(study.pk).actions[12].name == "stand"  # read, and cached
    renamed = {**SMALL_VOCABULARY, "actions": [{"id": 12, "group": "pose", "name": "stand up"}]}
    vocabulary_apply(study=study, vocabulary=vocabulary_from(renamed))
    assert vocabulary_of(study.pk).actions[12].name == "stand up"
