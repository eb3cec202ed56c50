"""Question sets as data (annotation/services/question_sets.py): the shipped VGA-Bench
template, files in YAML or JSON, checked whole; applied to a study by the service, the
`import_questions` command and the Studies admin action; refused once a study has
answers."""

from __future__ import annotations

import io
import json
import tempfile
from collections import Counter
from pathlib import Path

import pytest
import yaml
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, ManagementUtility, call_command
from django.test import Client

from annotation.designs.questionnaire_study import questions_of, settings_of
from annotation.errors import Conflict
from annotation.models import Dimension, ExpertLabel, Question, QuestionnaireSettings
from annotation.services.question_sets import (
    QuestionSetError,
    question_set_apply,
    read_question_set,
    template_path,
)
from tests.annotation.design_fixtures import (
    SMALL_QUESTIONS,
    Answerer,
    running_study,
    tiny_questionnaire_study,
)
from tests.annotation.rater_fixtures import rater_client
from tests.annotation.test_journey import take_test_and_session
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

VGA_BENCH = Path(__file__).resolve().parents[2] / "annotation/data/questionnaires/vga-bench.yaml"


def write(tmp_path: Path, data: dict, name: str = "questions.yaml") -> Path:
    path = tmp_path / name
    text = json.dumps(data) if name.endswith(".json") else yaml.safe_dump(data, sort_keys=False)
    path.write_text(text, encoding="utf-8")
    return path


def answered_study():
    """The tiny questionnaire study with one finished batch (answers given)."""
    tiny = tiny_questionnaire_study()
    client, _ = rater_client()
    take_test_and_session(client, tiny, Answerer("questionnaire"), golden_right=True)
    return tiny.study


def keys(study) -> list[str]:
    return list(
        Dimension.objects.filter(study=study).order_by("order").values_list("key", flat=True)
    )


# --- reading -----------------------------------------------------------------------------


def test_the_vga_bench_template_reads_whole():
    # when
    chosen = read_question_set(template_path("vga-bench"))
    # then: VGA-Bench's 10 scores, 11 tag groups and 31 ordinal questions, and a comment
    assert template_path("vga-bench") == VGA_BENCH
    assert chosen.name == "VGA-Bench"
    assert "VGA-Bench" in chosen.source
    kinds = Counter(question.kind for question in chosen.questions)
    assert kinds == {"score": 10, "tags": 11, "ordinal": 31, "comment": 1}
    assert all(q.scale == (0.0, 10.0, 1.0) for q in chosen.questions if q.kind == "score")
    ordinal = [q for q in chosen.questions if q.kind == "ordinal"]
    for question in ordinal:
        values = [option["value"] for option in question.options]
        assert values == sorted(values) and len(values) >= 2


def test_a_json_file_reads_as_its_yaml_twin(tmp_path):
    from_yaml = read_question_set(write(tmp_path, SMALL_QUESTIONS, "small.yaml"))
    from_json = read_question_set(write(tmp_path, SMALL_QUESTIONS, "small.json"))
    assert from_json == from_yaml
    light = from_json.questions[2]
    assert [option["value"] for option in light.options] == [
        "hard_light",
        "soft_light",
        "diffused_light",
    ]


def question(**fields) -> dict:
    return {"key": "depth", "label": "Depth", **fields}


@pytest.mark.parametrize(
    ("questions", "message"),
    [
        ([question(kind="stars")], "question 'depth': kind must be one of score, ordinal, tags"),
        ([question(kind="ordinal")], "question 'depth': 'options' must list its levels"),
        (
            [
                question(
                    kind="ordinal", options=[{"value": 2, "label": "b"}, {"value": 1, "label": "a"}]
                )
            ],
            "question 'depth': levels must be listed in increasing order",
        ),
        (
            [question(kind="ordinal", options=[{"label": "Shallow"}])],
            "question 'depth': level 'Shallow' needs a value",
        ),
        ([question(kind="tags", options=["Wide", "wide"])], "question 'depth': two options share"),
        (
            [question(kind="score", scale={"min": 10, "max": 0})],
            "question 'depth': the scale needs min < max and a positive step",
        ),
        ([question(kind="comment"), question(kind="comment")], "question 'depth' is given twice"),
        ([{"key": "Not A Slug", "kind": "comment"}], "question 1: key 'Not A Slug' must be a slug"),
        (
            [question(kind="tags", options=[{"label": "A or B", "value": "a|b"}])],
            "question 'depth': tag 'A or B' needs a value that is a slug",
        ),
        (
            [question(kind="tags", options=["日本語"])],
            "question 'depth': tag '日本語' needs a value",
        ),
        (
            [question(kind="comment", label="L" * 101)],
            "question 'depth': its label is longer than 100 characters",
        ),
        (
            [question(kind="tags", options=[{"label": "Long", "value": "x" * 81}])],
            "question 'depth': tag 'Long' needs a value that is a slug of at most 40",
        ),
        # before: an OverflowError traceback (a 500 in the admin)
        (
            [question(kind="score", scale={"min": 0, "max": 10**400})],
            "question 'depth', scale max: a 401-digit number is beyond ±1e+12",
        ),
        (
            [question(kind="ordinal", options=[{"value": 10**400, "label": "a"}])],
            "question 'depth', level 'a': a 401-digit number is beyond ±1e+12",
        ),
        # before: accepted, and an answer, the results or the rater's page broke
        (
            [question(kind="score", scale={"min": 0, "max": 10, "step": 5e-324})],
            "question 'depth': a step of 4.94066e-324 cuts the scale into more than 100,000",
        ),
        (
            [question(kind="score", scale={"min": -1e308, "max": 1e308})],
            "question 'depth', scale min: -1e+308 is beyond ±1e+12",
        ),
        # before: a UnicodeEncodeError traceback when the set was applied
        ([question(kind="comment", text="a\ud800b")], "question 'depth': its text holds a"),
        ([question(kind="comment", key=f"q{i}") for i in range(1001)], "more than 1000 questions"),
        # before: ignored without a word
        (
            [question(kind="ordinal", multiple=True, options=[{"value": 1, "label": "a"}])],
            "question 'depth': 'multiple' is for tags questions",
        ),
        (
            [question(kind="tags", scale={"max": 5}, options=["a"])],
            "question 'depth': 'scale' is for score questions",
        ),
        ([question(kind="comment", text="t" * 2001)], "question 'depth': its text is longer"),
        (
            [question(kind="ordinal", options=[{"value": 1, "label": "o" * 201}])],
            "question 'depth': option 'oooo",
        ),
    ],
)
def test_a_bad_file_is_refused_naming_the_question(tmp_path, questions, message):
    path = write(tmp_path, {"name": "bad", "questions": questions}, "bad.yaml")
    with pytest.raises(QuestionSetError) as refused:
        read_question_set(path)
    assert str(refused.value).startswith(f"bad.yaml: {message}")


def test_a_json_file_named_in_capitals_reads_as_json_and_a_long_source_is_refused(tmp_path):
    # before: ".JSON" was parsed as YAML (tabs refused), and a source cut to 300
    path = tmp_path / "Q.JSON"
    path.write_text(json.dumps(SMALL_QUESTIONS, indent="\t"))
    assert read_question_set(path).name == "small"
    path.write_text(json.dumps({**SMALL_QUESTIONS, "source": "s" * 301}))
    with pytest.raises(QuestionSetError, match="its source is longer than 300 characters"):
        read_question_set(path)


def test_a_file_over_a_megabyte_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text("questions: []\n" + "# padding\n" * 110_000)
    with pytest.raises(QuestionSetError, match="big.yaml: larger than 1000 kB"):
        read_question_set(path)


def test_a_file_that_is_not_yaml_or_json_says_so(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"questions": [', encoding="utf-8")
    with pytest.raises(QuestionSetError, match=r"^broken.json is not valid JSON"):
        read_question_set(broken)
    with pytest.raises(QuestionSetError, match=r"^cannot read .*missing.yaml"):
        read_question_set(tmp_path / "missing.yaml")


# --- applying ----------------------------------------------------------------------------


def test_apply_makes_the_sets_questions_the_studys_in_order():
    # given: a questionnaire study with the small set
    tiny = tiny_questionnaire_study(stimuli=0)
    chosen = read_question_set(template_path("vga-bench"))
    # when
    applied = question_set_apply(study=tiny.study, question_set=chosen)
    # then: every question as a dimension with its question, in the file's order
    assert applied.questions == 53
    assert keys(tiny.study) == [spec.key for spec in chosen.questions]
    made = {q.dimension.key: q for q in Question.objects.filter(dimension__study=tiny.study)}
    for spec in chosen.questions:
        stored = made[spec.key]
        assert (stored.dimension.label, stored.dimension.help_text) == (spec.label, spec.text)
        assert (stored.kind, stored.group, stored.options) == (spec.kind, spec.group, spec.options)
        assert (stored.multiple, stored.invalid_option) == (spec.multiple, spec.invalid_option)
    assert [q.dimension.key for q in questions_of(tiny.study.pk)] == keys(tiny.study)
    assert settings_of(tiny.study).source == chosen.source


def test_apply_is_refused_once_the_study_has_answers():
    # given
    study = answered_study()
    before = keys(study)
    labels = ExpertLabel.objects.count()
    # when / then
    with pytest.raises(Conflict, match="this study has answers: its questions can no longer"):
        question_set_apply(study=study, question_set=read_question_set(template_path("vga-bench")))
    assert keys(study) == before
    assert ExpertLabel.objects.count() == labels


def test_apply_is_refused_when_the_videos_ask_questions_the_set_lacks():
    # given: the small set's study; one video asks only the score and the tags
    tiny = tiny_questionnaire_study(stimuli=2)
    before = keys(tiny.study)
    # when / then: VGA-Bench's set has neither key, so that video would have nothing
    # to answer (the rater would see "0 of 0 answered")
    with pytest.raises(Conflict, match=r"'light' \(1 video\(s\)\), 'overall' \(1 video"):
        question_set_apply(
            study=tiny.study, question_set=read_question_set(template_path("vga-bench"))
        )
    assert keys(tiny.study) == before


def test_a_set_imported_again_keeps_the_experts_answers(tmp_path):
    # given: a study whose golden, qualification and exemplar videos have the experts'
    # answers (18), and its set with a typo mended
    tiny = tiny_questionnaire_study()
    mended = json.loads(json.dumps(SMALL_QUESTIONS))
    mended["questions"][0]["label"] = "Overall score"
    out = io.StringIO()
    # when
    call_command("import_questions", tiny.study.slug, str(write(tmp_path, mended)), stdout=out)
    # then: every answer kept, on the new questions (before, all 18 went without a word)
    assert "the experts' 18 answer(s) to the same questions kept" in out.getvalue()
    assert ExpertLabel.objects.filter(dimension__study=tiny.study).count() == 18
    # and a rater who answers as the experts did passes the qualification test (before,
    # every rater failed it) and rates
    client, _ = rater_client()
    seen = take_test_and_session(client, tiny, Answerer("questionnaire"), golden_right=True)
    assert seen


def test_a_set_imported_again_names_the_experts_answers_that_no_longer_fit(tmp_path):
    # given: the set with a tag taken away, which two answers per video chose
    tiny = tiny_questionnaire_study()
    changed = json.loads(json.dumps(SMALL_QUESTIONS))
    changed["questions"][2]["options"] = ["Hard Light", "Diffused Light"]
    out = io.StringIO()
    # when
    call_command("import_questions", tiny.study.slug, str(write(tmp_path, changed)), stdout=out)
    # then: the score and level answers kept, the tag answers named and removed
    labels = ExpertLabel.objects.filter(dimension__study=tiny.study)
    assert set(labels.values_list("dimension__key", flat=True)) == {"object_text", "overall"}
    assert labels.count() == 12 and set(labels.values_list("note", flat=True)) == {"why"}
    said = out.getvalue()
    assert "the experts' 12 answer(s) to the same questions kept" in said
    assert "6 expert answer(s) no longer fit and were removed" in said
    assert "light: 'light' has no tag 'soft_light'" in said and "and 1 more" in said


# --- the command -------------------------------------------------------------------------


def test_the_command_applies_a_template_or_a_file(tmp_path):
    study = running_study(design="questionnaire")
    out = io.StringIO()
    call_command("import_questions", study.slug, "vga-bench", stdout=out)
    assert out.getvalue() == f"{study.slug}: 53 questions from VGA-Bench\n"
    assert len(keys(study)) == 53
    call_command("import_questions", study.slug, str(write(tmp_path, SMALL_QUESTIONS)), stdout=out)
    assert keys(study) == ["overall", "object_text", "light", "comment"]


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("no-study", "no study 'nope'"),
        ("slider", "is a slider study: question sets are for questionnaire studies"),
        ("bad-file", "bad.yaml: question 'depth': 'options' must list its levels"),
        (
            "missing-file",
            r"no file 'missing.yaml', and no shipped template of that name \(vga-bench\)",
        ),
        ("answered", "this study has answers: its questions can no longer change"),
    ],
)
def test_the_command_fails_clearly(tmp_path, monkeypatch, case, message):
    # given
    study = running_study(design="slider" if case == "slider" else "questionnaire")
    slug = "nope" if case == "no-study" else study.slug
    source = "vga-bench"
    if case == "bad-file":
        source = str(write(tmp_path, {"questions": [question(kind="ordinal")]}, "bad.yaml"))
    if case == "missing-file":
        monkeypatch.chdir(tmp_path)
        source = "missing.yaml"
    if case == "answered":
        slug = answered_study().slug
    # when / then
    with pytest.raises(CommandError, match=message):
        call_command("import_questions", slug, source)


def test_the_command_line_exits_non_zero_with_the_message(capsys):
    with pytest.raises(SystemExit) as exited:
        ManagementUtility(["manage.py", "import_questions", "nope", "vga-bench"]).execute()
    assert exited.value.code == 1
    assert capsys.readouterr().err == "CommandError: no study 'nope'\n"


# --- the Django admin --------------------------------------------------------------------


@pytest.fixture
def superuser():
    client = Client()
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    return client


def import_action(client, study, **fields):
    data = {"action": "import_questions", "_selected_action": [study.pk], **fields}
    return client.post("/admin/annotation/study/", data)


def test_the_study_page_shows_the_questionnaire_settings(superuser):
    tiny = tiny_questionnaire_study(stimuli=0)
    body = superuser.get(f"/admin/annotation/study/{tiny.study.pk}/change/").content.decode()
    assert 'name="questionnaire-0-audit_sample_size"' in body
    assert 'name="questionnaire-0-raters_per_video"' in body
    assert "1% wrong: 99.7%, 2% wrong: 99.0%" in body  # the default plan n=8, c=1


def test_the_admin_refuses_an_acceptance_number_not_below_the_sample_size():
    from annotation.admin.questionnaire import QuestionnaireSettingsForm

    tiny = tiny_questionnaire_study(stimuli=0)
    plan = QuestionnaireSettings.objects.get(study=tiny.study)
    data = {
        "raters_per_video": 3,
        "keep_share": 0.5,
        "method": "majority",
        "score_tolerance": 1.0,
        "ordinal_adjacent": True,
        "tags_jaccard": 0.5,
        "golden_pass_share": 0.7,
        "audit_sample_size": 8,
        "source": "",
    }
    refused = QuestionnaireSettingsForm({**data, "audit_acceptance_number": 8}, instance=plan)
    allowed = QuestionnaireSettingsForm({**data, "audit_acceptance_number": 7}, instance=plan)
    assert refused.errors == {
        "audit_acceptance_number": [
            "must be less than the sample size (8): otherwise every batch is accepted"
        ]
    }
    assert allowed.is_valid(), allowed.errors


def test_the_admin_action_offers_the_templates_then_applies_one(superuser):
    # given
    study = running_study(design="questionnaire")
    # when: the action is chosen, then the template applied
    page = import_action(superuser, study)
    applied = import_action(superuser, study, apply="1", template="vga-bench")
    # then
    assert page.status_code == 200
    body = page.content.decode()
    assert 'name="template" value="vga-bench" checked' in body
    assert 'enctype="multipart/form-data"' in body
    assert applied.status_code == 302
    assert len(keys(study)) == 53
    listing = superuser.get(applied.url).content.decode()
    assert f"{study.name}: 53 questions from VGA-Bench" in listing


def test_the_admin_action_takes_an_uploaded_file(superuser):
    study = running_study(design="questionnaire")
    upload = SimpleUploadedFile("small.json", json.dumps(SMALL_QUESTIONS).encode())
    applied = import_action(superuser, study, apply="1", template="vga-bench", question_file=upload)
    assert applied.status_code == 302
    assert keys(study) == ["overall", "object_text", "light", "comment"]


@pytest.mark.parametrize(
    ("upload", "message"),
    [
        (
            SimpleUploadedFile("mine.yaml", b"questions:\n  - {key: depth, kind: ordinal}\n"),
            "mine.yaml: question &#x27;depth&#x27;: &#x27;options&#x27; must list its levels",
        ),
        (SimpleUploadedFile("mine.txt", b"x"), "mine.txt: a question set is a .yaml, .yml or"),
        (
            SimpleUploadedFile("latin.yaml", b"questions: []\n# caf\xe9\n"),
            "latin.yaml is not UTF-8 text (at byte 20: save it as UTF-8)",
        ),
    ],
)
def test_the_admin_action_shows_why_a_file_is_refused(superuser, upload, message):
    study = running_study(design="questionnaire")
    response = import_action(superuser, study, apply="1", question_file=upload)
    assert response.status_code == 400
    page = response.content.decode()
    assert message in page
    assert tempfile.gettempdir() not in page  # where the server kept the upload
    assert keys(study) == []


def test_the_admin_action_shows_the_refusal_once_the_study_has_answers(superuser):
    study = answered_study()
    before = keys(study)
    response = import_action(superuser, study, apply="1", template="vga-bench")
    assert response.status_code == 400
    assert "this study has answers: its questions can no longer change" in (
        response.content.decode()
    )
    assert keys(study) == before


def test_the_admin_action_is_for_one_questionnaire_study(superuser):
    slider = running_study(design="slider")
    response = import_action(superuser, slider)
    assert response.status_code == 302
    listing = superuser.get(response.url).content.decode()
    assert "Choose one questionnaire study to import questions into." in listing


# --- questions and experts' answers, edited one by one -----------------------------------


def test_a_questions_options_are_checked_as_a_files_are(superuser):
    tiny = tiny_questionnaire_study(stimuli=0)
    level = Question.objects.get(dimension__study=tiny.study, dimension__key="object_text")
    url = f"/admin/annotation/question/{level.pk}/change/"
    data = {
        "kind": "ordinal",
        "group": "",
        "scale_min": "0",
        "scale_max": "10",
        "scale_step": "1",
        "options": json.dumps([{"value": 3, "label": "c"}, {"value": 1, "label": "a"}]),
        "invalid_option": "on",
    }
    refused = superuser.post(url, data)
    assert "question &#x27;object_text&#x27;: levels must be listed in increasing order" in (
        refused.content.decode()
    )
    data["options"] = json.dumps([{"value": 1, "label": "a"}, {"value": 3, "label": "c"}])
    assert superuser.post(url, data).status_code == 302
    level.refresh_from_db()
    assert level.options == [{"value": 1, "label": "a"}, {"value": 3, "label": "c"}]
    assert superuser.get("/admin/annotation/question/").status_code == 200


def test_a_question_is_read_only_once_the_study_has_answers(superuser):
    study = answered_study()
    level = Question.objects.get(dimension__study=study, dimension__key="object_text")
    body = superuser.get(f"/admin/annotation/question/{level.pk}/change/").content.decode()
    assert 'name="options"' not in body and 'name="kind"' not in body


def test_an_experts_answer_is_checked_against_its_question(superuser):
    tiny = tiny_questionnaire_study(stimuli=0)
    label = ExpertLabel.objects.filter(dimension__key="light").first()
    url = f"/admin/annotation/expertlabel/{label.pk}/change/"
    data = {"stimulus": label.stimulus_id, "dimension": label.dimension_id, "note": "why"}
    refused = superuser.post(url, {**data, "value": '["warm_light"]'})
    assert "&#x27;light&#x27; has no tag &#x27;warm_light&#x27;" in refused.content.decode()
    assert superuser.post(url, {**data, "value": '["soft_light", "hard_light"]'}).status_code == 302
    label.refresh_from_db()
    assert label.value == ["hard_light", "soft_light"]
    assert superuser.get("/admin/annotation/expertlabel/").status_code == 200
    del tiny


def test_the_expert_labels_list_shows_the_start_of_a_long_note(superuser):
    tiny = tiny_questionnaire_study(stimuli=0)
    label = ExpertLabel.objects.filter(dimension__key="light").first()
    label.note = "soft window light from the left " * 10 + "END-OF-NOTE"
    label.save(update_fields=["note"])
    body = superuser.get("/admin/annotation/expertlabel/").content.decode()
    assert "soft window light from the left" in body
    assert "END-OF-NOTE" not in body
    change = superuser.get(f"/admin/annotation/expertlabel/{label.pk}/change/").content.decode()
    assert "END-OF-NOTE" in change
    del tiny


def test_yaml_numbers_are_read_as_written(tmp_path):
    # before (YAML 1.1): a key 010 became "8" (octal), 0x1f 31, and 1e3 was refused as
    # "not a number" (no dot)
    path = tmp_path / "odd.yaml"
    path.write_text(
        "questions:\n"
        "- {key: '010', kind: comment}\n"
        "- {key: 020, kind: comment}\n"
        "- {key: wide, kind: score, scale: {min: 0, max: 1e3, step: 1}}\n"
        "- {key: hexed, kind: ordinal, options: [{value: 0x1f, label: a}]}\n"
    )
    with pytest.raises(QuestionSetError, match="level 'a': '0x1f' is not a number"):
        read_question_set(path)
    path.write_text(path.read_text().rsplit("- {key: hexed", 1)[0])
    chosen = read_question_set(path)
    assert [q.key for q in chosen.questions] == ["010", "020", "wide"]
    assert chosen.questions[2].scale == (0.0, 1000.0, 1.0)
