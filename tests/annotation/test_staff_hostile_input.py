"""Hostile input to the staff paths (researchers, admins, experts): study import, question
sets, vocabularies, adaptive settings, the admin actions and the researchers' API. Each
bad input is a clear refusal naming the problem (a 4xx, an ImportFailed, a
QuestionSetError, a VocabularyError, a ValidationFailed or a CommandError), never a 500
or a crash, and nothing stored changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.forms.models import model_to_dict

from annotation.errors import ImportFailed, ValidationFailed
from annotation.models import (
    Action,
    AdaptiveSettings,
    Assignment,
    Participation,
    Payment,
    Stimulus,
    Study,
    TutorialPair,
)
from annotation.services.adaptive import adaptive_configure, adaptive_review
from annotation.services.question_sets import (
    QuestionSetError,
    question_set_apply,
    question_set_from,
    read_question_set,
)
from annotation.services.studies import study_create
from annotation.services.study_import import study_import_manifest
from annotation.services.vocabularies import (
    VocabularyError,
    read_vocabulary,
    vocabulary_apply,
    vocabulary_from,
)
from quality.models import ExportJob
from tests.annotation.design_fixtures import SMALL_QUESTIONS, SMALL_VOCABULARY, running_study
from tests.annotation.rater_fixtures import answer, onboard, rater_client, tiny_study
from tests.annotation.test_question_sets import import_action, keys, question, superuser  # noqa: F401
from tests.annotation.test_staff_api import client_for, started
from tests.annotation.test_study_import import good_rows, write_manifest
from tests.factories import make_study
from tests.quality.test_analysis_runs import rated_study, request_run, researcher
from tests.videos import write_video

pytestmark = pytest.mark.django_db

NUL = "holds a NUL character, which a text cannot hold"


# --- study import ------------------------------------------------------------------------


def refused_import(study: Study, manifest: Path) -> list[tuple[int, str]]:
    with pytest.raises(ImportFailed) as refused:
        study_import_manifest(study=study, manifest=manifest)
    return refused.value.errors


def assert_nothing_imported(study: Study, settings) -> None:
    assert not Stimulus.objects.filter(study=study).exists()
    assert not TutorialPair.objects.filter(study=study).exists()
    assert not any(p.is_file() for p in Path(settings.MEDIA_ROOT).rglob("*"))


@pytest.mark.parametrize(
    ("row", "column", "value"),
    [
        (0, "prompt", "A girl\x00 arranges daisies."),
        (1, "source_model", "\x00"),
        (4, "action_class", "whole\x00body"),
        (7, "caption", "A man\x00 runs."),
        (7, "explanation", "Look at the legs.\x00"),
        (8, "tutorial_pair", "p1\x00"),
    ],
)
def test_a_nul_character_in_a_manifest_cell_is_refused_naming_its_line_and_column(
    tmp_path, settings, row, column, value
):
    # given: a good manifest with one NUL character (PostgreSQL stores none in a text)
    study = make_study()
    rows = good_rows()
    rows[row][column] = value
    manifest = write_manifest(tmp_path, rows)
    # when
    errors = refused_import(study, manifest)
    # then
    assert (row + 2, f"{column} {NUL}") in errors
    assert_nothing_imported(study, settings)


@pytest.mark.parametrize(
    ("column", "value"), [("note", "soft key light\x00"), ("comment_expert", "fine\x00")]
)
def test_a_nul_character_in_a_questionnaire_column_is_refused(tmp_path, settings, column, value):
    study = running_study(design="questionnaire")
    question_set_apply(study=study, question_set=question_set_from(SMALL_QUESTIONS))
    row = {
        "path": "b.mp4",
        "role": "tutorial",
        "overall_expert": "8",
        "object_text_expert": "invalid",
        "light_expert": "soft_light",
        "note": "why",
        "comment_expert": "fine",
        column: value,
    }
    errors = refused_import(study, write_manifest(tmp_path, [row]))
    assert errors == [(2, f"{column} {NUL}")]
    assert_nothing_imported(study, settings)


@pytest.mark.parametrize("keyframe", ["inf", "Infinity", "1e999"])
def test_an_infinite_keyframe_of_a_segment_is_refused(tmp_path, settings, keyframe):
    # given: a propose-then-verify segment at an infinite time (JSON cannot store it)
    study = running_study(design="propose_verify")
    row = {"path": "film.mp4", "role": "stimulus", "video_id": "film", "keyframe": keyframe,
           "x1": "0.1", "y1": "0.1", "x2": "0.5", "y2": "0.9", "person_id": "1"}  # fmt: skip
    errors = refused_import(study, write_manifest(tmp_path, [row]))
    assert errors == [(2, "keyframe must be a time in seconds from the start, at least 0")]
    assert_nothing_imported(study, settings)


@pytest.mark.parametrize("person", ["١٢", "²", "9" * 5000, "-1", "1.0"])
def test_a_person_id_that_is_not_plain_digits_is_refused(tmp_path, settings, person):
    # given: digits int() would read as another number ("١٢" as 12), fail on, or none
    study = running_study(design="propose_verify")
    row = {"path": "film.mp4", "role": "stimulus", "video_id": "film", "keyframe": "1",
           "x1": "0.1", "y1": "0.1", "x2": "0.5", "y2": "0.9", "person_id": person}  # fmt: skip
    errors = refused_import(study, write_manifest(tmp_path, [row]))
    assert errors == [(2, f"person_id must be a whole number, got {person!r}")]
    assert_nothing_imported(study, settings)


def test_a_value_past_the_csv_field_limit_is_refused_naming_its_line(tmp_path, settings):
    # given: a 200 kB prompt (past the csv module's 128 kB field limit)
    study = make_study()
    rows = good_rows()
    rows[2]["prompt"] = "p" * 200_000
    manifest = write_manifest(tmp_path, rows)
    # when
    errors = refused_import(study, manifest)
    # then: the line and the reason, not a crash of the csv module
    assert len(errors) == 1
    line, reason = errors[0]
    assert line == 4
    assert "not readable as CSV" in reason and "field limit" in reason
    assert_nothing_imported(study, settings)


def test_a_manifest_that_is_not_utf8_is_refused(tmp_path, settings):
    study = make_study()
    manifest = write_manifest(tmp_path, good_rows())
    text = manifest.read_text(encoding="utf-8").replace("prompt 1", "caf\u00e9 1")
    manifest.write_bytes(text.encode("latin-1"))
    # the line of the first byte that is not UTF-8 (the header is line 1), and the byte
    assert refused_import(study, manifest) == [
        (3, "not UTF-8 text (byte 0xe9): save the manifest as UTF-8")
    ]
    assert_nothing_imported(study, settings)


def test_a_manifest_with_a_byte_order_mark_imports(tmp_path):
    # given: the manifest as spreadsheets on Windows save it
    study = make_study()
    manifest = write_manifest(tmp_path, good_rows())
    manifest.write_bytes(b"\xef\xbb\xbf" + manifest.read_bytes())
    # when
    report = study_import_manifest(study=study, manifest=manifest)
    # then
    assert len(report.created) == 9


def test_a_path_that_climbs_out_of_the_folder_is_stored_under_its_own_name(tmp_path):
    # given: a manifest in a sub-folder naming a file above it with ".." (as the format
    # allows: paths are relative to the manifest's folder or absolute)
    study = make_study()
    (tmp_path / "videos").mkdir()
    write_video(tmp_path / "evil.mp4", "video bytes")
    manifest = tmp_path / "videos" / "manifest.csv"
    manifest.write_text("path,role\n../evil.mp4,stimulus\n", encoding="utf-8")
    # when
    study_import_manifest(study=study, manifest=manifest)
    # then: the copy is named by the file's own name, inside the media folder
    stored = Stimulus.objects.get(study=study)
    assert stored.original_name == "evil.mp4"
    assert ".." not in stored.source_file.name
    assert (
        Path(stored.source_file.path)
        .resolve()
        .is_relative_to(Path(stored.source_file.storage.location).resolve())
    )


# --- question sets -----------------------------------------------------------------------


def applied_study() -> Study:
    study = running_study(design="questionnaire")
    question_set_apply(study=study, question_set=question_set_from(SMALL_QUESTIONS))
    return study


SMALL_KEYS = ["overall", "object_text", "light", "comment"]


def refused_set(tmp_path: Path, text: str, name: str = "bad.yaml") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(QuestionSetError) as refused:
        read_question_set(path)
    return str(refused.value)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"questions": [question(kind="comment", label="De\x00pth")]}, f"its label {NUL}"),
        ({"questions": [question(kind="comment", text="How deep?\x00")]}, f"its text {NUL}"),
        ({"questions": [question(kind="comment", group="\x00")]}, f"its group {NUL}"),
        (
            {"questions": [question(kind="tags", options=["Wi\x00de"])]},
            f"an option's label {NUL}",
        ),
        (
            {
                "questions": [
                    question(
                        kind="ordinal",
                        options=[{"value": 1, "label": "a", "description": "shallow\x00"}],
                    )
                ]
            },
            f"an option's description {NUL}",
        ),  # fmt: skip
        ({"source": "VGA\x00", "questions": [question(kind="comment")]}, f"its source {NUL}"),
    ],
)
def test_a_nul_character_in_a_question_set_is_refused_naming_where(tmp_path, data, message):
    study = applied_study()
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(QuestionSetError) as refused:
        question_set_apply(study=study, question_set=read_question_set(path))
    assert message in str(refused.value)
    assert keys(study) == SMALL_KEYS


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("questions:\n- {key: d, kind: score, scale: {min: -.inf, max: .inf}}\n",
         "scale min: -inf is not a finite number"),
        ("questions:\n- {key: d, kind: score, scale: {min: 0, max: 10, step: .nan}}\n",
         "scale step: nan is not a finite number"),
        ("questions:\n- {key: d, kind: score, scale: {min: 0, max: 10, step: .inf}}\n",
         "scale step: inf is not a finite number"),
        ("questions:\n- {key: d, kind: ordinal, options: [{value: .nan, label: a}]}\n",
         "level 'a': nan is not a finite number"),
        ("questions:\n- {key: d, kind: score, scale: {min: '0', max: 10}}\n",
         "scale min: '0' is not a number"),
    ],
)  # fmt: skip
def test_a_number_that_is_not_finite_is_refused(tmp_path, text, message):
    assert message in refused_set(tmp_path, text)


def test_nan_and_infinity_in_a_json_question_set_are_refused(tmp_path):
    text = '{"questions": [{"key": "d", "kind": "score", "scale": {"min": 0, "max": Infinity}}]}'
    assert "scale max: inf is not a finite number" in refused_set(tmp_path, text, "bad.json")


def test_nan_in_the_options_of_a_question_in_the_admin_is_a_form_error(superuser):  # noqa: F811
    study = applied_study()
    from annotation.models import Question

    level = Question.objects.get(dimension__study=study, dimension__key="object_text")
    before = level.options
    data = {"kind": "ordinal", "group": "", "scale_min": "0", "scale_max": "10",
            "scale_step": "1", "options": '[{"value": NaN, "label": "a"}]'}  # fmt: skip
    response = superuser.post(f"/admin/annotation/question/{level.pk}/change/", data)
    assert response.status_code == 200  # the form again, with the error
    assert "nan is not a finite number" in response.content.decode()
    level.refresh_from_db()
    assert level.options == before


def laughs(levels: int = 5) -> str:
    """YAML whose last anchor stands for 10**levels strings ("billion laughs")."""
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for n in range(1, levels + 1):
        lines.append(f"a{n}: &a{n} [" + ", ".join([f"*a{n - 1}"] * 10) + "]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("field", "message"),
    [
        ("text: *a5", "question 'depth': its text must be a text, not a list"),
        ("label: *a5", "question 'depth': its label must be a text, not a list"),
        ("group: *a5", "question 'depth': its group must be a text, not a list"),
        ("options: [{label: *a5}]", "question 'depth': an option's label must be a text"),
        ("options: [{label: a, value: *a5}]", "question 'depth': an option's value must be a"),
    ],
)
def test_yaml_aliases_that_expand_to_millions_of_strings_are_refused(tmp_path, field, message):
    kind = "tags" if "options" in field else "comment"
    text = laughs() + f"questions:\n- {{key: depth, kind: {kind}, {field}}}\n"
    assert message in refused_set(tmp_path, text)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("deep.json", '{"questions": ' + "[" * 100_000 + "]" * 100_000 + "}"),
        ("deep.yaml", "questions: " + "[" * 100_000 + "]" * 100_000 + "\n"),
    ],
)
def test_a_deeply_nested_file_is_refused(tmp_path, name, text):
    assert "nested too deeply" in refused_set(tmp_path, text, name)


def test_a_deeply_nested_upload_is_refused_on_the_admin_page(superuser):  # noqa: F811
    study = applied_study()
    upload = SimpleUploadedFile("deep.json", b'{"questions": ' + b"[" * 200_000 + b"]" * 200_000)
    response = import_action(superuser, study, apply="1", question_file=upload)
    assert response.status_code == 400
    assert "deep.json: nested too deeply" in response.content.decode()
    assert keys(study) == SMALL_KEYS


def test_an_upload_holding_a_nul_character_is_refused_on_the_admin_page(superuser):  # noqa: F811
    study = applied_study()
    data = {"questions": [question(kind="comment", label="De\x00pth")]}
    upload = SimpleUploadedFile("nul.json", json.dumps(data).encode())
    response = import_action(superuser, study, apply="1", question_file=upload)
    assert response.status_code == 400
    assert "nul.json: question &#x27;depth&#x27;: its label holds a NUL" in (
        response.content.decode()
    )
    assert keys(study) == SMALL_KEYS


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"kind": "tags", "options": [{"label": "OK", "value": "o\nk"}]},
         "tag 'OK' needs a value that is a slug"),
        ({"kind": "tags", "options": ["A"], "multiple": "false"},
         "'multiple' must be true or false"),
        ({"kind": "ordinal", "options": [{"value": 1, "label": "a"}], "invalid_option": "no"},
         "'invalid_option' must be true or false"),
    ],
)  # fmt: skip
def test_a_value_of_the_wrong_shape_is_refused(tmp_path, fields, message):
    data = {"questions": [question(**fields)]}
    assert message in refused_set(tmp_path, json.dumps(data), "bad.json")


def test_a_tag_value_is_stored_without_the_line_break_around_it(tmp_path):
    # given: a value that the slug check's "$" let through with its trailing newline
    data = {"questions": [question(kind="tags", options=[{"label": "OK", "value": "ok\n"}])]}
    path = tmp_path / "tags.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    (depth,) = read_question_set(path).questions
    assert depth.options == [{"value": "ok", "label": "OK"}]


def test_a_yaml_yes_or_no_read_as_true_or_false_is_refused_not_stored_as_true(tmp_path):
    # given: an ordinal level labelled No, unquoted (YAML 1.1 reads it as false)
    text = "questions:\n- {key: d, kind: ordinal, options: [{value: 0, label: No}]}\n"
    message = refused_set(tmp_path, text)
    assert "an option's label is true or false in YAML" in message


def test_a_json_question_set_with_a_byte_order_mark_reads(tmp_path):
    path = tmp_path / "small.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(SMALL_QUESTIONS).encode())
    assert [q.key for q in read_question_set(path).questions] == SMALL_KEYS


# --- vocabularies ------------------------------------------------------------------------


def vocabulary(change=None) -> dict:
    data = json.loads(json.dumps(SMALL_VOCABULARY))
    if change is not None:
        change(data)
    return data


def vocabulary_study() -> Study:
    study = running_study(design="propose_verify")
    vocabulary_apply(study=study, vocabulary=vocabulary_from(vocabulary()))
    return study


def stored_vocabulary(study: Study) -> list:
    return sorted(
        Action.objects.filter(group__study=study).values_list(
            "group__key", "group__label", "group__limit", "action_id", "name"
        )
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["actions"][0].update(name="s\x00it"), f"action 11: its name {NUL}"),
        (lambda d: d["groups"][0].update(label="Po\x00se"), f"group 'pose': its label {NUL}"),
        (lambda d: d.update(source="AVA\x00"), f"its source {NUL}"),
        (lambda d: d["groups"][0].update(key="po\nse"), "group 1: needs a key (a slug)"),
        (
            lambda d: d["groups"][0].update(limit=40_000),
            "limit must be a whole number >= 1, at most 32767",
        ),
        (
            lambda d: d["actions"][0].update(id=2**31),
            "id must be a whole number >= 1, at most 2147483647",
        ),
        (lambda d: d["groups"][0].update(required="no"), "'required' must be true or false"),
        (lambda d: d["actions"][0].update(name=["sit"]), "its name must be a text, not a list"),
    ],
)
def test_a_bad_vocabulary_is_refused_and_the_studys_stays(change, message):
    study = vocabulary_study()
    before = stored_vocabulary(study)
    with pytest.raises(VocabularyError) as refused:
        vocabulary_apply(study=study, vocabulary=vocabulary_from(vocabulary(change)))
    assert message in str(refused.value)
    assert stored_vocabulary(study) == before


def test_a_group_key_is_stored_without_the_line_break_after_it():
    read = vocabulary_from(vocabulary(lambda d: d["groups"][0].update(key="pose\n")))
    assert read.groups[0].key == "pose"


def test_yaml_aliases_in_a_vocabulary_are_refused(tmp_path):
    path = tmp_path / "laughs.yaml"
    path.write_text(
        laughs()
        + "groups: [{key: pose, label: *a5}]\nactions: [{id: 1, group: pose, name: sit}]\n",
        encoding="utf-8",
    )
    with pytest.raises(VocabularyError, match="its label must be a text, not a list"):
        read_vocabulary(path)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("deep.json", '{"groups": ' + "[" * 100_000 + "]" * 100_000 + "}"),
        ("deep.yaml", "groups: " + "[" * 100_000 + "]" * 100_000 + "\n"),
    ],
)
def test_a_deeply_nested_vocabulary_is_refused(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(VocabularyError, match="nested too deeply"):
        read_vocabulary(path)


def test_the_command_refuses_a_nul_vocabulary_and_keeps_the_studys(tmp_path):
    study = vocabulary_study()
    before = stored_vocabulary(study)
    path = tmp_path / "nul.json"
    path.write_text(json.dumps(vocabulary(lambda d: d["actions"][1].update(name="\x00"))))
    with pytest.raises(CommandError, match=f"nul.json: action 12: its name {NUL}"):
        call_command("import_vocabulary", study.slug, str(path))
    assert stored_vocabulary(study) == before


def test_a_vocabulary_with_a_byte_order_mark_reads(tmp_path):
    path = tmp_path / "small.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(SMALL_VOCABULARY).encode())
    assert len(read_vocabulary(path).actions) == 7


# --- adaptive settings -------------------------------------------------------------------


def adaptive_row(study: Study) -> dict | None:
    row = AdaptiveSettings.objects.filter(study=study).first()
    return None if row is None else model_to_dict(row)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"target_half_width": float("nan")}, "target_half_width"),
        ({"target_half_width": float("inf")}, "target_half_width"),
        ({"target_half_width": -3.0}, "target_half_width"),
        ({"target_half_width": "wide"}, "target_half_width"),
        ({"alpha": float("nan")}, "alpha"),
        ({"alpha": 0.0}, "alpha"),
        ({"alpha": "often"}, "alpha"),
        ({"min_ratings": -5}, "min_ratings"),
        ({"min_ratings": "many"}, "min_ratings"),
        ({"max_ratings": 0}, "max_ratings"),
        ({"max_ratings": 10**12}, "max_ratings"),
        ({"fixed_ratings": -1}, "fixed_ratings"),
        ({"enabled": "perhaps"}, "enabled"),
        ({"plan": "fastest"}, "plan"),
        ({"plan": "group_sequential", "looks": "10,\x0020"}, "looks"),
        ({"looks": "10,20\x00"}, "looks"),
    ],
)
def test_bad_adaptive_settings_are_refused_naming_the_field_and_nothing_changes(changes, field):
    study = tiny_study().study
    adaptive_configure(study=study, enabled=False, min_ratings=10)
    before = adaptive_row(study)
    with pytest.raises(ValidationFailed) as refused:
        adaptive_configure(study=study, **changes)
    assert field in refused.value.message
    assert adaptive_row(study) == before


def test_looks_that_the_chosen_plan_does_not_read_never_break_a_review():
    # given: a two-stage study whose (unused) looks are not numbers: refused now
    # whatever the plan, but a row saved before that check may hold them
    study = tiny_study().study
    with pytest.raises(ValidationFailed, match="whole numbers separated by commas"):
        adaptive_configure(study=study, enabled=True, plan="two_stage", looks="ten,twenty")
    adaptive_configure(study=study, enabled=True, plan="two_stage")
    AdaptiveSettings.objects.filter(study=study).update(looks="ten,twenty")
    # when
    review = adaptive_review(study=study)
    # then: reviewed (nothing rated yet), rather than failing on the looks
    assert review is not None and review.settled_now == []


@pytest.mark.parametrize(
    ("option", "value", "field"),
    [
        ("--width", "nan", "target_half_width"),
        ("--width", "inf", "target_half_width"),
        ("--alpha", "-0.5", "alpha"),
        ("--cap", "99999999999", "max_ratings"),
        ("--min", "0", "min_ratings"),
    ],
)
def test_the_adaptive_command_refuses_bad_numbers_and_changes_nothing(option, value, field):
    study = tiny_study().study
    call_command("adaptive", study.slug, "--off", "--min", "10")
    before = adaptive_row(study)
    with pytest.raises(CommandError, match=field):
        call_command("adaptive", study.slug, "--on", option, value)
    assert adaptive_row(study) == before


# --- the admins' API ---------------------------------------------------------------------


def assignment_row(pk: int) -> tuple:
    row = Assignment.objects.get(pk=pk)
    return (row.state, row.admin_note, row.excluded_by_id, row.excluded_at)


@pytest.mark.parametrize("action", ["pause", "exclude", "exclude-rater"])
@pytest.mark.parametrize("reason", ["line\x00clicking", ["line clicking"], {"why": "x"}, "   "])
def test_a_bad_reason_is_refused_and_the_assignment_stays(action, reason):
    tiny = tiny_study(rest_every=0)
    _, assignment = started(tiny)
    before = assignment_row(assignment.pk)
    response = client_for("admin").post(
        f"/api/assignments/{assignment.pk}/{action}/", {"reason": reason}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["detail"].startswith("reason: ")
    assert assignment_row(assignment.pk) == before
    assert not Participation.objects.filter(is_excluded=True).exists()


def test_a_replayed_rater_exclusion_is_refused_and_keeps_the_first_record():
    # given: a rater excluded by one admin
    tiny = tiny_study(rest_every=0)
    _, assignment = started(tiny)
    first, second = client_for("admin"), client_for("admin")
    url = f"/api/assignments/{assignment.pk}/exclude-rater/"
    assert first.post(url, {"reason": "line clicking"}, format="json").status_code == 200
    recorded = Participation.objects.values("excluded_reason", "excluded_by", "excluded_at").get()
    # when: the request again (a replay, or a second admin)
    response = second.post(url, {"reason": "bot"}, format="json")
    # then
    assert response.status_code == 409
    assert response.json() == {
        "error": "conflict",
        "detail": "this rater is already excluded from the study: line clicking",
    }
    assert Participation.objects.values("excluded_reason", "excluded_by", "excluded_at").get() == (
        recorded
    )


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"approve": True, "note": "paid\x00"}, "note"),
        ({"approve": "maybe"}, "approve"),
        ({"approve": None}, "approve"),
        ({"approve": True, "note": ["ok"]}, "note"),
    ],
)
def test_a_bad_payment_decision_is_refused_and_the_payment_stays_pending(data, field):
    tiny = tiny_study(rest_every=0)
    client, _ = rater_client()
    onboard(client, tiny)
    for _ in range(8):
        item = client.get(tiny.base + "next/").json()["item"]["id"]
        client.post(tiny.base + "answers/", answer(item), format="json")
    payment = Payment.objects.get()
    response = client_for("admin").post(
        f"/api/payments/{payment.pk}/decision/", data, format="json"
    )
    assert response.status_code == 400
    assert response.json()["detail"].startswith(f"{field}: ")
    payment.refresh_from_db()
    assert (payment.status, payment.note, payment.decided_at) == ("pending", "", None)


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"name": "Study\x00", "slug": "fine"}, "name"),
        ({"name": "Study", "slug": "bad\x00slug"}, "slug"),
        ({"name": "Study", "slug": "\u00e9tudes"}, "slug"),
        ({"name": "Study", "slug": "fine", "design": ["slider"]}, "design"),
        ({"name": "Study", "slug": "fine", "open_to_signed_in": "perhaps"}, "open_to_signed_in"),
    ],
)
def test_a_bad_new_study_is_refused_naming_the_field(data, field):
    response = client_for("admin").post("/api/studies/", data, format="json")
    assert response.status_code == 400
    assert response.json()["detail"].startswith(f"{field}: ")
    assert not Study.objects.exists()


def test_a_replayed_study_creation_is_refused_and_makes_one_study():
    admin = client_for("admin")
    data = {"name": "GAIA", "slug": "gaia"}
    assert admin.post("/api/studies/", data, format="json").status_code == 201
    response = admin.post("/api/studies/", {**data, "name": "Other"}, format="json")
    assert response.status_code == 400
    assert response.json()["detail"] == "a study with slug 'gaia' already exists"
    assert list(Study.objects.values_list("slug", "name")) == [("gaia", "GAIA")]


@pytest.mark.parametrize("pk", ["99999999999999999999", "2147483648"])
def test_an_assignment_number_past_the_database_range_is_not_found(pk):
    response = client_for("admin").post(
        f"/api/assignments/{pk}/pause/", {"reason": "x"}, format="json"
    )
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"


# --- the researchers' API ----------------------------------------------------------------


@pytest.fixture
def rated_run(django_capture_on_commit_callbacks):
    study, _ = rated_study(raters=4, stimuli=6, line_clicker=False)
    return study, request_run(researcher(), study, django_capture_on_commit_callbacks)


@pytest.mark.parametrize(
    "run", ["\u00b2", "\u0661", "99999999999999999999999", "9" * 5000, "1\x00", "-1"]
)
def test_an_export_of_a_run_that_is_no_number_of_a_run_is_not_found(rated_run, run):
    study, _ = rated_run
    response = researcher().get(f"/api/studies/{study.slug}/exports/mos.csv", {"run": run})
    assert response.status_code == 404
    assert response.json()["detail"].startswith(f"no finished analysis run {run}")


@pytest.mark.parametrize(
    ("data", "status", "start"),
    [
        ({"name": "ratings.csv", "run": 10**20}, 404, "no finished analysis run"),
        ({"name": "ratings.csv", "run": "1\x00"}, 400, "run: "),
        ({"name": "ratings.csv\x00"}, 400, "name: "),
        ({"name": ["ratings.csv"]}, 400, "name: "),
        ({"name": "../../settings.py"}, 400, "name: not an export of this study"),
    ],
)
def test_a_bad_export_job_is_refused_and_queues_nothing(rated_run, data, status, start):
    study, _ = rated_run
    response = researcher().post(f"/api/studies/{study.slug}/export-jobs/", data, format="json")
    assert response.status_code == status
    assert response.json()["detail"].startswith(start)
    assert not ExportJob.objects.exists()


def test_an_export_name_with_a_nul_character_is_not_found(rated_run):
    study, _ = rated_run
    response = researcher().get(f"/api/studies/{study.slug}/exports/ratings.csv%00")
    assert response.status_code == 404
    assert "no export 'ratings.csv\x00'" in response.json()["detail"]


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "twice.yaml",
            "questions:\n  - key: depth\n    kind: comment\n    kind: score\n",
            "the key 'kind' is given twice",
        ),
        (
            "twice.json",
            '{"questions": [{"key": "depth", "kind": "comment", "kind": "score"}]}',
            "the key 'kind' is given twice in one mapping",
        ),
    ],
)
def test_a_key_given_twice_in_a_question_set_is_refused_not_the_last_kept(
    tmp_path, name, text, message
):
    assert message in refused_set(tmp_path, text, name)


def test_a_key_given_twice_in_a_vocabulary_is_refused(tmp_path):
    path = tmp_path / "twice.yaml"
    path.write_text(
        "groups: [{key: pose, label: Pose, label: Posture}]\n"
        "actions: [{id: 1, group: pose, name: sit}]\n",
        encoding="utf-8",
    )
    with pytest.raises(VocabularyError, match="the key 'label' is given twice"):
        read_vocabulary(path)


def test_a_study_created_twice_at_the_same_moment_is_refused_not_a_500(monkeypatch):
    # given: the first request's study is stored after the second passed its checks
    from annotation.services import studies  # noqa: PLC0415

    study_create(name="First", slug="same-moment")
    monkeypatch.setattr(studies.Study, "validate_unique", lambda self, exclude=None: None)
    monkeypatch.setattr(studies.Study.objects, "filter", lambda **_: Study.objects.none())
    # when / then: the database's unique slug speaks, as the check would have
    with pytest.raises(ValidationFailed, match="a study with slug 'same-moment' already exists"):
        study_create(name="Second", slug="same-moment")
    assert list(Study.objects.values_list("name", flat=True)) == ["First"]
