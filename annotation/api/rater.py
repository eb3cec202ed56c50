"""The rater API (docs/rater-api.md): one view per operation, thin over the services."""

from __future__ import annotations

from django.templatetags.static import static
from drf_spectacular.utils import OpenApiTypes, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.fast import fast_answer, fast_next
from annotation.designs import design_of
from annotation.designs.tutorial_examples import tutorial_pairs
from annotation.models import Participation
from annotation.selectors import (
    assignment_current,
    assignment_payload,
    completion_payload,
    item_payload,
    session_window,
    window_payload,
)
from annotation.services.participation import (
    access_participation,
    participation_consent,
)
from annotation.services.qualification import (
    qualification_seed,
    qualification_window,
    study_has_test,
)
from annotation.services.rater_flow import (
    answer_submit,
    playback_problem_report,
    progress_payload,
    tutorial_done,
)
from annotation.services.session_start import assignment_start_next
from annotation.services.withdrawal import participation_withdraw


class RaterView(APIView):
    """Resolves the study and the signed-in rater's participation in it."""

    def participation(self, request, slug: str) -> Participation:
        return access_participation(user=request.user, slug=slug)


def design_state(study) -> dict:
    """What the page needs of the study's design: its key, its widget module and what
    the design says about the questions (sliders: dimensions and scale)."""
    design = design_of(study)
    return {
        "design": design.key,
        "widget_url": static(design.widget),
        **design.state_payload(study=study),
    }


def state_payload(participation: Participation) -> dict:
    study = participation.study
    assignment = assignment_current(participation=participation)
    progress = progress_payload(participation, assignment)
    step = progress["step"]
    return {
        "step": step,
        "study": {
            "name": study.name,
            "slug": study.slug,
            "instructions": study.instructions,
            "consent_text": study.consent_text,
            "consent_version": study.consent_version,
            "min_viewport_width": study.min_viewport_width,
            "min_viewport_height": study.min_viewport_height,
            "qualification": study_has_test(study),
        },
        **design_state(study),
        "assignment": assignment_payload(assignment),
        "progress": progress,
        "completion": completion_payload(participation, step),
    }


class StateView(RaterView):
    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request, slug: str):
        return Response(state_payload(self.participation(request, slug)))


class ConsentView(RaterView):
    @extend_schema(request=OpenApiTypes.OBJECT, responses=OpenApiTypes.OBJECT)
    def post(self, request, slug: str):
        participation = participation_consent(
            participation=self.participation(request, slug), data=request.data
        )
        return Response(state_payload(participation))


class WithdrawView(RaterView):
    """The rater leaves the study (annotation.services.withdrawal); allowed while the
    study is paused too."""

    @extend_schema(request=OpenApiTypes.OBJECT, responses=OpenApiTypes.OBJECT)
    def post(self, request, slug: str):
        participation = access_participation(user=request.user, slug=slug, paused_too=True)
        participation = participation_withdraw(participation=participation, data=request.data)
        return Response(state_payload(participation))


class TutorialView(RaterView):
    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request, slug: str):
        participation = self.participation(request, slug)
        own = design_of(participation.study).tutorial_payload
        if own is not None:
            return Response(own(study=participation.study))
        return Response({"pairs": tutorial_pairs(study_id=participation.study_id)})


class TutorialDoneView(RaterView):
    @extend_schema(request=None, responses=OpenApiTypes.OBJECT)
    def post(self, request, slug: str):
        participation = tutorial_done(participation=self.participation(request, slug))
        return Response(state_payload(participation))


class NextItemView(RaterView):
    """The window of items to answer from now (docs/rater-api.md); starts the rater's
    next session when none is open."""

    def dispatch(self, request, *args, **kwargs):
        # The common case first, without DRF (annotation/api/fast.py); all others below.
        response = fast_next(request, kwargs["slug"])
        return response if response is not None else super().dispatch(request, *args, **kwargs)

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request, slug: str):
        participation = self.participation(request, slug)
        assignment = assignment_current(participation=participation)
        progress = progress_payload(participation, assignment)
        window, preload, ends, seed = [], None, None, None
        if progress["step"] == "qualification":
            window, preload, ends, _, _ = qualification_window(participation)
            seed = qualification_seed(participation)
        elif progress["step"] == "rating":
            if assignment is None:
                assignment = assignment_start_next(participation=participation)
                progress = progress_payload(participation, assignment)
            if assignment is not None and progress["step"] == "rating":
                window, preload, ends = session_window(assignment)
                seed = assignment.order_seed
        body = {
            **progress,
            **window_payload(
                [item_payload(item, seed) for item in window],
                preload=item_payload(preload, seed) if preload else None,
                ends=ends,
                rest_seconds=participation.study.rest_seconds,
            ),
            "completion": completion_payload(participation, progress["step"]),
        }
        return Response(body)


class AnswerView(RaterView):
    def dispatch(self, request, *args, **kwargs):
        # The common case first, without DRF (annotation/api/fast.py); all others below.
        response = fast_answer(request, kwargs["slug"])
        return response if response is not None else super().dispatch(request, *args, **kwargs)

    @extend_schema(request=OpenApiTypes.OBJECT, responses=OpenApiTypes.OBJECT)
    def post(self, request, slug: str):
        participation = self.participation(request, slug)
        stored_now, progress = answer_submit(participation=participation, data=request.data)
        return Response(
            {"status": "stored" if stored_now else "repeat", **progress},
            status=status.HTTP_201_CREATED if stored_now else status.HTTP_200_OK,
        )


class PlaybackProblemView(RaterView):
    """The video of the item the rater is at cannot be played in their browser: the item
    is skipped and reported to the team (docs/rater-api.md, "problems/")."""

    @extend_schema(request=OpenApiTypes.OBJECT, responses=OpenApiTypes.OBJECT)
    def post(self, request, slug: str):
        participation = self.participation(request, slug)
        skipped_now, progress = playback_problem_report(
            participation=participation, data=request.data
        )
        return Response(
            {"status": "skipped" if skipped_now else "repeat", **progress},
            status=status.HTTP_201_CREATED if skipped_now else status.HTTP_200_OK,
        )
