"""The propose-then-verify widget in Chromium (AVA, PROTOCOL.md 3.4): the tutorial's
worked examples; a rater proposes labels for segments (by search and by clicks, a flag
on one), the verify items appear as the proposals commit, and a second rater verifies
them (by clicks and by keys); the limits hold in the page; proposals given offline are
sent once, in order."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from annotation.designs.propose_study import settings_of
from annotation.models import (
    Answer,
    Item,
    Proposal,
    ProposalFlags,
    StageLink,
    Stimulus,
    Verdict,
)
from annotation.services.studies import study_build_sessions
from annotation.services.study_import import study_import_manifest
from annotation.services.vocabularies import vocabulary_apply, vocabulary_from
from media_pipeline.ffmpeg.synth import make_clip
from media_pipeline.services.transcode_jobs import stimuli_enqueue_processing
from tests.annotation.design_fixtures import EXPERT_ACTIONS, SMALL_VOCABULARY, running_study
from tests.annotation.rater_fixtures import TinyStudy
from tests.frontend.rater_browser import agree, contrast, delivered, enter, wait_step

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

STAND, SIT, WALK, CARRY, READ, TALK, WATCH = 12, 11, 14, 17, 48, 79, 80
FILM_SIZE = (320, 180)
# The film's "people": filled boxes (corners as shares of the frame) and the manifest's
# segments of them: three regular ones and a golden one with the experts' labels.
PEOPLE = ((0.10, 0.20, 0.35, 0.90, "orange"), (0.60, 0.15, 0.85, 0.85, "cyan"))
SEGMENTS = (
    ("stimulus", "2", 0, ""),
    ("stimulus", "4", 0, ""),
    ("stimulus", "4", 1, ""),
    ("golden", "6", 1, "|".join(map(str, EXPERT_ACTIONS))),
)
# The tutorial's worked examples: both people at 3 s, the experts' labels and why.
EXAMPLES = (
    ("tutorial", "3", 0, f"{TALK}|{STAND}", "Standing, speaking to the other person."),
    ("tutorial", "3", 1, f"{SIT}|{WATCH}", "Seated, watching the speaker."),
)


def write_manifest(folder: Path, segments=SEGMENTS) -> Path:
    manifest = folder / "manifest.csv"
    columns = ["path", "role", "video_id", "keyframe", "x1", "y1", "x2", "y2", "person_id",
               "expert_actions", "note"]  # fmt: skip
    with open(manifest, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        for role, keyframe, person, expert, *note in segments:
            x1, y1, x2, y2, _ = PEOPLE[person]
            writer.writerow(
                {"path": "film.mp4", "role": role, "video_id": "film", "keyframe": keyframe,
                 "x1": x1, "y1": y1, "x2": x2, "y2": y2, "person_id": person,
                 "expert_actions": expert, "note": "".join(note)}
            )  # fmt: skip
    return manifest


@pytest.fixture
def propose_study(tmp_path):
    """A running propose-then-verify study of the small vocabulary: three people's
    segments and a golden one cut from one real 8 s film by the media pipeline (1 s
    segments, so that watching one takes a second), one proposer and one verifier a
    segment, one golden item a session, no qualification test; settings override
    (``examples=True``: the tutorial's two worked examples too)."""

    def build(examples: bool = False, **settings) -> TinyStudy:
        segments = SEGMENTS + EXAMPLES if examples else SEGMENTS
        settings = {"golden_per_session": 1, "qualification_size": 0, **settings}
        settings.setdefault("instructions", "Watch each segment, then label the person.")
        settings.setdefault("consent_text", "I agree that my answers are used for research.")
        max_labels = settings.pop("max_labels", None)
        study = running_study(design="propose_verify", **settings)
        vocabulary_apply(study=study, vocabulary=vocabulary_from(SMALL_VOCABULARY))
        chosen = settings_of(study)
        chosen.proposers_per_item = chosen.verifiers_per_item = chosen.keep_at_least = 1
        chosen.segment_seconds = 1.0
        chosen.max_labels = max_labels or chosen.max_labels
        chosen.save()
        width, height = FILM_SIZE
        make_clip(path=tmp_path / "film.mp4", width=width, height=height, fps=10, seconds=8.0,
                  shapes=PEOPLE)  # fmt: skip
        # the import commits (a live-server test's transactions are real): the pipeline
        # cuts and transcodes each segment in-process then
        study_import_manifest(
            study=study,
            manifest=write_manifest(tmp_path, segments),
            on_commit=stimuli_enqueue_processing,
        )
        made = Stimulus.objects.filter(study=study)
        assert [s.status for s in made] == ["ready"] * len(segments), [
            s.processing_error for s in made
        ]
        study_build_sessions(study=study)
        return TinyStudy(study, list(made.filter(role=Stimulus.Role.GOLDEN)), [])

    return build


# --- driving the widget ------------------------------------------------------------------


def start_session(page, live_server, tiny, pid: str) -> None:
    enter(page, live_server, tiny, pid)
    agree(page)
    page.wait_for_selector("#tutorial-empty:not([hidden])")
    page.click("#tutorial-done")
    wait_step(page, "rating")


def shown(page) -> tuple[str, str]:
    """Wait until the segment on screen has played through once: (item id, stage)."""
    page.wait_for_selector("#step-rating[data-ready]:not([hidden]) .widget-propose-verify")
    page.wait_for_selector(".pv-answers:not(:disabled)")
    item = page.locator("#step-rating").get_attribute("data-item")
    return item, Item.objects.get(public_id=item).dimension.key


def segment_of(item: str) -> Stimulus:
    return Item.objects.get(public_id=item).members.get().stimulus


def save(page, item: str, *, by_key: bool = False) -> None:
    """Save the answer on screen and wait until the page has moved past it."""
    if by_key:
        page.keyboard.press("Enter")
    else:
        page.click("#next")
    page.wait_for_function(
        """item => document.querySelector('#rater').dataset.step !== 'rating'
                   || document.querySelector('#step-rating').dataset.item !== item""",
        arg=item,
    )


def pick(page, *actions: int) -> None:
    for action in actions:
        page.click(f'.pv-action[data-action="{action}"]')


def find(page, text: str) -> None:
    """Type into the search and press Enter (which picks a single match)."""
    page.fill("#pv-search", text)
    page.press("#pv-search", "Enter")


def chips(page) -> list[int]:
    return [
        int(a) for a in page.eval_on_selector_all(".pv-chip", "c => c.map(n => n.dataset.action)")
    ]


def proposal_of(item: str) -> tuple[list[int], dict]:
    answer = Answer.objects.get(item__public_id=item, assignment__isnull=False)
    labels = sorted(
        Proposal.objects.filter(answer=answer).values_list("action__action_id", flat=True)
    )
    flags = ProposalFlags.objects.filter(answer=answer).values(
        "other_action", "inappropriate", "bad_box"
    )
    return labels, flags.get()


def propose_session(page) -> dict[str, tuple[list[int], dict]]:
    """Propose for every segment of the session, a different way each: the golden one
    the experts' labels by clicks; the first regular one only a flag, the others labels
    by search and by clicks, one with an other action. What each was given, by item."""
    given = {}
    regular = 0
    while wait_step(page, "rating", "message", "finished") == "rating":
        item, stage = shown(page)
        assert stage == "propose"
        no_flags = {"other_action": "", "inappropriate": False, "bad_box": False}
        if segment_of(item).role == Stimulus.Role.GOLDEN:
            pick(page, *EXPERT_ACTIONS)
            given[item] = (sorted(EXPERT_ACTIONS), no_flags)
        elif regular == 0:
            page.check('input[data-flag="bad_box"]')
            given[item] = ([], {**no_flags, "bad_box": True})
        elif regular == 1:
            find(page, "sta")  # stand: the only match
            find(page, "rea")  # read
            pick(page, TALK)
            assert chips(page) == [STAND, READ, TALK]
            given[item] = ([STAND, READ, TALK], no_flags)
        else:
            pick(page, SIT, CARRY)
            page.fill("#pv-other", "juggle")
            given[item] = ([SIT, CARRY], {**no_flags, "other_action": "juggle"})
        regular += segment_of(item).role == Stimulus.Role.STIMULUS
        save(page, item)
    delivered(page)
    return given


def candidates(page) -> list[int]:
    return [
        int(a)
        for a in page.eval_on_selector_all(".pv-candidate", "c => c.map(n => n.dataset.action)")
    ]


FOCUSED_LABEL = """() => {
    const named = document.activeElement.getAttribute('aria-labelledby');
    return named && document.getElementById(named).textContent;
}"""


def said(page) -> str:
    return page.locator('[data-field="said"]').inner_text()


def verify_session(page) -> dict[str, dict[int, bool]]:
    """Verify every item of the session: the first by clicks (yes, no, yes, ...), the
    others by keys (y, n, y, ... down the list, then up, K or ↑, to change the last but
    one to yes, down, J or ↓, to change the last to no, Enter), checking that the focus
    follows the keys and each answer is said. The verdicts given, by item."""
    given = {}
    while wait_step(page, "rating", "message", "finished") == "rating":
        item, stage = shown(page)
        assert stage == "verify"
        shown_ids = candidates(page)
        stored = Item.objects.get(public_id=item).candidates.order_by("order")
        assert shown_ids == list(stored.values_list("action__action_id", flat=True))
        verdicts = {action: index % 2 == 0 for index, action in enumerate(shown_ids)}
        names = page.locator(".pv-candidate .pv-name").all_inner_texts()
        # each row's Yes and No, a group named by its label, say which label they answer
        for name in names:
            group = page.get_by_role("group", name=name, exact=True)
            assert group.get_by_role("button", name=f"Yes: {name}", exact=True).count() == 1
            assert group.get_by_role("button", name=f"No: {name}", exact=True).count() == 1
        if not given:
            for action, verdict in verdicts.items():
                page.click(
                    f'.pv-candidate[data-action="{action}"] .pv-{"yes" if verdict else "no"}'
                )
            assert page.locator("#next").is_enabled()
            save(page, item)
        else:
            # the keys start on the first label, with the focus
            assert page.evaluate(FOCUSED_LABEL) == names[0]
            for index in range(len(shown_ids)):
                assert page.locator("#next").is_disabled()
                page.keyboard.press("y" if index % 2 == 0 else "n")
                assert said(page) == f"{names[index]}: {'Yes' if index % 2 == 0 else 'No'}"
                if index + 1 < len(names):  # the focus went on to the next label
                    assert page.evaluate(FOCUSED_LABEL) == names[index + 1]
            up, down = ("k", "j") if len(given) == 1 else ("ArrowUp", "ArrowDown")
            page.keyboard.press(up)
            assert page.evaluate(FOCUSED_LABEL) == names[-2]
            page.keyboard.press("y")
            assert said(page) == f"{names[-2]}: Yes"
            page.keyboard.press(down)
            assert page.evaluate(FOCUSED_LABEL) == names[-1]
            page.keyboard.press("n")
            verdicts[shown_ids[-2]], verdicts[shown_ids[-1]] = True, False
            save(page, item, by_key=True)
        given[item] = verdicts
    delivered(page)
    return given


# --- the tests ---------------------------------------------------------------------------


def test_the_tutorial_shows_each_worked_example_with_its_box_labels_and_why(
    page, live_server, propose_study
):
    # given: a study with two worked examples, the two people of one keyframe
    tiny = propose_study(examples=True)
    enter(page, live_server, tiny, "P1")
    # when
    agree(page)
    page.locator(".exemplar").first.wait_for()
    # then: under the propose stage's question, each segment with the person's box
    # drawn over it, the experts' labels named with their groups, and why
    group = page.locator(".exemplar-group")
    assert group.locator("h2").all_inner_texts() == ["Propose actions"]
    examples = page.locator(".exemplar")
    assert examples.count() == 2
    boxes = page.eval_on_selector_all(
        ".exemplar .pv-frame",
        "frames => frames.map(f => [!!f.querySelector('video'), f.querySelector('.pv-box')"
        ".style.left, f.querySelector('.pv-box').style.width])",
    )
    assert boxes == [[True, "10%", "25%"], [True, "60%", "25%"]]
    # then: each is tried first with the propose stage's picker, the experts' labels
    # hidden and Check closed until a pose is picked
    assert examples.locator(".expert:visible").count() == 0
    first, second = examples.nth(0), examples.nth(1)
    assert first.locator(".exemplar-check").is_disabled()
    # when: a pose picked by a click and an action found by the search (Enter), then the
    # second example's two labels by clicks
    first.get_by_role("button", name="stand", exact=True).click()
    first.locator(".pv-search").fill("watch")
    first.locator(".pv-search").press("Enter")
    first.locator(".exemplar-check").click()
    second.get_by_role("button", name="sit", exact=True).click()
    second.get_by_role("button", name="watch (a person)", exact=True).click()
    second.locator(".exemplar-check").click()
    # then: the rater's recall of the experts' labels, and what they gave that the
    # experts did not; each example's picker its own
    assert examples.locator(".exemplar-yours").all_inner_texts() == [
        "You gave 1 of the experts' 2 labels (a recall of 50%, what the test counts). "
        "The experts did not give: watch (a person) (Person-person).",
        "You gave 2 of the experts' 2 labels (a recall of 100%, what the test counts).",
    ]
    assert first.locator(".pv-chip").count() == 2 and second.locator(".pv-chip").count() == 2
    assert examples.locator(".expert:visible").count() == 2
    assert examples.locator(".expert").all_inner_texts() == [
        "The experts' answer: stand (Pose) · talk to (e.g., self, a person, a group) "
        "(Person-person)",
        "The experts' answer: sit (Pose) · watch (a person) (Person-person)",
    ]
    assert examples.locator(".why").all_inner_texts() == [
        "Why: Standing, speaking to the other person.",
        "Why: Seated, watching the speaker.",
    ]
    assert page.locator("#tutorial-empty").is_hidden()
    # and: on to the sessions (this study has no qualification test), as the button says
    assert page.locator("#tutorial-done").inner_text() == "Start rating"
    page.click("#tutorial-done")
    wait_step(page, "rating")


def test_proposals_are_stored_as_given_and_a_second_rater_verifies_them(
    page, browser, live_server, propose_study
):
    tiny = propose_study()
    # when: the first rater proposes for the session's four segments
    start_session(page, live_server, tiny, "P1")
    given = propose_session(page)
    # then: every proposal stored as clicked
    assert len(given) == 4
    assert {item: proposal_of(item) for item in given} == given
    # and each regular segment's proposal became its verify item (the flagged one is set
    # aside for staff), with the proposed labels as candidates
    links = StageLink.objects.filter(propose_item__study=tiny.study, propose_item__role="stimulus")
    assert links.count() == 3
    assert links.filter(set_aside=True).count() == 1
    # when: a second rater verifies in another browser
    other = browser.new_context(viewport={"width": 1280, "height": 800}, bypass_csp=True)
    try:
        second = other.new_page()
        start_session(second, live_server, tiny, "P2")
        verified = verify_session(second)
    finally:
        other.close()
    # then: the regular segments' candidates were their proposals (the golden one's,
    # the experts' labels among others); each verdict stored as answered
    assert len(verified) == 3
    regular = [
        set(verdicts) for item, verdicts in verified.items() if segment_of(item).role == "stimulus"
    ]
    assert sorted(regular, key=len) == [{SIT, CARRY}, {STAND, READ, TALK}]
    for item, verdicts in verified.items():
        answer = Answer.objects.get(item__public_id=item, assignment__isnull=False)
        stored = dict(
            Verdict.objects.filter(answer=answer).values_list("action__action_id", "verdict")
        )
        assert stored == verdicts


def hint(page) -> str:
    return page.locator("#rating-hint").inner_text()


def notice(page) -> str:
    box = page.locator(".pv-notice")
    return box.inner_text() if box.is_visible() else ""


def test_the_limits_hold_in_the_page_and_text_fields_keep_their_keys(
    page, live_server, propose_study
):
    # given: at most 3 labels a segment (the pose: 1)
    tiny = propose_study(max_labels=3)
    start_session(page, live_server, tiny, "P1")
    item, _ = shown(page)
    assert page.locator("#next").is_disabled()
    assert hint(page) == "Still to choose: Pose (or flag the segment when you cannot)."
    assert page.locator(".pv-frame video").get_attribute("aria-label") == "The segment"
    # the groups' headings are the level under the page's h1
    headings = page.eval_on_selector_all(".pv-group h2", "hs => hs.map(h => h.textContent)")
    assert headings == ["Pose: choose 1", "Person-object: up to 3", "Person-person: up to 3"]
    # when: "/" (the key to the search) pressed in the search, which has the focus once
    # the segment has played: it types nothing there
    page.keyboard.press("/")
    assert page.locator("#pv-search").input_value() == ""
    # when: typing in the search
    page.keyboard.type("wa")
    # then: it filters; Enter picks nothing while two actions match
    visible = page.eval_on_selector_all(
        ".pv-action:not([hidden])", "bs => bs.map(b => b.textContent)"
    )
    assert visible == ["walk", "watch (a person)"]
    page.keyboard.press("Enter")
    assert chips(page) == [] and page.locator("#pv-search").input_value() == "wa"
    # when: Enter on a single match
    page.fill("#pv-search", "STA")
    page.keyboard.press("Enter")
    assert chips(page) == [STAND] and page.locator("#pv-search").input_value() == ""
    # and the chip's group is legible (4.5:1), as is the text of the answers while they
    # are closed (before the segment has played)
    assert contrast(page.locator(".pv-chip-group")) >= 4.5
    page.eval_on_selector(".pv-answers", "answers => (answers.disabled = true)")
    assert contrast(page.locator(".pv-search-label")) >= 4.5
    assert contrast(page.locator(".pv-propose .keys")) >= 4.5
    page.eval_on_selector(".pv-answers", "answers => (answers.disabled = false)")
    assert page.locator("#next").is_enabled()
    # then: a second pose is refused, by click or by search, saying why
    page.click(f'.pv-action[data-action="{SIT}"]', force=True)
    assert notice(page) == "Pose: 1 at most. Take one back (✕) to choose another."
    find(page, "walk")
    assert chips(page) == [STAND]
    assert (
        page.locator(f'.pv-action[data-action="{WALK}"]').get_attribute("aria-disabled") == "true"
    )
    # and so is a label beyond the study's 3
    page.fill("#pv-search", "")
    pick(page, CARRY, READ)
    page.click(f'.pv-action[data-action="{TALK}"]', force=True)
    assert notice(page) == "At most 3 labels per segment. Take one back (✕) to choose another."
    assert chips(page) == [STAND, CARRY, READ]
    # when: one taken back, another fits
    page.click(f'.pv-chip[data-action="{READ}"] .pv-chip-remove')
    assert notice(page) == ""
    pick(page, TALK)
    assert chips(page) == [STAND, CARRY, TALK]
    # when: the other action's text holds the page's keys (Enter only leaves the field)
    page.click("#pv-other")
    page.keyboard.type("juggle / y n")
    page.keyboard.press("Enter")
    assert page.locator("#step-rating").get_attribute("data-item") == item
    assert page.locator("#pv-other").input_value() == "juggle / y n"
    # then: Space ticks a focused flag once (it does not replay the segment)
    page.focus('input[data-flag="inappropriate"]')
    page.keyboard.press(" ")
    assert page.locator('input[data-flag="inappropriate"]').is_checked()
    page.keyboard.press(" ")
    assert not page.locator('input[data-flag="inappropriate"]').is_checked()
    # when: the pose taken back, Next closes; a flag opens it again
    page.click(f'.pv-chip[data-action="{STAND}"] .pv-chip-remove')
    assert page.locator("#next").is_disabled()
    page.check('input[data-flag="bad_box"]')
    assert page.locator("#next").is_enabled()
    save(page, item, by_key=True)
    delivered(page)
    # then: stored as shown
    assert proposal_of(item) == (
        [CARRY, TALK],
        {"other_action": "juggle / y n", "inappropriate": False, "bad_box": True},
    )


def wait_window(page) -> None:
    """Wait until every item of the window after the one on screen is downloaded."""
    page.wait_for_function(
        """() => {
            const ahead = document.querySelector('#rater').dataset.ahead || '0/0';
            const [ready, held] = ahead.split('/');
            return Number(held) > 1 && ready === held;
        }"""
    )


def test_proposals_given_offline_are_sent_once_in_order(page, context, live_server, propose_study):
    tiny = propose_study()
    start_session(page, live_server, tiny, "P1")
    wait_window(page)
    # when: the connection drops and the rater proposes for the whole session meanwhile
    context.set_offline(True)
    given = []
    while wait_step(page, "rating", "waiting") == "rating":
        item, _ = shown(page)
        if given:  # the keyframe, like the segment, from the window's downloads
            assert page.locator(".pv-frame img").get_attribute("src").startswith("blob:")
            assert page.locator(".pv-frame video").get_attribute("src").startswith("blob:")
        if segment_of(item).role == Stimulus.Role.GOLDEN:
            labels = EXPERT_ACTIONS
        else:
            labels = [SIT, READ] if len(given) % 2 else [STAND, TALK]
        find(page, "sit" if labels[0] == SIT else "stand")
        pick(page, labels[1])
        save(page, item)
        given.append((item, sorted(labels)))
    # then: the page waits for the connection, nothing is stored yet
    assert page.locator("#step-waiting").get_attribute("data-reason") == "window_end"
    assert len(given) == 4
    assert not Answer.objects.filter(assignment__isnull=False).exists()
    # when: back online
    context.set_offline(False)
    delivered(page)
    # (a proposer never verifies their own segments: the study is done for them)
    assert wait_step(page, "finished") == "finished"
    assert page.locator("#step-finished").get_attribute("data-outcome") == "done"
    # then: every proposal stored once, in the order given
    answers = Answer.objects.filter(assignment__isnull=False).order_by("id")
    assert [str(a.item.public_id) for a in answers] == [item for item, _ in given]
    for item, labels in given:
        assert proposal_of(item)[0] == labels
