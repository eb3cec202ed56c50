"""What a study still lacks before raters can do useful work in it, for the admin to see
before starting it (the Studies page, the study's admin page, the moment it is started).

Each problem says what raters would meet and what to do. ``blocks``: raters could not
take part usefully at all (nothing to answer, nothing to rate, no session to take);
the others make the study weaker than its settings say (a golden gate that is open, a
qualification test shorter than asked, videos that will never be served), which a
study may accept knowingly, so they never stop it from starting. Reads only.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q

from annotation.designs import design_of
from annotation.models import Item, Session, Stimulus, Study

_NOT_READY = (Stimulus.Status.PENDING, Stimulus.Status.PROCESSING)


@dataclass(frozen=True)
class Problem:
    code: str
    text: str
    blocks: bool = False


def _videos(study: Study) -> list[Problem]:
    counts = Stimulus.objects.filter(study=study).aggregate(
        regular=Count("pk", filter=Q(role=Stimulus.Role.STIMULUS)),
        failed=Count("pk", filter=Q(status=Stimulus.Status.FAILED)),
        processing=Count("pk", filter=Q(status__in=_NOT_READY)),
    )
    problems = []
    if not counts["regular"]:
        problems.append(
            Problem(
                "no_videos",
                "no videos to rate: import them (manage.py import_study, or Stimuli, Add)",
                True,
            )
        )
    if counts["failed"]:
        problems.append(
            Problem(
                "videos_failed",
                f"{counts['failed']} video(s) failed to transcode and are never served: "
                "Processing jobs say why; where the cause has passed (a time-out, a busy "
                "machine, a limit raised since) select them in Stimuli and run Process again "
                "what failed, and a damaged file (a keyframe outside its video) delete and "
                "upload or import again, mended",
            )
        )
    if counts["processing"]:
        problems.append(
            Problem(
                "videos_processing",
                f"{counts['processing']} video(s) still being processed: raters are served "
                "each once it is ready",
            )
        )
    return problems


def _sessions(study: Study) -> list[Problem]:
    """No session to take, regular videos in none, or sessions with fewer golden items
    than the study asks for (the golden pool was smaller when they were made)."""
    if design_of(study).sessions_on_demand(study=study) is not None:
        return []  # each rater's session is made as they start it
    regular = Stimulus.objects.filter(study=study, role=Stimulus.Role.STIMULUS).exclude(
        status=Stimulus.Status.FAILED
    )
    if not regular.exists():
        return []  # "no videos" says it
    sessions = Session.objects.filter(study=study).annotate(
        golden=Count("items", filter=Q(items__is_golden=True))
    )
    split = 'split the videos into sessions (Studies action "Split new stimuli into sessions")'
    if not sessions.exists():
        return [Problem("no_sessions", f"no sessions yet: {split}", True)]
    problems = []
    unsplit = regular.exclude(memberships__item__session_items__isnull=False).count()
    if unsplit:
        problems.append(
            Problem(
                "unsplit",
                f"{unsplit} video(s) are in no session (new since the last split, or "
                f"with nothing to be compared with): {split}",
            )
        )
    wanted = study.golden_per_session
    without = sessions.filter(golden=0).count() if wanted else 0
    short = sessions.filter(golden__lt=wanted).count() if wanted else 0
    if without:
        problems.append(
            Problem(
                "no_golden",
                f"{without} session(s) have no golden item, so their golden gate is open "
                "(every rater passes it): import golden videos with the experts' answers, "
                f"then {split}; sessions no rater has started get them",
            )
        )
    elif short:
        problems.append(
            Problem(
                "few_golden",
                f"{short} session(s) have fewer than the {wanted} golden items asked for "
                f"(the golden pool was smaller): import more golden videos, then {split}; "
                "sessions no rater has started get them",
            )
        )
    return problems


def _qualification(study: Study) -> list[Problem]:
    wanted = study.qualification_size
    if not wanted:
        return []
    pool = (
        Item.objects.filter(study=study, role=Item.Role.QUALIFICATION)
        .exclude(members__stimulus__status=Stimulus.Status.FAILED)
        .count()
    )
    videos = Stimulus.objects.filter(study=study, role=Stimulus.Role.QUALIFICATION).exclude(
        status=Stimulus.Status.FAILED
    )
    if not pool and not videos.exists():
        return [
            Problem(
                "no_qualification",
                "no qualification videos: raters start rating without a test",
            )
        ]
    if pool and pool < wanted:
        return [
            Problem(
                "short_qualification",
                f"the qualification test takes {pool} item(s), all there are, not the "
                f"{wanted} asked for",
            )
        ]
    return []


def _design(study: Study) -> list[Problem]:
    """What the design's own setup lacks (``Design.readiness``: a tutorial, the experts'
    answers, a vocabulary), each (code, text) or (code, text, blocks)."""
    return [Problem(*lack) for lack in design_of(study).readiness(study=study)]


def study_problems(*, study: Study) -> list[Problem]:
    """What the study still lacks (module docstring), those that block first; nothing for
    a closed study, which no rater will see again."""
    if study.state == Study.State.CLOSED:
        return []
    problems = []
    if not study.dimensions.exists():
        problems.append(
            Problem(
                "no_questions",
                "it asks no question yet: a questionnaire's come from a question set "
                "(manage.py import_questions, or the Studies action), the other designs' "
                "are the study's dimensions (its admin page)",
                True,
            )
        )
    if not study.consent_text.strip():
        problems.append(
            Problem("no_consent", "the consent form is empty: raters agree to nothing stated")
        )
    if not study.open_to_signed_in and not study.completion_url:
        problems.append(
            Problem(
                "no_completion_link",
                "no completion link: marketplace raters who finish see their completion "
                "code but are not sent back (Marketplace and payment)",
            )
        )
    for check in (_videos, _sessions, _qualification, _design):
        problems += check(study)
    return sorted(problems, key=lambda p: not p.blocks)
