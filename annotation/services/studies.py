"""Creating studies, splitting them into sessions, and deleting them."""

from __future__ import annotations

import random
from dataclasses import dataclass

from django.db import IntegrityError, transaction

from annotation.designs import DESIGNS, design_of
from annotation.errors import ValidationFailed
from annotation.models import Dimension, Item, Session, SessionItem, Stimulus, Study
from annotation.services.stimulus_files import files_of, remove_when_committed


@transaction.atomic
def study_create(*, name: str, slug: str, dimensions=None, **settings) -> Study:
    """A study with its dimensions (its questions, in designs that ask one per item) in
    order; `settings` override protocol defaults, `design` among them (default: sliders).
    `dimensions` are (key, label, help text[, shows_reference]); by default the design's
    (GAIA's three for sliders, WYD's video-quality question for preference)."""
    if Study.objects.filter(slug=slug).exists():
        raise ValidationFailed(f"a study with slug '{slug}' already exists")
    study = Study(name=name, slug=slug, **settings)
    study.full_clean()
    try:
        with transaction.atomic():
            study.save()
    except IntegrityError:  # the same slug created at the same moment by another request
        raise ValidationFailed(f"a study with slug '{slug}' already exists") from None
    _dimensions_create(
        study, design_of(study).default_dimensions if dimensions is None else dimensions
    )
    return study


def _dimensions_create(study: Study, dimensions) -> None:
    Dimension.objects.bulk_create(
        Dimension(
            study=study,
            key=key,
            label=label,
            help_text=help_text,
            shows_reference=bool(rest and rest[0]),
            order=order,
        )
        for order, (key, label, help_text, *rest) in enumerate(dimensions, start=1)
    )


@transaction.atomic
def study_default_dimensions(*, study: Study, previous_design: str | None = None) -> bool:
    """A study made or changed elsewhere than `study_create` (the admin's form) gets its
    design's dimensions when it has none, or when it has exactly those of
    `previous_design` (the design was changed before any video was imported). Dimensions
    an admin gave are kept. True when the dimensions were (re)made."""
    have = list(study.dimensions.order_by("order").values_list("key", flat=True))
    if previous_design is not None and previous_design != study.design:
        previous = DESIGNS[previous_design].default_dimensions
        if have == [key for key, *_ in previous] and not study.stimuli.exists():
            study.dimensions.all().delete()
            have = []
    if have:
        return False
    _dimensions_create(study, design_of(study).default_dimensions)
    return True


@transaction.atomic
def study_build_sessions(*, study: Study) -> list[Session]:
    """Split the study's items not yet in a session into new seeded sessions.

    The study's design first makes the items of stimuli that have none (a video for
    sliders, a pair of conditions for preference, ...). The regular items are shuffled
    with the study's split seed and cut into sessions of `session_size`, the last one
    smaller (GAIA: 9,180 = 30 x 300 + 180, 31 sessions). Each session gets
    `golden_per_session` golden items drawn (seeded) from the study's golden pool (those
    of the session's own question where the design says so); presentation order is
    shuffled per rater later. Calling it again after importing more stimuli appends
    sessions and leaves existing ones alone.
    """
    study = Study.objects.select_for_update().get(pk=study.pk)
    design = design_of(study)
    design.build_items(study=study)
    already = SessionItem.objects.filter(session__study=study, is_golden=False)
    pending = list(
        Item.objects.filter(study=study, role=Item.Role.STIMULUS)
        .exclude(pk__in=already.values("item_id"))
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    if not pending:
        return []
    golden_question = dict(
        Item.objects.filter(study=study, role=Item.Role.GOLDEN)
        .order_by("pk")
        .values_list("pk", "dimension_id")
    )
    golden_pool = list(golden_question)
    questions = dict(Item.objects.filter(pk__in=pending).values_list("pk", "dimension_id"))

    def chunk_question(chunk: list[int]) -> int | None:
        return questions[chunk[0]] if chunk else None

    first_index = next_session_index(study)
    rng = random.Random(f"{study.split_seed}:{first_index}")
    if design.session_chunks is None:
        rng.shuffle(pending)
        chunks = [
            pending[start : start + study.session_size]
            for start in range(0, len(pending), study.session_size)
        ]
    else:
        items = Item.objects.filter(pk__in=pending).prefetch_related("members__stimulus")
        chunks = design.session_chunks(
            study=study, items=list(items), seed=f"{study.split_seed}:{first_index}"
        )
    sessions = []
    for offset, chunk in enumerate(chunks):
        seed = rng.randrange(2**62)
        pool = golden_pool
        if design.golden_by_question:
            pool = [pk for pk in golden_pool if golden_question[pk] == chunk_question(chunk)]
        sessions.append(
            session_make(
                study=study, index=first_index + offset, seed=seed, items=chunk, golden_pool=pool
            )
        )
    return sessions


@transaction.atomic
def study_golden_top_up(*, study: Study) -> int:
    """Golden items for the sessions no rater has started that hold fewer than the
    study's `golden_per_session` (golden videos imported after the split): each gets
    what it lacks, drawn with its own seed from the golden pool (of its question where
    the design says so) less what it holds. Sessions a rater has started keep their
    items, as the rater's frozen order does. Returns how many sessions got some."""
    study = Study.objects.select_for_update().get(pk=study.pk)
    design = design_of(study)
    wanted = study.golden_per_session
    if not wanted or design.sessions_on_demand(study=study) is not None:
        return 0
    design.build_items(study=study)  # the golden videos' items
    golden_question = dict(
        Item.objects.filter(study=study, role=Item.Role.GOLDEN)
        .order_by("pk")
        .values_list("pk", "dimension_id")
    )
    if not golden_question:
        return 0
    held: dict[int, set[int]] = {}
    question: dict[int, int | None] = {}
    unstarted = SessionItem.objects.filter(session__study=study, session__assignments=None)
    for session, item, golden, dimension in unstarted.values_list(
        "session_id", "item_id", "is_golden", "item__dimension_id"
    ).order_by("session__index", "item_id"):
        held.setdefault(session, set())
        if golden:
            held[session].add(item)
        else:
            question.setdefault(session, dimension)
    seeds = dict(Session.objects.filter(pk__in=held).values_list("pk", "seed"))
    added = []
    for session, golden in held.items():
        if len(golden) >= wanted:
            continue
        pool = [
            pk
            for pk, dimension in golden_question.items()
            if pk not in golden
            and (not design.golden_by_question or dimension == question.get(session))
        ]
        k = min(wanted - len(golden), len(pool))
        chosen = random.Random(f"{seeds[session]}:golden").sample(pool, k=k)
        added += [SessionItem(session_id=session, item_id=pk, is_golden=True) for pk in chosen]
    SessionItem.objects.bulk_create(added)
    return len({row.session_id for row in added})


@dataclass(frozen=True)
class Split:
    """What splitting a study did (``study_split``)."""

    sessions: list[Session]  # the new ones
    golden_added: int  # sessions no rater had started that got golden items
    videos: int  # the study's videos to rate (0: nothing could be split)

    def said(self) -> str:
        """For the admin: new sessions (their indices), golden items added, or nothing."""
        if not self.videos:
            return "no videos to rate yet: import them first (manage.py import_study)"
        said = []
        if self.sessions:
            indices = ", ".join(str(s.index) for s in self.sessions)
            said.append(f"{len(self.sessions)} new session(s) ({indices})")
        if self.golden_added:
            said.append(
                f"golden items added to {self.golden_added} session(s) no rater had started"
            )
        return "; ".join(said) or "every stimulus is already in a session"


@transaction.atomic
def study_split(*, study: Study) -> Split:
    """After imports and uploads, in one transaction: the stimuli in no session yet become
    new sessions (``study_build_sessions``), and the sessions no rater has started get
    the golden items they lack (``study_golden_top_up``: golden videos imported after the
    split). The admin's action, ``manage.py build_sessions``, the API and
    ``import_study`` all split so."""
    sessions = study_build_sessions(study=study)
    videos = study.stimuli.filter(role=Stimulus.Role.STIMULUS).count()
    return Split(sessions, study_golden_top_up(study=study), videos)


def next_session_index(study: Study) -> int:
    """The index the study's next new session takes (1 for the first)."""
    return (study.sessions.order_by("-index").values_list("index", flat=True).first() or 0) + 1


def session_make(
    *, study: Study, index: int, seed: int, items: list[int], golden_pool: list[int]
) -> Session:
    """Session `index` of the study with these regular items and `golden_per_session`
    golden items drawn from the pool with the session's seed."""
    session = Session.objects.create(study=study, index=index, seed=seed)
    golden = random.Random(seed).sample(
        golden_pool, k=min(study.golden_per_session, len(golden_pool))
    )
    SessionItem.objects.bulk_create(
        [SessionItem(session=session, item_id=pk) for pk in items]
        + [SessionItem(session=session, item_id=pk, is_golden=True) for pk in golden]
    )
    return session


@transaction.atomic
def studies_delete(*, studies) -> int:
    """Delete the studies (the admin's Delete) with everything they hold, and their
    videos' files once the deletion is committed; returns how many were deleted. A study
    with answers is protected (ProtectedError: nothing a rater answered is lost), as the
    admin's confirmation page says."""
    files = files_of(Stimulus.objects.filter(study__in=studies))
    deleted = studies.delete()[1].get(Study._meta.label, 0)
    remove_when_committed(files)
    return deleted
