"""``python -m quality COMMAND``: hostile input to every command. Bad input is refused
with exit 2 and a message naming the problem (and its line), with nothing written to DIR
(an existing DIR left as it was); harmless oddities (a UTF-8 BOM, CRLF line ends, extra
columns, spaces around a number) give the same outputs as the plain file."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from quality.cli import main
from quality.stats.labels.answers import ANSWER_COLUMNS
from quality.stats.labels.csv_input import _read_careful, _read_fast

GOOD = {
    "analyze": "rater_id,video_id,dimension,score\n"
    + "".join(f"r{r},v{v},d,{(v * 10 + r * 3) % 100}\n" for r in range(4) for v in range(6)),
    "compare": "rater_id,question,content_id,left,right,choice\n"
    + "".join(
        f"r{r},q,c{c},{a},{b},{choice}\n"
        for r in range(3)
        for c in range(2)
        for a, b, choice in [
            ("x", "y", "left"),
            ("y", "z", "left"),
            ("x", "z", "right"),
            ("z", "x", "right"),
            ("y", "x", "equal"),
        ]
    ),
    "rank": "rater_id,question,prompt_id,ranking\n"
    + "".join(
        f"r{r},q,p{p},{'x>z>y' if r == 1 else 'x>y>z'}\n" for r in range(4) for p in range(3)
    ),
    "labels": "rater_id,item_id,question,kind,answer\n"
    "a,v1,q,score,3\nb,v1,q,score,4\na,v2,q,score,5\nb,v2,q,score,5\n",
    "verify": "rater_id,item_id,label,verdict\na,v1,cat,yes\nb,v1,cat,yes\nc,v1,cat,no\n",
    "sequence": "video_id,dimension,score\nv,q,3\nv,q,5\nw,q,50\n",
}
OPTIONS = {
    "analyze": ["--draws", "5"],
    "compare": ["--bootstrap", "3", "--prior", "0"],
    "rank": ["--bootstrap", "3"],
}
COMMANDS = list(GOOD)
# (command, column of a number, its index in the header)
NUMBER_FIELDS = [("analyze", 3), ("labels", 4), ("sequence", 2)]


def lines(command: str) -> list[str]:
    return GOOD[command].splitlines()


def with_field(command: str, line: int, column: int, value: str) -> str:
    """GOOD[command] with field ``column`` of line ``line`` (the header is line 1) set."""
    rows = lines(command)
    fields = rows[line - 1].split(",")
    fields[column] = value
    rows[line - 1] = ",".join(fields)
    return "\n".join(rows) + "\n"


def run(command, path, out, *extra) -> int:
    return main([command, str(path), "--out", str(out), *OPTIONS.get(command, []), *extra])


def write(tmp_path: Path, content: str | bytes, name: str = "in.csv") -> Path:
    path = tmp_path / name
    if isinstance(content, str):
        content = content.encode()
    path.write_bytes(content)
    return path


def outputs(out: Path) -> dict[str, str]:
    """DIR's files as {name: text}."""
    return {p.name: p.read_text() for p in sorted(out.iterdir())}


def plain_outputs(tmp_path: Path, command: str) -> dict[str, str]:
    folder = tmp_path / "plain"
    folder.mkdir()
    assert run(command, write(folder, GOOD[command]), folder / "out") == 0
    return outputs(folder / "out")


def assert_refused(code, capsys, out: Path, *messages: str, before=None) -> str:
    """Exit 2, every message on stderr, no traceback, DIR absent (or as it was)."""
    err = capsys.readouterr().err
    assert code == 2, err
    for message in messages:
        assert message in err
    assert "Traceback" not in err
    if before is None:
        assert not out.exists()
        assert [p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")] == []
    else:
        assert outputs(out) == before
    return err


@pytest.fixture
def existing_out(tmp_path) -> Path:
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text("previous run")
    return out


# -- encodings and line ends ---------------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS)
def test_a_utf8_bom_before_the_header_is_accepted(tmp_path, command):
    # A spreadsheet's "CSV UTF-8" starts with a BOM: the column names must still match.
    path = write(tmp_path, b"\xef\xbb\xbf" + GOOD[command].encode())
    assert run(command, path, tmp_path / "out") == 0
    assert outputs(tmp_path / "out") == plain_outputs(tmp_path, command)


@pytest.mark.parametrize("line_end", ["\r\n", "\r"])
@pytest.mark.parametrize("command", COMMANDS)
def test_crlf_and_cr_line_ends_give_the_same_outputs(tmp_path, command, line_end):
    path = write(tmp_path, GOOD[command].replace("\n", line_end))
    assert run(command, path, tmp_path / "out") == 0
    assert outputs(tmp_path / "out") == plain_outputs(tmp_path, command)


@pytest.mark.parametrize("line_end", ["\n", "\r\n"])
@pytest.mark.parametrize("command", COMMANDS)
def test_blank_lines_between_and_after_the_rows_are_skipped(tmp_path, command, line_end):
    # given: a blank line after the second row and two at the end (an editor's or a
    # spreadsheet's), the score then empty as every other field
    rows = lines(command)
    text = "\n".join([*rows[:3], "", *rows[3:], "", ""]) + "\n"
    path = write(tmp_path, text.replace("\n", line_end))
    # when / then: the same outputs as the plain file's
    assert run(command, path, tmp_path / "out") == 0
    assert outputs(tmp_path / "out") == plain_outputs(tmp_path, command)


@pytest.mark.parametrize(("separator", "named"), [(";", "';'"), ("\t", "tabs")])
@pytest.mark.parametrize("command", COMMANDS)
def test_a_file_separated_by_semicolons_or_tabs_is_refused_saying_so(
    tmp_path, capsys, command, separator, named
):
    # given: a spreadsheet's export in a comma-decimal locale (semicolons, and a decimal
    # comma in a score, which makes a row longer than its header) or a TSV
    text = GOOD[command].replace(",", separator).replace("50", "50,5")
    path = write(tmp_path, text)
    # when
    code = run(command, path, tmp_path / "out")
    # then: one message that says what the separator is and what to do, nothing written
    assert_refused(
        code,
        capsys,
        tmp_path / "out",
        "the header is one column",
        f"this one seems separated by {named} (in a spreadsheet, save it as CSV UTF-8, "
        "comma-delimited)",
    )


def test_scores_for_rank_separated_by_semicolons_are_refused_saying_so(tmp_path, capsys):
    scores = write(tmp_path, "condition;score\nx;1\ny;2\nz;3\n", "scores.csv")
    code = run("rank", write(tmp_path, GOOD["rank"]), tmp_path / "out", "--against", str(scores))
    assert_refused(code, capsys, tmp_path / "out", f"{scores}: the header is one column")


@pytest.mark.parametrize("spelling", ["Score", " score", "SCORE "])
@pytest.mark.parametrize("command", COMMANDS)
def test_a_column_name_in_capitals_or_with_spaces_is_named_in_the_message(
    tmp_path, capsys, command, spelling
):
    # given: the header's last column ("score", "answer", "verdict", ...) misspelt
    rows = lines(command)
    names = rows[0].split(",")
    wanted = names[-1]
    names[-1] = spelling.replace("score", wanted).replace("Score", wanted.title())
    names[-1] = names[-1].replace("SCORE", wanted.upper())
    path = write(tmp_path, "\n".join([",".join(names), *rows[1:]]) + "\n")
    # then: the message names the cell that is nearly the column, and the rule
    assert_refused(
        run(command, path, tmp_path / "out"),
        capsys,
        tmp_path / "out",
        f"missing column(s): {wanted} (the header has {names[-1]!r}: column names are "
        "matched exactly, in lower case without spaces)",
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_latin1_bytes_are_refused_naming_the_line(tmp_path, capsys, existing_out, command):
    path = write(tmp_path, with_field(command, 3, 0, "r\xe9").encode("latin-1"))
    before = outputs(existing_out)
    code = run(command, path, existing_out)
    assert_refused(
        code, capsys, existing_out, str(path), "line 3: not UTF-8 text (byte 0xe9)", before=before
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_a_latin1_header_is_refused_naming_line_1(tmp_path, capsys, command):
    path = write(tmp_path, ("caf\xe9," + GOOD[command]).encode("latin-1"))
    out = tmp_path / "out"
    assert_refused(run(command, path, out), capsys, out, "line 1: not UTF-8 text")


@pytest.mark.parametrize("command", COMMANDS)
def test_ten_megabytes_of_garbage_are_refused_at_once(tmp_path, capsys, command):
    garbage = random.Random(7).randbytes(10_000_000)
    path = write(tmp_path, garbage)
    out = tmp_path / "out"
    err = assert_refused(run(command, path, out), capsys, out, str(path))
    assert "a NUL byte (a binary or damaged file" in err  # the first check that fails
    # and without NUL bytes, garbage is not UTF-8 text
    path = write(tmp_path, garbage.replace(b"\x00", b"\xff"))
    assert_refused(run(command, path, out), capsys, out, str(path), "not UTF-8 text")


# -- the shape of the file -----------------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS)
def test_a_header_without_a_line_end_and_no_rows_is_refused(tmp_path, capsys, command):
    path = write(tmp_path, lines(command)[0])
    out = tmp_path / "out"
    assert_refused(run(command, path, out), capsys, out, str(path), "(only a header)")


@pytest.mark.parametrize("command", COMMANDS)
def test_a_first_row_with_too_many_fields_is_refused_naming_line_2(tmp_path, capsys, command):
    rows = lines(command)
    path = write(tmp_path, "\n".join([rows[0], rows[1] + ",9", *rows[2:]]) + "\n")
    out = tmp_path / "out"
    assert_refused(run(command, path, out), capsys, out, str(path), "line 2")


@pytest.mark.parametrize("command", COMMANDS)
def test_a_later_row_with_too_many_fields_is_refused_naming_its_line(tmp_path, capsys, command):
    rows = lines(command)
    path = write(tmp_path, "\n".join([*rows[:2], rows[2] + ",9", *rows[3:]]) + "\n")
    out = tmp_path / "out"
    assert_refused(run(command, path, out), capsys, out, str(path), "line 3")


@pytest.mark.parametrize("command", ["analyze", "compare", "rank", "labels", "verify"])
def test_a_long_row_after_a_quoted_line_break_is_named_by_its_line_in_the_file(
    tmp_path, capsys, command
):
    # given: a quoted id holding a line break (lines 3 and 4), then a row with an extra
    # field on line 5; pandas counts records, and said "line 4" in its own words
    rows = lines(command)
    first = rows[2].split(",")
    first[0] = '"r\nx"'
    path = write(tmp_path, "\n".join([*rows[:2], ",".join(first), rows[3] + ",9", *rows[4:]]))
    out = tmp_path / "out"
    header = len(rows[0].split(","))
    assert_refused(
        run(command, path, out),
        capsys,
        out,
        f"{path}: line 5: {header + 1} field(s) where the header has {header}\n",
    )


# (command, a row whose value is refused) after a row with a quoted line break
BAD_VALUE_ROWS = {
    "analyze": ("r9,v1,d,x", "score 'x'"),
    "compare": ("r9,q,c0,x,y,maybe", "choice 'maybe'"),
    "rank": ("r9,q,p0,x>x", "lists condition 'x' twice"),
    "labels": ("z,v1,q,score,x", "score 'x'"),
    "verify": ("z,v1,cat,maybe", "verdict 'maybe'"),
    "sequence": ("v,q,x", "score 'x'"),
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("break_", ["\n", "\r\n"])
def test_a_bad_value_after_a_quoted_line_break_is_named_by_its_line_in_the_file(
    tmp_path, capsys, command, break_
):
    # given: a quoted id of three lines (lines 3 to 5), then a bad value on line 6 (before,
    # the readers took row i for line i + 2, and said "line 4")
    rows = lines(command)
    first = rows[2].split(",")
    first[0] = f'"r{break_}x{break_}y"'
    bad, said = BAD_VALUE_ROWS[command]
    path = write(tmp_path, "\n".join([*rows[:2], ",".join(first), bad, *rows[3:]]) + "\n")
    out = tmp_path / "out"
    # then
    err = assert_refused(run(command, path, out), capsys, out, said)
    assert "line 6" in err, err


@pytest.mark.parametrize("command", COMMANDS)
def test_a_row_missing_its_last_field_is_refused_naming_its_line(tmp_path, capsys, command):
    # The missing field reads as empty, which none of these last columns may be.
    rows = lines(command)
    path = write(tmp_path, "\n".join([*rows[:2], rows[2].rsplit(",", 1)[0], *rows[3:]]) + "\n")
    out = tmp_path / "out"
    assert_refused(run(command, path, out), capsys, out, "line 3")


# (command, file) where the row on line 3 lacks a last field that may be empty: a tags
# answer with no tag, an optional session id, an empty-looking field after a quoted one.
SHORT_BUT_EMPTY_ALLOWED = {
    "labels": "rater_id,item_id,question,kind,answer\na,v1,q,tags,x\nb,v1,q,tags\nc,v1,q,tags,\n",
    "analyze": "rater_id,video_id,dimension,score,session_id\nr0,v1,d,50,s1\nr0,v2,d,40\n"
    "r1,v1,d,60,\n",
}


@pytest.mark.parametrize("command", list(SHORT_BUT_EMPTY_ALLOWED))
def test_a_row_missing_a_field_that_may_be_empty_is_refused_naming_its_line(
    tmp_path, capsys, command
):
    # pandas reads a missing field as empty text, the same as an empty field.
    path = write(tmp_path, SHORT_BUT_EMPTY_ALLOWED[command])
    out = tmp_path / "out"
    assert_refused(
        run(command, path, out), capsys, out, f"{path}: line 3: 4 field(s) where the header has 5"
    )


def test_empty_last_fields_and_a_quoted_line_break_are_not_short_rows(tmp_path, capsys):
    # given: quoted ids spanning two lines and empty tags answers
    header = "rater_id,item_id,question,kind,answer\n"
    good = header + 'a,"v\n1",q,tags,x\nb,"v\n1",q,tags,\nc,v2,q,tags,\n'
    assert run("labels", write(tmp_path, good, "good.csv"), tmp_path / "out") == 0
    # when the next row, on line 7 of the file, lacks its answer (pyarrow's parser
    # declines the file, pandas reads it)
    short = good + "d,v2,q,tags\n"
    assert _read_fast(short.encode(), ANSWER_COLUMNS, categorical=False) is None
    path = write(tmp_path, short, "short.csv")
    # then the message names its line in the file, counting the quoted line breaks
    out = tmp_path / "out2"
    assert_refused(run("labels", path, out), capsys, out, f"{path}: line 7: 4 field(s)")


@pytest.mark.parametrize("values", ["same", "different"])
@pytest.mark.parametrize("command", COMMANDS)
def test_a_column_named_twice_is_refused(tmp_path, capsys, command, values):
    # Which of the two is meant? Refused, whether or not they agree.
    rows = lines(command)
    first = rows[0].split(",")[0]
    extra = [row.split(",")[0] if values == "same" else "zz" for row in rows[1:]]
    content = "\n".join(
        [f"{rows[0]},{first}"] + [f"{r},{e}" for r, e in zip(rows[1:], extra, strict=True)]
    )
    path = write(tmp_path, content + "\n")
    out = tmp_path / "out"
    message = f"the header names column(s) twice: {first}"
    assert_refused(run(command, path, out), capsys, out, str(path), message)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_column_named_like_a_renamed_duplicate_is_just_an_extra_column(tmp_path, command):
    rows = lines(command)
    first = rows[0].split(",")[0]
    path = write(tmp_path, "\n".join([f"{rows[0]},{first}.1"] + [f"{r},x" for r in rows[1:]]))
    assert run(command, path, tmp_path / "out") == 0
    assert outputs(tmp_path / "out") == plain_outputs(tmp_path, command)


@pytest.mark.parametrize("command", COMMANDS)
def test_extra_unknown_columns_are_ignored(tmp_path, command):
    rows = lines(command)
    content = "\n".join([f"note,{rows[0]},other"] + [f'"a, b",{r},=1+1' for r in rows[1:]])
    path = write(tmp_path, content + "\n")
    assert run(command, path, tmp_path / "out") == 0
    assert outputs(tmp_path / "out") == plain_outputs(tmp_path, command)


@pytest.mark.parametrize("command", COMMANDS)  # sequence: ratings.csv in arrival order
def test_rows_a_raw_export_marks_excluded_are_left_out_and_counted(tmp_path, capsys, command):
    # given: the plain file with an `excluded` column (a raw export's), empty or blank
    # where a row counts, plus rows marked excluded that would change every output
    rows = lines(command)
    junk = with_field(command, 2, 0, "intruder").splitlines()[1]
    content = "\n".join(
        [f"{rows[0]},excluded"]
        + [f"{r},{' ' if i % 2 else ''}" for i, r in enumerate(rows[1:])]
        + [f"{junk},golden_gate_failed", f"{rows[-1]},admin_excluded_session"]
    )
    path = write(tmp_path, content + "\n")
    # when
    assert run(command, path, tmp_path / "out") == 0
    # then: the plain file's outputs, and the count said
    assert "2 row(s) marked excluded in the file left out" in capsys.readouterr().out
    assert outputs(tmp_path / "out") == plain_outputs(tmp_path, command)


@pytest.mark.parametrize("command", COMMANDS)  # sequence: ratings.csv in arrival order
def test_a_file_whose_every_row_is_marked_excluded_is_refused(tmp_path, capsys, command):
    rows = lines(command)
    content = "\n".join([f"{rows[0]},excluded"] + [f"{r},line_clicker" for r in rows[1:]])
    path = write(tmp_path, content + "\n")
    code = run(command, path, tmp_path / "out")
    assert_refused(code, capsys, tmp_path / "out", f"every one of its {len(rows) - 1} ")


@pytest.mark.parametrize("command", ["labels", "verify", "sequence", "analyze"])
def test_a_100_kb_id_is_kept_whole(tmp_path, command):
    column = {"analyze": 1, "labels": 1, "verify": 1, "sequence": 0}[command]
    text = "x" * 100_000
    path = write(tmp_path, with_field(command, 2, column, text))
    assert run(command, path, tmp_path / "out") == 0
    written = "".join(outputs(tmp_path / "out").values())
    assert f"\n{text}," in written


@pytest.mark.parametrize("command", COMMANDS)
def test_a_nul_byte_is_refused_naming_its_line(tmp_path, capsys, command):
    # no id holds one (the platform's database cannot store it, so no export has one):
    # before, "a\x00b" was kept as an id of its own, one rater made two
    path = write(tmp_path, with_field(command, 3, 0, "a\x00b"))
    out = tmp_path / "out"
    assert_refused(run(command, path, out), capsys, out, "line 3: a NUL byte")


# -- numbers -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["1_0", "\uff11", "1e400", "nan", "-inf", '"3,5"', "0x10", "3 4", "\xa03"]
)
@pytest.mark.parametrize(("command", "column"), NUMBER_FIELDS)
def test_scores_that_are_not_plain_finite_numbers_are_refused(
    tmp_path, capsys, command, column, text
):
    # Python's float() takes "1_0" as 10 and a full-width "1" as 1; pandas' parser does not.
    path = write(tmp_path, with_field(command, 3, column, text))
    out = tmp_path / "out"
    assert_refused(run(command, path, out), capsys, out, "line 3: score")


@pytest.mark.parametrize("text", ["1e308", "-1e13", "1000000000001"])
@pytest.mark.parametrize(("command", "column"), [("analyze", 3), ("labels", 4)])
def test_scores_beyond_a_trillion_are_refused_naming_the_line(
    tmp_path, capsys, command, column, text
):
    # A stray 1e308 made the std, the interval and the label's std infinite ("inf" in
    # the CSV) and alpha undefined, without a word.
    path = write(tmp_path, with_field(command, 3, column, text))
    out = tmp_path / "out"
    err = assert_refused(run(command, path, out), capsys, out, "line 3: score")
    assert "is beyond ±1e+12 (no rating scale is that wide)" in err
    # the score as written, or as the number read, not rounded ("score 1e+12 is beyond")
    assert f"score {text!r} is" in err or f"score {float(text)!r} is" in err


@pytest.mark.parametrize(("command", "column"), [("analyze", 3), ("labels", 4)])
def test_a_score_of_a_trillion_is_read(tmp_path, command, column):
    path = write(tmp_path, with_field(command, 3, column, "-1e12"))
    assert run(command, path, tmp_path / "out") == 0


@pytest.mark.parametrize("text", ["1_0", "\uff11", "1e400", "nan", '"3,5"'])
def test_model_scores_that_are_not_plain_finite_numbers_are_refused(tmp_path, capsys, text):
    rankings = write(tmp_path, GOOD["rank"])
    scores = write(tmp_path, f"condition,score\nx,3\ny,{text}\nz,1\n", "scores.csv")
    out = tmp_path / "out"
    code = run("rank", rankings, out, "--against", str(scores))
    assert_refused(code, capsys, out, str(scores), "line 3: score")


@pytest.mark.parametrize(("text", "same_as"), [(" 3 ", "3"), ("+3", "3"), ("3.", "3"), ("-0", "0")])
@pytest.mark.parametrize(("command", "column"), NUMBER_FIELDS)
def test_spaces_and_signs_around_a_number_read_as_the_number(
    tmp_path, command, column, text, same_as
):
    path = write(tmp_path, with_field(command, 3, column, text))
    assert run(command, path, tmp_path / "out") == 0
    plain = tmp_path / "plain"
    plain.mkdir()
    path = write(plain, with_field(command, 3, column, same_as))
    assert run(command, path, plain / "out") == 0
    assert outputs(tmp_path / "out") == outputs(plain / "out")


# -- paths ---------------------------------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS)
def test_a_folder_given_as_the_input_is_refused(tmp_path, capsys, command):
    folder = tmp_path / "folder.csv"
    folder.mkdir()
    out = tmp_path / "out"
    assert_refused(run(command, folder, out), capsys, out, str(folder))


@pytest.mark.parametrize("command", COMMANDS)
def test_an_out_that_is_a_file_is_refused_before_any_work(tmp_path, capsys, command):
    out = write(tmp_path, "mine", "out.txt")
    code = run(command, write(tmp_path, GOOD[command]), out)
    err = capsys.readouterr().err
    assert code == 2 and "is a file, not a folder" in err and str(out) in err
    assert out.read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "out.txt"]


@pytest.mark.parametrize("command", COMMANDS)
def test_an_out_under_a_file_is_refused(tmp_path, capsys, command):
    parent = write(tmp_path, "mine", "file")
    code = run(command, write(tmp_path, GOOD[command]), parent / "sub" / "out")
    err = capsys.readouterr().err
    assert code == 2 and f"{parent} is a file, not a folder" in err
    assert parent.read_text() == "mine"


# the file each command writes that an input in DIR could be named as
WRITTEN = {
    "analyze": "subjective_mle.csv",
    "compare": "pairs.csv",
    "rank": "consensus.csv",
    "labels": "labels.csv",
    "verify": "summary.json",
    "sequence": "sequence.csv",
}


@pytest.mark.parametrize("command", COMMANDS)
def test_an_input_in_out_named_as_an_output_is_refused_not_overwritten(tmp_path, capsys, command):
    out = tmp_path / "out"
    out.mkdir()
    path = write(out, GOOD[command], WRITTEN[command])
    before = outputs(out)
    code = run(command, path, out)
    assert_refused(code, capsys, out, "would replace the input", before=before)
    # the same folder written another way (DIR/./) is the same folder
    code = run(command, path, out / ".")
    assert_refused(code, capsys, out, "would replace the input", before=before)
    assert run(command, write(out, GOOD[command], "input.csv"), out) == 0
    assert (out / "input.csv").read_text() == GOOD[command]


@pytest.mark.parametrize("command", COMMANDS)
def test_an_empty_out_is_refused_not_taken_for_the_current_folder(
    tmp_path, capsys, monkeypatch, command
):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        run(command, write(tmp_path, GOOD[command]), "")
    assert exit_.value.code == 2
    assert "--out: needs a folder's name" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into any folder")
@pytest.mark.parametrize("command", COMMANDS)
def test_an_out_in_a_folder_without_write_permission_is_refused(tmp_path, capsys, command):
    path = write(tmp_path, GOOD[command])
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        code = run(command, path, locked / "out")
    finally:
        locked.chmod(0o700)
    err = capsys.readouterr().err
    assert code == 2 and "permission denied" in err
    assert list(locked.iterdir()) == []


# -- option values -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "option", "message"),
    [
        ("analyze", ["--seed", "-1"], "--seed must be 0 or more"),
        ("analyze", ["--slider-step", "inf"], "--slider-step"),
        ("analyze", ["--slider-step", "nan"], "--slider-step"),
        ("analyze", ["--srcc-max-n", "0"], "--srcc-max-n"),
        ("analyze", ["--confidence", "1"], "--confidence"),
        ("analyze", ["--line-click-share", "nan"], "--line-click-share"),
        ("compare", ["--seed", "-1"], "--seed must be 0 or more"),
        ("compare", ["--prior", "nan"], "error: --prior must be a finite number >= 0"),
        ("compare", ["--bootstrap", "-1"], "error: --bootstrap must be 0 or more"),
        ("compare", ["--confidence", "1"], "error: --confidence must be in (0, 1)"),
        ("rank", ["--screen-alpha", "1"], "error: --screen-alpha must be in (0, 1)"),
        ("rank", ["--pl-prior-weight", "inf"], "error: --pl-prior-weight must be a finite"),
        ("rank", ["--bootstrap", "-1"], "error: --bootstrap must be 0 or more"),
        ("labels", ["--tolerance", "inf"], "--tolerance"),
        ("labels", ["--keep-share", "nan"], "--keep-share"),
        ("verify", ["--keep", "-1"], "--keep"),
        ("sequence", ["--alpha", "0"], "--alpha"),
        ("sequence", ["--alpha", "nan"], "--alpha"),
        ("sequence", ["--low", "nan"], "--low"),
        ("sequence", ["--low=-1e308", "--high", "1e308"], "--low must be below --high"),
        ("sequence", ["--grid-size", "10000000000"], "--grid-size"),
    ],
)
def test_option_values_out_of_range_exit_2_naming_the_option(
    tmp_path, capsys, command, option, message
):
    out = tmp_path / "out"
    code = run(command, write(tmp_path, GOOD[command]), out, *option)
    assert_refused(code, capsys, out, message)


# -- the answers reader's two parsers ------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        b"\xef\xbb\xbf" + GOOD["labels"].encode(),
        GOOD["labels"].replace("\n", "\r\n").encode(),
        GOOD["labels"].replace("\n", "\r").encode(),
        GOOD["labels"].replace("a,v2", '"a\nx",v2').encode(),
        GOOD["labels"].replace("a,v2", "x" * 2_000_000 + ",v2").encode(),
        GOOD["labels"].replace("\nb,v2", "\n\n,,,,\nb,v2").encode(),
        GOOD["labels"].rstrip("\n").encode(),
    ],
)
def test_pyarrows_fast_path_reads_what_pandas_reads(content):
    fast = _read_fast(content, ANSWER_COLUMNS, categorical=False)
    careful = _read_careful(content, "in.csv")
    assert fast is not None
    for column in ANSWER_COLUMNS:
        assert fast[column].tolist() == careful[column].tolist()


@pytest.mark.parametrize(
    "content",
    [
        GOOD["labels"].replace("a,v2", "\xe9,v2").encode("latin-1"),
        GOOD["labels"].replace("\na,v2", "\na,v2,extra"),
        GOOD["labels"].replace("\na,v2,q,score,5", "\na,v2"),
        "\n".join(f"{row},{row.split(',')[0]}" for row in GOOD["labels"].splitlines()),
        "\n" + GOOD["labels"],
    ],
)
def test_files_pyarrow_complains_about_go_to_pandas(content):
    data = content if isinstance(content, bytes) else content.encode()
    assert _read_fast(data, ANSWER_COLUMNS, categorical=True) is None


@pytest.mark.parametrize(
    ("command", "line", "column", "value", "message"),
    [
        ("labels", 3, 4, "x", "line 3: score 'x' is not a finite number"),
        ("verify", 3, 3, "maybe", "line 3:"),
    ],
)
def test_an_error_found_past_the_reader_names_the_file_too(
    tmp_path, capsys, command, line, column, value, message
):
    path = write(tmp_path, with_field(command, line, column, value))
    err = assert_refused(run(command, path, tmp_path / "out"), capsys, tmp_path / "out", message)
    assert f"error: {path}: line {line}:" in err


@pytest.mark.parametrize("longer", [False, True])
@pytest.mark.parametrize("seed", range(20))
def test_short_and_long_lines_are_counted_in_numpy_as_the_csv_module_counts_them(seed, longer):
    # given: quote-free files with blank lines, CRLF or LF ends, perhaps no final line end
    import csv
    import io

    from quality.stats.ratings_csv import _first_line_with

    rng = random.Random(seed)
    end = rng.choice(["\n", "\r\n"])
    rows = ["a,b,c,d"]
    for _ in range(rng.randint(1, 30)):
        kind = rng.random()
        if kind < 0.15:
            rows.append("")
        else:
            fields = 4 if kind < 0.85 else rng.randint(1, 3) if kind < 0.92 else rng.randint(5, 6)
            rows.append(",".join(rng.choice(["x", "", "7"]) for _ in range(fields)))
    data = (end.join(rows) + rng.choice(["", end])).encode()
    # then: the first short (long) line as the csv module finds it
    records = csv.reader(io.StringIO(data.decode(), newline=""))
    next(records)
    wrong = (lambda r: len(r) > 4) if longer else (lambda r: 0 < len(r) < 4 and r != [""])
    expected = next(((records.line_num, len(r)) for r in records if wrong(r)), None)
    assert _first_line_with(data, 4, longer=longer) == expected
