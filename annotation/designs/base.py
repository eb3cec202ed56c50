"""What a study design is to the journey (DESIGNS.md): a small frozen set of functions.

The journey (consent, tutorial, qualification, sessions and order, breaks, golden gates,
the answer envelope and its repeats, completion, monitor) is written once and reaches a
design only through its ``Design`` entry. A design says what an item is and shows, which
values an answer holds and how they are stored, and how golden answers are judged.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from annotation.errors import ValidationFailed

if TYPE_CHECKING:
    from annotation.models import Stimulus


class Values(Protocol):
    """An answer's checked values, as the design stores them."""

    def canonical(self) -> dict:
        """The values as plain JSON data: what the digest of a repeat is taken over."""


def refuse_nul(
    text: str, *, what: str, error: Callable[[str], Exception] = ValidationFailed
) -> None:
    """Raise ``error`` (ValidationFailed by default) naming ``what`` when ``text`` holds a
    NUL character.

    PostgreSQL stores no NUL in a text (nor in JSON): such a text is refused with a
    message rather than failing to store (a 500, which a page retries forever)."""
    if "\x00" in text:
        raise error(f"{what} holds a NUL character, which a text cannot hold")


def plain_int(text: str, *, digits: int = 18) -> int | None:
    """``text`` as a whole number when it is 1 to ``digits`` ASCII digits (18: a bigint's
    worth), else None. ``str.isdigit`` alone lets by "²" (on which ``int`` fails), "١٢"
    (which ``int`` reads as 12) and 5,000 digits (past ``int``'s limit)."""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= digits else None


def values_digest(canonical: dict) -> str:
    """sha256 of the values as canonical JSON (sorted keys, no spaces, numbers as Python
    writes them), the same for a repeat of the same answer on every path."""
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Gate:
    """A finished session's golden agreement: the figure (None when undefined) and whether
    the rater may take another session."""

    agreement: float | None
    passed: bool


@dataclass(frozen=True)
class QualificationScore:
    """A finished qualification attempt: the share of answers that agree with the experts
    (None when none could be judged), per-answer detail for the record, and the verdict."""

    share: float | None
    detail: list[dict]
    passed: bool


def mean_gate(rows: list[dict], *, key: str, pass_share: float) -> Gate:
    """The golden gate of a design whose figure is the mean of each golden answer's
    ``key`` (a 0-1 agreement): passed at ``pass_share`` or more, and passed, with no
    figure, when the session had no golden answer to judge."""
    if not rows:
        return Gate(None, True)
    share = sum(row[key] for row in rows) / len(rows)
    return Gate(share, share >= pass_share)


def mean_qualification(rows: list[dict], *, key: str, pass_share: float) -> QualificationScore:
    """The qualification verdict on the mean of each answer's ``key`` (0 with none)."""
    share = sum(row[key] for row in rows) / len(rows) if rows else 0.0
    return QualificationScore(share, rows, share >= pass_share)


def shuffled(members: Sequence, seed: object) -> list:
    """`members` in a per-rater, per-item order that is the same on every request."""
    order = list(members)
    random.Random(str(seed)).shuffle(order)
    return order


def no_extra(*, study, role: str, extra: dict) -> dict:
    """Design.check_manifest_extra of a design with no columns of its own: refuses the
    experts' answers (<question>_expert), which only questionnaire studies take."""
    given = [f"{key}_expert" for key in extra.get("answers", {})]
    if given:
        raise ValueError(f"only questionnaire studies take the column(s) {', '.join(given)}")
    return {}


@dataclass(frozen=True)
class ContentVideo:
    """A video of a compared design's content, as a manifest check sees it: from the
    manifest (its line) or stored before (line None)."""

    line: int | None
    role: str
    content: str
    condition: str
    expected: str


CHECKED_ENDS = ("golden", "qualification")


def content_errors(
    videos: list[ContentVideo],
    *,
    at_most: int,
    noun: str,
    whole: bool = True,
    ends: tuple[str, ...] = CHECKED_ENDS,
) -> list[tuple[int, str]]:
    """What makes a compared design's content unusable, per line of the manifest: a
    condition twice in one content (an item would show one model twice, and its ranking
    name it twice); a content of a role in `ends` (golden and qualification; a
    preference study's worked examples too) without exactly one best and one worst
    video, or with more than `at_most` videos (its item could not be made, and the
    raters would wait for a test that never comes); two references of one content.
    Not `whole` (one uploaded video, the rest to come), a missing end is not an error."""

    def where(video: ContentVideo) -> str:
        return f"line {video.line}" if video.line is not None else "a video imported before"

    groups: dict[tuple[str, str], list[ContentVideo]] = {}
    for video in videos:
        if video.content:
            groups.setdefault((video.role, video.content), []).append(video)
    errors = []
    for (role, content), members in groups.items():
        new = [video for video in members if video.line is not None]
        if not new:
            continue
        members = sorted(members, key=lambda video: -1 if video.line is None else video.line)
        name = f"{role} content {content!r}"
        first: dict[str, ContentVideo] = {}
        for video in members:
            twice = first.get(video.condition)
            if video.condition and twice is not None and video.line is not None:
                also = where(twice)
                errors.append((video.line, f"{name} has {video.condition!r} twice (also {also})"))
            first.setdefault(video.condition, video)
        if role == "reference" and len(members) > 1:
            errors.append((new[-1].line, f"{name} has {len(members)} videos, one is its reference"))
        if role not in ends:
            continue
        make = f"one best and one worst make its {noun}"
        for end in ("best", "worst"):
            found = [video for video in members if video.expected == end]
            if len(found) > 1:
                errors.append((found[-1].line or new[0].line, f"{name} has {len(found)} '{end}' "
                               f"videos ({make})"))  # fmt: skip
            elif not found and whole:
                errors.append((new[0].line, f"{name} has no '{end}' video ({make})"))
        if len(members) > at_most:
            errors.append((new[-1].line, f"{name} has {len(members)} videos, at most "
                           f"{at_most} make its {noun}"))  # fmt: skip
    return errors


@dataclass(frozen=True)
class OnDemand:
    """Sessions made for each rater as they start one (Design.sessions_on_demand)."""

    make: Callable[..., object]  # make(participation): the session made now, or None
    left: Callable[..., bool]  # left(participation): whether one could still be made


@dataclass(frozen=True)
class Design:
    """One study design. Every function takes keyword arguments.

    - ``build_items(study)``: makes the items of the study's stimuli that have none yet
      (every role that is answered: regular, golden, qualification); returns how many.
    - ``layout(item, seed)``: the item's videos in the order this rater sees them
      (`seed` is the rater's, per session or qualification attempt); stored with the
      answer.
    - ``item_payload(item, layout)``: what the rater's page gets: never whether the item
      is golden, nor what the experts said.
    - ``check_values(data, item, study)``: the answer's values, checked (a clear
      ValidationFailed on bad input).
    - ``store_values(answer, item, layout, values)``: writes the typed value rows, inside
      the caller's transaction.
    - ``golden_gate(study, assignment)``: the finished session's gate.
    - ``qualification_score(participation, answers)``: a finished attempt's verdict.
    - ``gate_rule(study)``: the gate's rule in words, for the record of an exclusion
      ("PLCC above 0.7").
    - ``state_payload(study)``: what the page needs to know of the design (questions,
      scale, choices) besides the study's texts.
    - ``widget``: the static path of the ES module that shows an item and takes its
      answer (frontend/static/frontend/widgets/).
    - ``fast_path``: the answer's values are slider scores, served by the single-statement
      path of annotation/api/fast.py.
    """

    key: str
    label: str
    build_items: Callable[..., int]
    layout: Callable[..., list[Stimulus]]
    item_payload: Callable[..., dict]
    check_values: Callable[..., Values]
    store_values: Callable[..., None]
    golden_gate: Callable[..., Gate]
    qualification_score: Callable[..., QualificationScore]
    gate_rule: Callable[..., str]
    state_payload: Callable[..., dict]
    widget: str
    fast_path: bool = False
    # How the rater's messages name an item and an answer's values ("this video was
    # already answered", "... used with different scores").
    item_noun: str = "video"
    values_noun: str = "scores"
    # What the session's golden agreement is, as the monitor heads its column.
    golden_label: str = "Golden PLCC"
    # session_chunks(study, items, seed) -> [[item ids]]: how the study's new regular
    # items are cut into sessions; None: shuffled (seeded) and cut into session_size.
    session_chunks: Callable[..., list[list[int]]] | None = None
    # check_manifest_row(role, labels, expert, dimension_keys): refuses (ValueError, its message the
    # reason) an import row, or an upload, this design cannot use (expert None: an upload,
    # whose experts' scores are added afterwards, in the admin); the default: any row.
    check_manifest_row: Callable[..., None] = lambda **row: None
    # check_contents(videos: [ContentVideo], whole=True) -> [(line, reason)]: what makes
    # the manifest's contents unusable, with the videos the study has (content_errors);
    # None: contents are not the design's (nothing is read to check them).
    check_contents: Callable[..., list] | None = None
    # The design's own manifest columns; check_manifest_extra(study, role, extra) checks
    # them ({"columns": {name: text}, "answers": {question key: <key>_expert text},
    # "labels": the row's content, expected, ... as checked}) and returns what the
    # import keeps: "stimulus" (fields of the new video), "identity" (the row is a part
    # of its file: several rows may name one file), and whatever
    # store_manifest_extra(stimulus, extra, dimensions) stores with the new video. The
    # default refuses any answers.
    manifest_columns: tuple[str, ...] = ()
    check_manifest_extra: Callable[..., dict] = lambda **row: no_extra(**row)
    store_manifest_extra: Callable[..., None] = lambda **row: None
    # The dimensions (questions) a new study of this design gets unless it names its own:
    # (key, label, help text, shows_reference).
    default_dimensions: tuple[tuple[str, str, str, bool], ...] = ()
    # raters_per_session(study, session=None): how many raters take each session, or
    # this one (a rejected batch does not count); None: no limit, least-rated first.
    raters_per_session: Callable[..., int | None] = lambda **study: None
    # barred_sessions(participation): ids of sessions the rater may not take (a verifier
    # never verifies what they proposed), as a values() queryset; None: none barred.
    barred_sessions: Callable[..., object] | None = None
    # A session's golden items are drawn from those of its own question (its items all
    # ask one: one stage of propose-then-verify), not from the whole golden pool.
    golden_by_question: bool = False
    # sessions_on_demand(study) -> OnDemand | None: where the study makes each rater's
    # session when they start it (active pair choice); None: prebuilt shared sessions.
    sessions_on_demand: Callable[..., OnDemand | None] = lambda **study: None
    # tutorial_payload(study): what the tutorial shows; None: the study's tutorial pairs.
    tutorial_payload: Callable[..., dict] | None = None
    # Experts audit each finished session (a batch) on a sample, by the acceptance plan
    # in the design's settings (annotation.services.audits; the study's Audits page).
    audited: bool = False
    # readiness(study): what the design's own setup still lacks before raters arrive
    # (its tutorial, the experts' answers), as (code, text) pairs, or (code, text, True)
    # for a lack that keeps raters from taking part at all (annotation.readiness).
    readiness: Callable[..., list[tuple[str, str]]] = lambda **study: []
