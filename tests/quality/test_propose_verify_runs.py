"""Analysis runs of a propose-then-verify study (AVA): the kept labels against crowd-kit,
the AVA export read back as AVA's tools read it, the verdicts export through `python -m
quality verify`, where each kept label came from, stage 1's recall and times, the
results page and the downloads."""

import csv
import io
import json

import krippendorff
import pandas as pd
import pytest
from crowdkit.aggregation import BinaryRelevance, MajorityVote
from django.test import Client

from annotation.designs.propose_study import settings_of
from annotation.models import Assignment, Item, ItemMember, Stimulus
from annotation.models.session import pseudonym_for
from annotation.services.admin_actions import assignment_exclude
from annotation.services.verify_queue import verify_queue_fill
from quality.cli import main as quality_cli
from quality.designs.propose_verify import EXPORTS
from quality.designs.propose_verify_data import verdicts_frame
from quality.designs.propose_verify_exports import ava_lines
from quality.services import analysis_run_execute, analysis_run_request
from tests.annotation.design_fixtures import SMALL_VOCABULARY, Answerer, tiny_propose_study
from tests.annotation.rater_fixtures import consent_and_tutorial, rater_client
from tests.factories import UserFactory
from tests.quality.rated import received_later, run_now

pytestmark = pytest.mark.django_db

VOCABULARY = {action["id"]: action["name"] for action in SMALL_VOCABULARY["actions"]}
# Regular segments by person_id: what proposers P0, P1, P2 propose (None: flag the box).
PROPOSALS = {
    0: ([12, 17], [12], [12, 79]),
    1: ([12], [12, 48], [11]),
    2: ([14], [14, 80], [14, 17]),
    3: (None, None, [12]),  # two of three flag the box: set aside for staff
}
OTHER_ACTION = {(2, 0): "juggle"}  # (person_id, proposer): the "other action" text
# What verifiers V0, V1, V2 say yes to (every other candidate: no).
YES = {
    0: ({12, 17}, {12}, {12, 17, 79}),  # kept: 12 (3 yes), 17 (2); dropped: 79 (1)
    1: ({12}, {11, 12}, {11}),  # kept: 11, 12; dropped: 48 (0)
    2: ({14}, {14, 80}, set()),  # kept: 14; dropped: 80 (1), 17 (0)
}
KEPT = {0: [12, 17], 1: [11, 12], 2: [14]}
PROPOSE_SECONDS, VERIFY_SECONDS = (18, 20, 22), (8, 10, 15)
BOX = [0.1, 0.2, 0.5, 0.9]  # every segment's (tiny_propose_study)


def segment_of(item: dict) -> Stimulus:
    return ItemMember.objects.select_related("stimulus").get(item__public_id=item["id"]).stimulus


def take_session(tiny, values) -> tuple[str, Assignment]:
    """A new rater qualifies (rightly) and answers the session served: `values(item,
    segment)` gives the values and the seconds it took. Returns the rater's pseudonym."""
    client, user = rater_client()
    consent_and_tutorial(client, tiny)
    answerer = Answerer("propose_verify")
    while (body := client.get(tiny.base + "next/").json())["step"] == "qualification":
        sent = client.post(tiny.base + "answers/", answerer.answer(body["item"]), format="json")
        assert sent.status_code == 201, sent.json()
    while (item := client.get(tiny.base + "next/").json()["item"]) is not None:
        chosen, seconds = values(item, segment_of(item))
        times = {
            "shown_at": "2026-11-22T10:00:00Z",
            "answered_at": f"2026-11-22T10:00:{seconds:02d}Z",
        }
        sent = client.post(tiny.base + "answers/", answerer.answer(item, **chosen, **times),
                           format="json")  # fmt: skip
        assert sent.status_code == 201, sent.json()
        if sent.json()["position"] >= sent.json()["length"]:
            break
    assignment = Assignment.objects.get(rater__user=user)
    assert assignment.state == "finished" and assignment.eligible_for_next
    return pseudonym_for(user.rater.pk), assignment


def proposer(index: int):
    def values(item: dict, segment: Stimulus) -> tuple[dict, int]:
        if segment.role == Stimulus.Role.GOLDEN:  # P2 misses carry/hold: recall 0.5
            return {"labels": [12] if index == 2 else [12, 17]}, 5
        person = segment.segment["person_id"]
        labels = PROPOSALS[person][index]
        chosen = {"labels": labels or [], "flags": {"bad_box": labels is None}}
        chosen["other_action"] = OTHER_ACTION.get((person, index), "")
        return chosen, PROPOSE_SECONDS[index]

    return values


def verifier(index: int):
    def values(item: dict, segment: Stimulus) -> tuple[dict, int]:
        if segment.role == Stimulus.Role.GOLDEN:
            return Answerer.propose_verify(item), 5
        yes = YES[segment.segment["person_id"]][index]
        return {"verdicts": {str(c["id"]): c["id"] in yes for c in item["candidates"]}}, (
            VERIFY_SECONDS[index]
        )

    return values


@pytest.fixture
def labelled():
    """Four regular segments (person 0 to 3 of one video), three proposers and, once the
    verify queue has filled, three verifiers; the golden gate at 0.5 (P2's recall)."""
    tiny = tiny_propose_study(stimuli=4, proposers=3, verifiers=3)
    chosen = settings_of(tiny.study)
    chosen.golden_pass_share = 0.5
    chosen.save()
    proposers = [take_session(tiny, proposer(i)) for i in range(3)]
    # The queue runs on commit, which a test in one transaction never reaches; the
    # flagged segment (set aside) comes last, after which the verify sessions are made.
    segments = Item.objects.filter(study=tiny.study, role="stimulus", dimension__key="propose")
    for item in segments.order_by("pk"):
        verify_queue_fill(item_id=item.pk)
    verifiers = [take_session(tiny, verifier(i)) for i in range(3)]
    return tiny, proposers, verifiers


def staff_client() -> Client:
    client = Client()
    client.force_login(UserFactory(is_staff=True))
    return client


def download(client: Client, study, name: str):
    response = client.get(f"/api/studies/{study.slug}/exports/{name}")
    assert response.status_code == 200, response.content
    body = (
        b"".join(response.streaming_content)
        if response.streaming
        else response.content
    )  # fmt: skip
    return response, body.decode()


def cli_kept(verdicts_csv: str, folder) -> tuple[set[tuple[str, int]], object]:
    """`python -m quality verify --keep 2` on the verdicts export: (its kept labels, DIR)."""
    verdicts = folder / "verdicts.csv"
    verdicts.write_text(verdicts_csv)
    out = folder / "out"
    assert quality_cli(["verify", str(verdicts), "--out", str(out), "--keep", "2"]) == 0
    cli = pd.read_csv(out / "labels.csv", dtype=str)
    return {(r.item_id, int(r.label)) for r in cli.itertuples() if r.kept == "True"}, out


def kept_by_person(run) -> dict[int, list[int]]:
    return {s["person_id"]: s["kept"] for s in run.summary["segments"]}


@pytest.mark.filterwarnings("ignore:The inplace keyword")  # inside crowd-kit
def test_a_run_keeps_the_labels_crowd_kit_keeps(labelled):
    tiny, _, _ = labelled
    # when
    run = run_now(tiny.study)
    # then: 2 of 3 verifiers said yes, as planned; the flagged segment is not verified
    assert kept_by_person(run) == KEPT
    counts = run.summary["counts"]
    assert [counts[k] for k in ("verdicts", "verifiers", "items", "labels", "kept")] == [
        27, 3, 3, 9, 5,
    ]  # fmt: skip
    # and: crowd-kit's binary relevance over majority vote on the same verdicts
    verdicts = verdicts_frame(study=tiny.study)
    yes = verdicts[verdicts["verdict"] == "yes"].groupby(["item_id", "rater_id"])["label"]
    answers = verdicts[["item_id", "rater_id"]].drop_duplicates()
    answers["label"] = [
        sorted(yes.get_group((i, r))) if (i, r) in yes.groups else []
        for i, r in answers.itertuples(index=False)
    ]
    crowd = BinaryRelevance(MajorityVote()).fit_predict(
        answers.rename(columns={"item_id": "task", "rater_id": "worker"})
    )
    ours = {s["item_id"]: sorted(str(a) for a in s["kept"]) for s in run.summary["segments"]}
    assert {task: sorted(labels) for task, labels in crowd.items()} == ours
    # and: the verifiers' alpha (nominal; a unit per segment and candidate label), as the
    # krippendorff package computes it
    units = verdicts.pivot(index=["item_id", "label"], columns="rater_id", values="verdict")
    matrix = (units == "yes").astype(float).to_numpy().T
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
    assert run.summary["alpha"] == pytest.approx(expected)
    # and: the per-label counts, with the actions' names
    counts = {c["action_id"]: c for c in run.summary["label_counts"]}
    assert counts[12] == {"action_id": 12, "action": "stand", "group": "pose", "proposed": 6,
                          "verified": 2, "kept": 2}  # fmt: skip
    assert (counts[17]["proposed"], counts[17]["verified"], counts[17]["kept"]) == (2, 2, 1)


def test_stage_one_recall_times_set_aside_and_other_actions(labelled):
    tiny, proposers, _ = labelled
    run = run_now(tiny.study)
    summary = run.summary
    # recall of the union of k proposers on the golden segments: 12 found by all three,
    # 17 by two of three (r_1 = 2/3, r_2 = r_3 = 1), over two golden segments
    recall = summary["recall"]
    assert recall["curve"] == pytest.approx({"1": 5 / 6, "2": 1.0, "3": 1.0})
    assert recall["proposer_recall"] == {proposers[0][0]: 1.0, proposers[1][0]: 1.0,
                                         proposers[2][0]: 0.5}  # fmt: skip
    # seconds per regular segment, per stage, beside AVA's
    assert summary["times"]["propose"] == {"answers": 12, "timed": 12, "median_s": 20.0,
                                           "mean_s": 20.0, "ava_s": 22.0}  # fmt: skip
    assert summary["times"]["verify"] == {"answers": 9, "timed": 9, "median_s": 10.0,
                                          "mean_s": 11.0, "ava_s": 19.7}  # fmt: skip
    # the segment two of three proposers flagged, and the other action
    (aside,) = summary["set_aside"]
    assert (aside["person_id"], aside["bad_box"], aside["inappropriate"]) == (3, 2, 0)
    assert [(o["person_id"], o["rater_id"], o["text"]) for o in summary["other_actions"]] == [
        (2, proposers[0][0], "juggle")
    ]
    assert summary["settings"] == {"keep": 2, "proposers_per_item": 3, "verifiers_per_item": 3}
    assert run.code_version == summary["version"] == "quality.stats.verify/1"
    assert run.ratings_count == 12 + 9


def read_ava(text: str, vocabulary: set[int]) -> list[tuple]:
    """AVA's published CSV as its evaluation code reads it: no header, eight columns
    (video_id, middle_frame_timestamp, x1, y1, x2, y2, action_id, person_id), the
    timestamp whole seconds, corners in [0, 1], action ids of the vocabulary."""
    rows = []
    for row in csv.reader(io.StringIO(text)):
        assert len(row) == 8, row
        video, timestamp, *corners, action, person = row
        box = [float(c) for c in corners]  # a header line fails here
        assert all(0.0 <= c <= 1.0 for c in box) and box[0] < box[2] and box[1] < box[3]
        assert int(action) in vocabulary
        rows.append((video, int(timestamp), *box, int(action), int(person)))
    return rows


def test_the_ava_export_reads_back_as_the_kept_labels_with_their_boxes(labelled):
    tiny, _, _ = labelled
    run = run_now(tiny.study)
    response, text = download(staff_client(), tiny.study, "ava.csv")
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert text.splitlines()[0] == "film,0002,0.100,0.200,0.500,0.900,12,0"
    rows = read_ava(text, set(VOCABULARY))
    keyframes = {s["person_id"]: s["keyframe"] for s in run.summary["segments"]}
    expected = [
        ("film", int(keyframes[person]), *BOX, action, person)
        for person, actions in sorted(KEPT.items())
        for action in actions
    ]
    assert rows == expected


def test_the_verdicts_export_feeds_the_cli_which_keeps_the_same_labels(labelled, tmp_path):
    tiny, _, (_, _, (v2, v2_session)) = labelled
    assignment_exclude(assignment=v2_session, reason="test", by=UserFactory(is_staff=True))
    run = run_now(tiny.study)
    # the excluded session's verdicts are marked in the export and recorded in the run
    _, text = download(staff_client(), tiny.study, "verdicts.csv")
    frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    assert list(frame.columns) == ["rater_id", "item_id", "label", "verdict", "session_id",
                                   "excluded"]  # fmt: skip
    assert set(frame.loc[frame["rater_id"] == v2, "excluded"]) == {"admin_excluded_session"}
    assert set(frame.loc[frame["rater_id"] != v2, "excluded"]) == {""}
    (exclusion,) = run.exclusions
    assert (exclusion["rater_id"], exclusion["ratings"]) == (v2, 3)  # its three segments
    # when: the CLI on the export as it is (it leaves the marked verdicts out)
    kept, out = cli_kept(text, tmp_path)
    # then: the same kept labels and alpha as the run's
    ours = {(r["item_id"], r["action_id"]) for r in run.summary["labels"] if r["kept"]}
    assert kept == ours and ours
    assert json.loads((out / "summary.json").read_text())["alpha"] == pytest.approx(
        run.summary["alpha"]
    )


def test_provenance_names_the_proposers_and_verifiers_of_each_kept_label(labelled):
    tiny, proposers, verifiers = labelled
    run = run_now(tiny.study)
    person = {s["item_id"]: s["person_id"] for s in run.summary["segments"]}
    found = {
        (person[p["item_id"]], p["action_id"]): (
            [who.split(":")[0] for who in p["proposed_by"]],
            [who.split(":")[0] for who in p["yes_by"]],
            [who.split(":")[0] for who in p["no_by"]],
        )
        for p in run.summary["provenance"]
    }
    p, v = [rater for rater, _ in proposers], [rater for rater, _ in verifiers]
    assert found == {
        (0, 12): (p, v, []),
        (0, 17): ([p[0]], [v[0], v[2]], [v[1]]),
        (1, 11): ([p[2]], [v[1], v[2]], [v[0]]),
        (1, 12): ([p[0], p[1]], [v[0], v[1]], [v[2]]),
        (2, 14): (p, [v[0], v[1]], [v[2]]),
    }
    # each entry is the rater and their answer
    (entry, *_) = run.summary["provenance"][0]["yes_by"]
    rater, answer = entry.split(":")
    assert Assignment.objects.filter(answers__pk=int(answer)).get().rater_id == int(rater[1:])
    # the export: one row per kept label, the entries joined by "|"
    response, text = download(staff_client(), tiny.study, "provenance.csv")
    frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    assert list(frame.columns) == ["item_id", "action_id", "proposed_by", "yes_by", "no_by"]
    assert len(frame) == 5
    assert set(frame["yes_by"].str.split("|").str.len()) == {2, 3}


def test_the_results_page_shows_labels_recall_times_and_set_aside(labelled):
    tiny, _, _ = labelled
    run = run_now(tiny.study)
    client = staff_client()
    page = client.get(f"/studies/{tiny.study.slug}/results/").content.decode()
    for part in ('id="kept-labels"', 'id="label-counts"', 'id="proposal-recall"',
                 'id="stage-times"', 'id="set-aside"', 'id="other-action-table"'):  # fmt: skip
        assert part in page
    assert '<span class="tag">17 carry/hold (an object)</span>' in page
    assert 'data-k="3"' in page and "0.833" in page
    assert "<td>22.0</td>" in page and "<td>19.7</td>" in page
    assert "juggle" in page and page.count('data-item="') == 3 + 1 + 1
    for name in ("proposal-recall", "label-counts"):
        figure = client.get(f"/api/analysis-runs/{run.pk}/figures/{name}.png")
        assert figure.status_code == 200 and figure["Content-Type"] == "image/png"


def test_every_export_downloads_with_its_content_type(labelled):
    tiny, _, _ = labelled
    run_now(tiny.study)
    client = staff_client()
    types = {name: "text/csv; charset=utf-8" for name in EXPORTS}
    types["provenance.json"] = "application/json"
    for name in EXPORTS:
        response, text = download(client, tiny.study, name)
        assert response["Content-Type"] == types[name], name
        assert text, name
    _, labels = download(client, tiny.study, "labels.csv")
    frame = pd.read_csv(io.StringIO(labels))
    assert list(frame.columns) == ["item_id", "video_id", "keyframe", "person_id", "action_id",
                                   "action", "yes", "no", "kept"]  # fmt: skip
    assert (len(frame), int(frame["kept"].sum())) == (9, 5)
    _, proposals = download(client, tiny.study, "proposals.csv")
    frame = pd.read_csv(io.StringIO(proposals), dtype=str, keep_default_na=False)
    assert (frame["action_id"] != "").sum() == 15  # every label proposed on a regular segment
    flagged = frame[(frame["action_id"] == "") & (frame["bad_box"] == "True")]
    assert len(flagged) == 2 and set(frame["excluded"]) == {""}
    assert frame.loc[frame["other_action"] != "", "other_action"].tolist() == ["juggle"]


def test_a_run_before_any_verdict_fails_saying_why():
    tiny = tiny_propose_study()
    run = analysis_run_request(study=tiny.study)
    analysis_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "failed"
    assert run.error.startswith("no verdicts yet: 0 stage-1 answers on 0 segments so far")


def test_a_run_with_every_verdict_excluded_fails_saying_why(labelled):
    tiny, _, verifiers = labelled
    admin = UserFactory(is_staff=True)
    for _, session in verifiers:
        assignment_exclude(assignment=session, reason="test", by=admin)
    run = analysis_run_request(study=tiny.study)
    analysis_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert (run.status, run.error) == (
        "failed",
        "every one of the study's 27 verdicts is excluded (admin_excluded_session)",
    )


def test_the_ava_lines_are_byte_for_byte_avas():
    # given: AVA's first published line as a segment, and one with a fractional keyframe
    # and a finer box
    summary = {
        "segments": [
            {"video_id": "-5KQ66BBWC4", "keyframe": 902.0, "person_id": 1, "kept": [80, 12],
             "box": [0.077, 0.151, 0.283, 0.811]},
            {"video_id": "clip", "keyframe": 2.5, "person_id": 0, "kept": [14],
             "box": [0.0, 0.1234567, 1.0, 0.5]},
        ]
    }  # fmt: skip
    # then: no spreadsheet quote before "-", four-digit whole seconds, three decimals
    assert "".join(ava_lines(summary)) == (
        "-5KQ66BBWC4,0902,0.077,0.151,0.283,0.811,12,1\n"
        "-5KQ66BBWC4,0902,0.077,0.151,0.283,0.811,80,1\n"
        "clip,2.5,0.000,0.123457,1.000,0.500,14,0\n"
    )


def test_provenance_names_the_proposals_the_verify_item_was_made_from(labelled):
    # given: segment 0's verify item recorded as made from its first proposer's answer
    # only (as when the other proposals came from sessions excluded at the time)
    from annotation.models import StageLink

    tiny, proposers, _ = labelled
    link = StageLink.objects.get(
        propose_item__study=tiny.study,
        propose_item__role="stimulus",
        propose_item__members__stimulus__segment__person_id=0,
    )
    first = min(link.proposals)
    link.proposals = [first]
    link.save()
    # when
    run = run_now(tiny.study)
    # then: only that answer is named as the source of segment 0's labels
    person = {s["item_id"]: s["person_id"] for s in run.summary["segments"]}
    named = {
        p["action_id"]: p["proposed_by"] for p in run.summary["provenance"]
        if person[p["item_id"]] == 0
    }  # fmt: skip
    assert named[12] == [f"{proposers[0][0]}:{first}"]
    assert named[17] == [f"{proposers[0][0]}:{first}"]


def test_a_label_only_excluded_proposers_gave_is_left_out_everywhere(labelled, tmp_path):
    # given: proposer 0 excluded after the verifiers judged the segments; segment 0's
    # "17" came from proposer 0 alone, its "12" from all three
    tiny, proposers, _ = labelled
    (p0, p0_session), (p1, _), (p2, _) = proposers
    assignment_exclude(assignment=p0_session, reason="careless", by=UserFactory(is_staff=True))
    # when
    run = run_now(tiny.study)
    # then: segment 0 keeps "12" (proposed by counted raters too), not "17"
    assert kept_by_person(run)[0] == [12]
    person = {s["item_id"]: s["person_id"] for s in run.summary["segments"]}
    assert (0, 17) not in {(person[r["item_id"]], r["action_id"]) for r in run.summary["labels"]}
    assert run.summary["counts"]["verdicts_on_excluded_proposals"] == 3  # three verifiers
    # and provenance names only counted proposers
    named = {(person[p["item_id"]], p["action_id"]): p["proposed_by"]
             for p in run.summary["provenance"]}  # fmt: skip
    assert [who.split(":")[0] for who in named[(0, 12)]] == [p1, p2]
    assert [who.split(":")[0] for who in named[(1, 12)]] == [p1]
    # and the verdicts export marks the verdicts on "17", so the CLI reproduces the run
    _, text = download(staff_client(), tiny.study, "verdicts.csv")
    frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    segment0 = next(item for item, p in person.items() if p == 0)
    on_17 = (frame["item_id"] == segment0) & (frame["label"] == "17")
    assert set(frame.loc[on_17, "excluded"]) == {"proposers_excluded"}
    assert set(frame.loc[~on_17, "excluded"]) == {""}
    kept, _ = cli_kept(text, tmp_path)
    assert kept == {(r["item_id"], r["action_id"]) for r in run.summary["labels"] if r["kept"]}


def test_verdicts_received_after_a_run_started_are_neither_in_it_nor_in_its_export(labelled):
    # given: the last verifier's verdicts arrived after the run started
    tiny, _, _ = labelled
    later = received_later(tiny.study)
    every = verdicts_frame(study=tiny.study)
    theirs = (every["rater_id"] == later[0]) & (every["session_id"] == later[1])
    # when
    run = run_now(tiny.study)
    _, text = download(staff_client(), tiny.study, "verdicts.csv")
    # then: its export holds the others only, and so did the run
    table = pd.read_csv(io.StringIO(text), keep_default_na=False)
    shown = {(r, int(s)) for r, s in zip(table["rater_id"], table["session_id"], strict=True)}
    assert theirs.any() and later not in shown and len(table) == len(every) - theirs.sum()
    assert run.summary["counts"]["verdicts"] == (table["excluded"] == "").sum()
