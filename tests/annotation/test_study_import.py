import csv
import re
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.errors import ImportFailed
from annotation.models import (
    Dimension,
    ExpertScore,
    Session,
    SessionItem,
    Stimulus,
    Study,
    TutorialPair,
)
from annotation.services.studies import study_build_sessions
from annotation.services.study_import import study_import_manifest
from tests.factories import make_study
from tests.videos import video_bytes, write_video

pytestmark = pytest.mark.django_db

DIMS = ("subject", "completeness", "interaction")


def write_manifest(folder: Path, rows: list[dict], columns: list[str] | None = None) -> Path:
    for row in rows:
        path = folder / row["path"]
        if not path.exists() and not row.get("_missing"):
            write_video(path, f"video bytes of {row['path']}")
    columns = columns or sorted(
        {k for row in rows for k in row if not k.startswith("_")}, key=lambda c: (c != "path", c)
    )
    manifest = folder / "manifest.csv"
    with open(manifest, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return manifest


def expert(mean=60.0, sigma=10.0) -> dict:
    return {f"{d}_{k}": v for d in DIMS for k, v in (("mean", mean), ("sigma", sigma))}


def good_rows() -> list[dict]:
    rows = [
        {
            "path": f"s{i}.mp4",
            "role": "stimulus",
            "prompt": f"prompt {i}",
            "action": "Running",
            "action_class": "whole-body",
            "source_model": "M1",
        }
        for i in range(5)
    ]
    rows.append({"path": "g0.mp4", "role": "golden", **expert(70, 8)})
    rows.append({"path": "q0.mp4", "role": "qualification", **expert(40, 12)})
    rows += [
        {
            "path": "t_gen.mp4",
            "role": "tutorial",
            "tutorial_dimension": "subject",
            "tutorial_pair": "p1",
            "tutorial_kind": "generated",
            "caption": "A man runs.",
            "explanation": "Look at the legs.",
        },
        {
            "path": "t_real.mp4",
            "role": "tutorial",
            "tutorial_dimension": "subject",
            "tutorial_pair": "p1",
            "tutorial_kind": "real",
            "caption": "A man runs.",
        },
    ]
    return rows


def test_import_creates_stimuli_expert_scores_and_tutorial_pairs(tmp_path):
    # given
    study = make_study()
    manifest = write_manifest(tmp_path, good_rows())
    # when
    report = study_import_manifest(study=study, manifest=manifest)
    # then
    assert len(report.created) == 9 and report.skipped == [] and report.tutorial_pairs == 1
    roles = sorted(Stimulus.objects.filter(study=study).values_list("role", flat=True))
    assert roles == ["golden", "qualification"] + ["stimulus"] * 5 + ["tutorial", "tutorial"]
    golden = Stimulus.objects.get(study=study, role="golden")
    assert sorted(golden.expert_scores.values_list("dimension__key", "mean", "sigma")) == [
        ("completeness", 70.0, 8.0),
        ("interaction", 70.0, 8.0),
        ("subject", 70.0, 8.0),
    ]
    pair = TutorialPair.objects.get(study=study)
    assert (pair.generated.original_name, pair.real.original_name) == ("t_gen.mp4", "t_real.mp4")
    assert pair.dimension.key == "subject" and pair.explanation == "Look at the legs."
    stimulus = Stimulus.objects.get(study=study, original_name="s3.mp4")
    assert stimulus.prompt == "prompt 3" and stimulus.status == Stimulus.Status.PENDING
    assert Path(stimulus.source_file.path).read_bytes() == video_bytes("video bytes of s3.mp4")


def test_reimport_skips_known_checksums(tmp_path):
    study = make_study()
    manifest = write_manifest(tmp_path, good_rows())
    study_import_manifest(study=study, manifest=manifest)
    # when
    report = study_import_manifest(study=study, manifest=manifest)
    # then
    assert report.created == [] and len(report.skipped) == 9
    assert report.skipped[0] == (2, "already imported (same checksum)")
    assert Stimulus.objects.filter(study=study).count() == 9
    assert TutorialPair.objects.filter(study=study).count() == 1


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (
            lambda rows: rows[2].update(_missing=True, path="gone.mp4"),
            [(4, "file not found: gone.mp4")],
        ),
        (
            lambda rows: rows[5].update(subject_mean="high"),
            [(7, "subject_mean is not a number: 'high'")],
        ),
        (
            lambda rows: rows[5].update(subject_mean="nan"),
            [(7, "subject_mean is not a finite number: 'nan'")],
        ),
        (
            lambda rows: rows[5].update(subject_mean="130"),
            [(7, "subject_mean 130.0 is outside the scale [0.0, 100.0]")],
        ),
        (
            lambda rows: rows[6].update(interaction_mean="", interaction_sigma=""),
            [(8, "a qualification row needs expert scores for: interaction")],
        ),
        (
            lambda rows: rows[1].update(role="practice"),
            [
                (
                    3,
                    "unknown role 'practice' "
                    "(one of stimulus, golden, qualification, tutorial, reference)",
                )
            ],
        ),
        (
            lambda rows: rows.append(dict(rows[0])),
            [(11, "duplicate of line 2 (same file content)")],
        ),
        (
            lambda rows: rows[8].update(tutorial_kind="generated"),
            [(9, "tutorial pair 'p1' needs one generated and one real video")],
        ),
    ],
)
def test_bad_rows_are_reported_with_line_numbers_and_nothing_is_imported(
    tmp_path, settings, mutate, expected
):
    # given
    study = make_study()
    rows = good_rows()
    mutate(rows)
    manifest = write_manifest(tmp_path, rows)
    # when
    with pytest.raises(ImportFailed) as caught:
        study_import_manifest(study=study, manifest=manifest)
    # then
    assert caught.value.errors == expected
    assert Stimulus.objects.filter(study=study).count() == 0
    assert not any(Path(settings.MEDIA_ROOT).rglob("*.mp4"))


def write_text_manifest(folder: Path, text: str, *videos: str) -> Path:
    for name in videos:
        write_video(folder / name, f"video bytes of {name}")
    manifest = folder / "manifest.csv"
    manifest.write_text(text)
    return manifest


def test_a_row_with_more_fields_than_the_header_is_refused(tmp_path):
    # given: an unquoted comma in a prompt
    study = make_study()
    manifest = write_text_manifest(
        tmp_path,
        "path,role,prompt,action\n"
        "a.mp4,stimulus,a man, running,Running\n"
        'b.mp4,stimulus,"a man, running",Running\n',
        "a.mp4",
        "b.mp4",
    )
    # when
    with pytest.raises(ImportFailed) as caught:
        study_import_manifest(study=study, manifest=manifest)
    # then
    assert caught.value.errors == [
        (2, "5 fields but the header has 4 columns (quote a value that contains a comma)")
    ]
    assert Stimulus.objects.count() == 0


@pytest.mark.parametrize("break_", ["\n", "\r\n"])
def test_a_row_is_named_by_the_line_it_starts_on_when_a_prompt_spans_lines(tmp_path, break_):
    # given: prompts of two and three lines before the bad rows (before, each was named
    # by its last line, later rows one line further off per line break before them)
    study = make_study()
    manifest = write_text_manifest(
        tmp_path,
        f'path,role,prompt\na.mp4,stimulus,"one{break_}two"\n'
        f'b.mp4,stimulus,"one{break_}two{break_}three"\nmissing.mp4,stimulus,x\n'
        f'gone.mp4,stimulus,"first{break_}second"\n',
        "a.mp4",
        "b.mp4",
    )
    # when
    with pytest.raises(ImportFailed) as caught:
        study_import_manifest(study=study, manifest=manifest)
    # then: each bad row named by the line an editor shows it starting on
    assert caught.value.errors == [
        (7, "file not found: missing.mp4"),
        (8, "file not found: gone.mp4"),
    ]


def test_a_quote_never_closed_is_refused_not_swallowing_the_rows_after_it(tmp_path):
    # given: a prompt whose quote is never closed (before: one stimulus imported, its
    # prompt holding the two rows after it, and the import said it succeeded)
    study = make_study()
    manifest = write_text_manifest(
        tmp_path,
        'path,role,prompt\nua.mp4,stimulus,ok\nub.mp4,stimulus,"a cat\n'
        "uc.mp4,stimulus,a dog\nud.mp4,stimulus,a bird\n",
        "ua.mp4", "ub.mp4", "uc.mp4", "ud.mp4",
    )  # fmt: skip
    # when
    with pytest.raises(ImportFailed) as caught:
        study_import_manifest(study=study, manifest=manifest)
    # then: named by the line the unclosed quote's row starts on
    ((line, reason),) = caught.value.errors
    assert line == 3 and "never closed" in reason
    assert Stimulus.objects.count() == 0


def test_a_path_too_long_or_a_folder_is_refused_naming_its_line(tmp_path):
    study = make_study()
    (tmp_path / "clips").mkdir()
    long = "x" * 300 + ".mp4"
    manifest = write_text_manifest(tmp_path, f"path,role\nclips,stimulus\n{long},stimulus\n")
    with pytest.raises(ImportFailed) as caught:
        study_import_manifest(study=study, manifest=manifest)
    # before: the long one was an OSError traceback, the folder "file not found"
    assert caught.value.errors == [
        (2, "clips is a folder, not a video"),
        (3, f"cannot read {long[:80]}...: File name too long"),
    ]


def test_a_comma_at_the_end_of_the_header_is_named_so(tmp_path):
    # before: "unknown column ''"
    manifest = write_text_manifest(tmp_path, "path,role,\na.mp4,stimulus,\n", "a.mp4")
    with pytest.raises(ImportFailed) as caught:
        study_import_manifest(study=make_study(), manifest=manifest)
    assert caught.value.errors == [
        (1, "a column without a name (a comma at the end of the header?)")
    ]


def test_a_row_with_fewer_fields_than_the_header_is_refused(tmp_path):
    # given: a row that stops before its optional last columns, and one that gives them
    # empty
    study = make_study()
    manifest = write_text_manifest(
        tmp_path,
        "path,role,prompt,action\na.mp4,stimulus,a man running\nb.mp4,stimulus,,\n",
        "a.mp4",
        "b.mp4",
    )
    # when
    with pytest.raises(ImportFailed) as caught:
        study_import_manifest(study=study, manifest=manifest)
    # then: the short row only
    assert caught.value.errors == [
        (
            2,
            "3 fields but the header has 4 columns (a missing field is not an empty one: "
            "end the row with a comma for each empty one)",
        )
    ]
    assert Stimulus.objects.count() == 0


@pytest.mark.parametrize(("separator", "said"), [(";", "';'"), ("\t", "tabs")])
def test_a_manifest_separated_by_another_character_is_named_so(tmp_path, separator, said):
    # given: a spreadsheet's export with semicolons (or tabs) between the fields
    study = make_study()
    header = separator.join(["path", "role", "prompt"])
    manifest = write_text_manifest(
        tmp_path, f"{header}\n" + separator.join(["a.mp4", "stimulus", "x"]) + "\n", "a.mp4"
    )
    # when
    with pytest.raises(ImportFailed) as caught:
        study_import_manifest(study=study, manifest=manifest)
    # then: one error saying what is wrong, not three about missing and unknown columns
    assert caught.value.errors == [
        (
            1,
            f"the header is one column, {header!r}: the manifest must be separated by "
            f"commas, and this one seems separated by {said} (in a spreadsheet, save it as "
            "CSV UTF-8, comma-delimited)",
        )
    ]
    assert Stimulus.objects.count() == 0


def test_a_repeated_column_is_refused(tmp_path):
    study = make_study()
    manifest = write_text_manifest(
        tmp_path, "path,role,prompt,prompt\na.mp4,stimulus,first,second\n", "a.mp4"
    )
    with pytest.raises(ImportFailed) as caught:
        study_import_manifest(study=study, manifest=manifest)
    assert caught.value.errors == [(1, "column 'prompt' appears 2 times")]
    assert Stimulus.objects.count() == 0


@pytest.mark.parametrize(
    ("column", "limit"),
    [("action_class", 60), ("action", 120), ("source_model", 120), ("tutorial_pair", 80)],
)
def test_a_value_longer_than_its_field_is_reported_on_its_line(tmp_path, settings, column, limit):
    # given: one character too many
    study = make_study()
    rows = good_rows()
    rows[8 if column == "tutorial_pair" else 3][column] = "x" * (limit + 1)
    manifest = write_manifest(tmp_path, rows)
    # when
    with pytest.raises(ImportFailed) as caught:
        study_import_manifest(study=study, manifest=manifest)
    # then: a report, not a database error, and nothing stored
    line = 10 if column == "tutorial_pair" else 5
    expected = [(line, f"{column} is {limit + 1} characters long, at most {limit} allowed")]
    if column == "tutorial_pair":  # the other half's pair is then incomplete
        expected = [(9, "tutorial pair 'p1' needs one generated and one real video"), *expected]
    assert caught.value.errors == expected
    assert Stimulus.objects.count() == 0
    assert not any(Path(settings.MEDIA_ROOT).rglob("*.mp4"))


def tutorial_rows(pair: str, generated: str, real: str) -> list[dict]:
    return [
        {
            "path": path,
            "role": "tutorial",
            "tutorial_dimension": "subject",
            "tutorial_pair": pair,
            "tutorial_kind": kind,
            "caption": f"caption of {pair}",
        }
        for path, kind in ((generated, "generated"), (real, "real"))
    ]


def test_a_new_tutorial_pair_may_reuse_a_video_imported_before(tmp_path):
    # given: pair p1 imported
    study = make_study()
    study_import_manifest(
        study=study, manifest=write_manifest(tmp_path, tutorial_rows("p1", "g.mp4", "r.mp4"))
    )
    # when: a pair p2 with the same generated video and a new real one
    report = study_import_manifest(
        study=study, manifest=write_manifest(tmp_path, tutorial_rows("p2", "g.mp4", "r2.mp4"))
    )
    # then: p2 is made with the stored generated video
    assert (len(report.created), report.skipped, report.tutorial_pairs) == (
        1,
        [(2, "already imported (same checksum)")],
        1,
    )
    p1, p2 = TutorialPair.objects.filter(study=study).order_by("label")
    assert (p2.label, p2.generated_id, p2.real.original_name) == ("p2", p1.generated_id, "r2.mp4")
    assert p2.caption == "caption of p2"


def test_a_tutorial_label_already_used_for_other_videos_is_reported(tmp_path):
    study = make_study()
    study_import_manifest(
        study=study, manifest=write_manifest(tmp_path, tutorial_rows("p1", "g.mp4", "r.mp4"))
    )
    with pytest.raises(ImportFailed) as caught:
        study_import_manifest(
            study=study, manifest=write_manifest(tmp_path, tutorial_rows("p1", "g.mp4", "r2.mp4"))
        )
    assert caught.value.errors == [
        (
            2,
            "the study already has a tutorial pair 'p1' of other videos "
            "(give this pair another label)",
        )
    ]
    assert Stimulus.objects.filter(study=study).count() == 2


def test_a_tutorial_pair_of_an_unknown_dimension_is_refused_listing_the_study_s(tmp_path):
    rows = tutorial_rows("p1", "g.mp4", "r.mp4")
    for row in rows:
        row["tutorial_dimension"] = "Subject quality"  # the label, not the key
    with pytest.raises(ImportFailed) as caught:
        study_import_manifest(study=make_study(), manifest=write_manifest(tmp_path, rows))
    assert caught.value.errors[0] == (
        2,
        "tutorial_dimension 'Subject quality' is not a dimension of the study (subject, "
        "completeness, interaction)",
    )


def test_a_tutorial_half_stored_as_another_role_is_reported(tmp_path):
    study = make_study()
    study_import_manifest(
        study=study,
        manifest=write_manifest(tmp_path, [{"path": "g.mp4", "role": "stimulus"}]),
    )
    with pytest.raises(ImportFailed) as caught:
        study_import_manifest(
            study=study, manifest=write_manifest(tmp_path, tutorial_rows("p1", "g.mp4", "r.mp4"))
        )
    assert caught.value.errors == [(2, "the study already has this file as a stimulus video")]
    assert TutorialPair.objects.count() == 0


def test_unknown_dimension_column_is_refused(tmp_path):
    study = make_study()
    rows = good_rows()
    rows[5]["beauty_mean"] = "50"
    manifest = write_manifest(tmp_path, rows)
    with pytest.raises(ImportFailed) as caught:
        study_import_manifest(study=study, manifest=manifest)
    assert caught.value.errors == [
        (
            1,
            "unknown dimension 'beauty' in column 'beauty_mean' "
            "(the study's dimensions: completeness, interaction, subject)",
        )
    ]
    assert ExpertScore.objects.count() == 0


def test_expert_columns_before_the_question_set_say_to_import_it_first(tmp_path):
    # given: a questionnaire study that asks nothing yet
    study = make_study(design="questionnaire")
    study.dimensions.all().delete()
    rows = good_rows()
    rows[5]["overall_expert"] = "7"
    manifest = write_manifest(tmp_path, rows)
    # when / then: what to do, not "(the study's dimensions: )"
    with pytest.raises(ImportFailed) as caught:
        study_import_manifest(study=study, manifest=manifest)
    said = dict((message.split("'")[1], (line, message)) for line, message in caught.value.errors)
    line, message = said["overall_expert"]
    assert line == 1 and "names question 'overall', but the study asks no question yet" in message
    assert "--questions FILE" in message and "import_questions" in message


def test_every_bad_row_is_reported_at_once(tmp_path):
    study = make_study()
    rows = good_rows()
    rows[0].update(_missing=True, path="a.mp4")
    rows[5]["subject_sigma"] = "-1"
    manifest = write_manifest(tmp_path, rows)
    with pytest.raises(ImportFailed) as caught:
        study_import_manifest(study=study, manifest=manifest)
    assert caught.value.errors == [
        (2, "file not found: a.mp4"),
        (7, "subject_sigma must be above 0.0001 and at most the scale's width 100, got -1"),
    ]


@pytest.mark.parametrize("sigma", ["1e308", "1e-320", "0"])
def test_an_expert_sigma_that_cannot_decide_is_refused(tmp_path, sigma):
    # before: 1e308 and 1e-320 were imported, and then every answer passed (or failed)
    # the qualification test and the golden checks
    rows = good_rows()
    rows[5]["subject_sigma"] = sigma
    with pytest.raises(ImportFailed) as caught:
        study_import_manifest(study=make_study(), manifest=write_manifest(tmp_path, rows))
    ((line, message),) = caught.value.errors
    assert line == 7 and message.startswith("subject_sigma must be above 0.0001 and at most")


def test_a_failure_while_storing_rolls_everything_back(tmp_path, settings, monkeypatch):
    # given: the database refuses the 4th stimulus
    study = make_study()
    manifest = write_manifest(tmp_path, good_rows())
    original_save = Stimulus.save
    calls = {"n": 0}

    def failing_save(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 4:
            raise RuntimeError("disk full")
        return original_save(self, *args, **kwargs)

    monkeypatch.setattr(Stimulus, "save", failing_save)
    # when
    with pytest.raises(RuntimeError):
        study_import_manifest(study=study, manifest=manifest)
    # then: no rows, and the files already copied were removed
    assert Stimulus.objects.filter(study=study).count() == 0
    assert not any(p.is_file() for p in Path(settings.MEDIA_ROOT).rglob("*"))


@pytest.mark.django_db(transaction=True)
def test_a_stop_while_the_imported_videos_are_processed_keeps_them(tmp_path, settings):
    # given: in-process, the callback after commit runs the transcodes; a Ctrl-C in it
    study = make_study()
    manifest = write_manifest(tmp_path, good_rows())

    def stopped(stimulus_ids):
        raise KeyboardInterrupt

    # when
    with pytest.raises(KeyboardInterrupt):
        study_import_manifest(study=study, manifest=manifest, on_commit=stopped)
    # then: what committed keeps its files, for the sweep to process
    stimuli = Stimulus.objects.filter(study=study)
    assert stimuli.count() == 9
    assert all(Path(s.source_file.path).is_file() for s in stimuli)


def test_command_imports_and_splits_into_sessions(tmp_path, capsys):
    manifest = write_manifest(tmp_path, good_rows())
    call_command("import_study", str(manifest), "--study", "new", "--create", "New study")
    out = capsys.readouterr().out
    assert "imported 9 stimuli, 1 tutorial pairs, skipped 0; 1 new session(s)" in out
    session = Session.objects.get(study__slug="new")
    assert SessionItem.objects.filter(session=session, is_golden=False).count() == 5
    assert SessionItem.objects.filter(session=session, is_golden=True).count() == 1


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--create", "Again"], "a study 'new' exists already ('New study', slider): leave out"),
        (["--design", "ranking"], "study 'new' is a slider study, not ranking: nothing imported"),
    ],
)
def test_command_refuses_to_create_a_study_that_exists(tmp_path, flags, message):
    # given: a study made by a first import
    manifest = write_manifest(tmp_path, good_rows())
    call_command("import_study", str(manifest), "--study", "new", "--create", "New study")
    count = Stimulus.objects.filter(study__slug="new").count()
    # when: a second import names it as one to make (a pilot's slug reused, say)
    with pytest.raises(CommandError, match=re.escape(message)):
        call_command("import_study", str(manifest), "--study", "new", *flags)
    # then: nothing imported into it; without the flags the import goes in as before
    assert Stimulus.objects.filter(study__slug="new").count() == count
    call_command("import_study", str(manifest), "--study", "new", "--design", "slider")


def test_command_refuses_an_empty_name_to_create(tmp_path):
    # before: "no study 'new' (use --create NAME to create it)", NAME having been given
    manifest = write_manifest(tmp_path, good_rows())
    with pytest.raises(CommandError, match="--create needs the new study's name"):
        call_command("import_study", str(manifest), "--study", "new", "--create", " ")
    assert not Study.objects.filter(slug="new").exists()


def test_command_reports_bad_rows(tmp_path):
    rows = good_rows()
    rows[5]["subject_mean"] = "x"
    manifest = write_manifest(tmp_path, rows)
    with pytest.raises(CommandError) as caught:
        call_command("import_study", str(manifest), "--study", "new", "--create", "New")
    assert str(caught.value) == (
        "1 bad row(s), nothing imported:\nline 7: subject_mean is not a number: 'x'"
    )


def test_command_counts_bad_rows_apart_from_a_bad_header(tmp_path):
    # given: two unknown columns
    rows = good_rows()
    rows[0].update(colour="red", size="big")
    # when
    with pytest.raises(CommandError) as caught:
        call_command("import_study", str(write_manifest(tmp_path, rows)), "--study", "new",
                     "--create", "New")  # fmt: skip
    # then: the header is refused first, before any row is read: not "2 bad row(s)"
    assert str(caught.value).startswith("a bad header, nothing imported:\nline 1: unknown column")
    # and a row with two errors is one bad row
    refused = ImportFailed([(1, "a"), (3, "b"), (3, "c"), (5, "d")])
    assert refused.message.startswith("a bad header and 2 bad row(s), nothing imported:\n")


def test_a_study_created_for_a_failed_import_is_not_left_behind(tmp_path):
    rows = good_rows()
    rows[0].update(_missing=True, path="gone.mp4")
    manifest = write_manifest(tmp_path, rows)
    with pytest.raises(CommandError) as caught:
        call_command("import_study", str(manifest), "--study", "new", "--create", "New")
    assert "line 2: file not found: gone.mp4" in str(caught.value)
    assert not Study.objects.filter(slug="new").exists()
    assert not Dimension.objects.exists()


def test_an_existing_study_stays_when_its_import_fails(tmp_path):
    study = make_study()
    rows = good_rows()
    rows[0].update(_missing=True, path="gone.mp4")
    with pytest.raises(CommandError):
        call_command("import_study", str(write_manifest(tmp_path, rows)), "--study", study.slug)
    assert Study.objects.filter(pk=study.pk).exists()


def test_command_creates_a_propose_verify_study_with_its_vocabulary(tmp_path, capsys):
    # given: segments of a film, a golden one with the experts' actions (AVA's ids)
    columns = ["path", "role", "video_id", "keyframe", "x1", "y1", "x2", "y2", "person_id",
               "expert_actions"]  # fmt: skip
    box = {"x1": "0.1", "y1": "0.1", "x2": "0.5", "y2": "0.9", "video_id": "film"}
    rows = [
        {"path": "film.mp4", "role": "stimulus", "keyframe": "2", "person_id": "0", **box},
        {"path": "film.mp4", "role": "golden", "keyframe": "5", "person_id": "0",
         "expert_actions": "12|17", **box},
    ]  # fmt: skip
    manifest = write_manifest(tmp_path, rows, columns)
    # when: created with AVA's vocabulary, which the golden row's actions are checked against
    call_command("import_study", str(manifest), "--study", "ava", "--create", "AVA",
                 "--design", "propose_verify", "--vocabulary", "ava")  # fmt: skip
    # then
    study = Study.objects.get(slug="ava")
    assert Stimulus.objects.filter(study=study).count() == 2
    assert "imported 2 stimuli" in capsys.readouterr().out
    # and without it, the command says what is missing, and leaves no study behind
    with pytest.raises(CommandError, match="no vocabulary yet"):
        call_command("import_study", str(manifest), "--study", "ava2", "--create", "AVA",
                     "--design", "propose_verify")  # fmt: skip
    assert not Study.objects.filter(slug="ava2").exists()


def test_command_creates_a_questionnaire_with_its_question_set(tmp_path):
    # given: a video asked one of VGA-Bench's questions
    rows = [{"path": "a.mp4", "role": "stimulus", "questions": "aes_overall_score"}]
    manifest = write_manifest(tmp_path, rows)
    # when
    call_command("import_study", str(manifest), "--study", "vga", "--create", "VGA",
                 "--design", "questionnaire", "--questions", "vga-bench")  # fmt: skip
    # then
    study = Study.objects.get(slug="vga")
    assert study.dimensions.count() == 53
    assert Stimulus.objects.get(study=study).asked_questions == ["aes_overall_score"]


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--questions", "vga-bench", "only questionnaire studies take a question set"),
        ("--vocabulary", "ava", "only propose-then-verify studies take a vocabulary"),
        ("--vocabulary", "missing.yaml", "no file .missing.yaml., and no shipped template"),
    ],
)
def test_a_question_set_or_vocabulary_for_another_design_is_refused(
    tmp_path, option, value, message
):
    manifest = write_manifest(tmp_path, good_rows())
    design = "propose_verify" if value == "missing.yaml" else "slider"
    with pytest.raises(CommandError, match=message):
        call_command("import_study", str(manifest), "--study", "new", "--create", "New",
                     "--design", design, option, value)  # fmt: skip
    assert not Study.objects.exists()


@pytest.mark.parametrize(
    ("slug", "name", "message"),
    [
        (
            "Bad Slug!",
            "New",
            "--study 'Bad Slug!': Enter a valid “slug” consisting of letters, numbers, "
            "underscores or hyphens.",
        ),
        (
            "new",
            "N" * 300,
            "cannot create the study: Ensure this value has at most 200 characters (it has 300).",
        ),
    ],
)
def test_a_bad_study_is_a_command_error(tmp_path, slug, name, message):
    manifest = write_manifest(tmp_path, good_rows())
    with pytest.raises(CommandError) as caught:
        call_command("import_study", str(manifest), "--study", slug, "--create", name)
    assert str(caught.value) == message
    assert not Study.objects.exists()


def test_session_split_is_seeded_and_last_session_smaller():
    # given: 23 stimuli, sessions of 10, 3 golden in the pool, 2 per session
    from tests.factories import StimulusFactory

    study = make_study(session_size=10, golden_per_session=2, split_seed=42)
    stimuli = StimulusFactory.create_batch(23, study=study)
    StimulusFactory.create_batch(3, study=study, role=Stimulus.Role.GOLDEN)
    # when
    sessions = study_build_sessions(study=study)
    # then
    sizes = [s.items.filter(is_golden=False).count() for s in sessions]
    assert sizes == [10, 10, 3]
    assert all(s.items.filter(is_golden=True).count() == 2 for s in sessions)
    covered = SessionItem.objects.filter(session__study=study, is_golden=False)
    covered = covered.values_list("item__members__stimulus_id", flat=True)
    assert sorted(covered) == sorted(s.pk for s in stimuli)
    assert study_build_sessions(study=study) == []  # nothing new to split


def test_session_split_is_reproducible():
    from tests.factories import StimulusFactory

    splits = []
    for _ in range(2):
        study = make_study(session_size=4, split_seed=3)
        StimulusFactory.create_batch(9, study=study)
        study_build_sessions(study=study)
        ranks = {
            pk: i for i, pk in enumerate(study.stimuli.order_by("pk").values_list("pk", flat=True))
        }
        splits.append(
            [
                sorted(ranks[i.item.members.get().stimulus_id] for i in s.items.all())
                for s in study.sessions.all()
            ]
        )
    assert splits[0] == splits[1]


@pytest.mark.parametrize(
    ("name", "suffix"),
    [("a." + "x" * 200, "bin"), ("a." + "视" * 80, "bin"), ("a.MP4", "mp4"), ("noext", "bin")],
)
def test_a_source_is_stored_under_its_checksum_and_a_plain_suffix(tmp_path, name, suffix):
    # given: a file whose extension alone is 200 letters, or 240 bytes of CJK (with the
    # checksum, over the file system's 255 bytes: an OSError; Django cut the checksum
    # short to fit the field)
    study = make_study()
    manifest = write_text_manifest(tmp_path, f"path,role\n{name},stimulus\n", name)
    # when
    study_import_manifest(study=study, manifest=manifest)
    # then
    stimulus = Stimulus.objects.get()
    checksum = stimulus.checksum
    assert stimulus.source_file.name == f"sources/{checksum[:2]}/{checksum}.{suffix}"
    assert stimulus.original_name == name
    assert stimulus.source_file.read() == video_bytes(f"video bytes of {name}")


def test_an_expert_score_in_the_admin_is_checked_as_an_imported_one():
    from django.core.exceptions import ValidationError

    from annotation.models import ExpertScore
    from tests.factories import StimulusFactory

    study = make_study()
    golden = StimulusFactory(study=study, role="golden")
    dimension = study.dimensions.first()
    bad = ExpertScore(stimulus=golden, dimension=dimension, mean=150.0, sigma=1e308)
    with pytest.raises(ValidationError) as refused:
        bad.full_clean()
    assert set(refused.value.message_dict) == {"mean", "sigma"}
    ExpertScore(stimulus=golden, dimension=dimension, mean=60.0, sigma=8.0).full_clean()
