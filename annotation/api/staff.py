"""Endpoints for admins (the live monitor and its actions) and researchers (studies)."""

from __future__ import annotations

import logging
from dataclasses import asdict

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiTypes, extend_schema
from rest_framework import serializers
from rest_framework.fields import empty
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.designs import DESIGNS
from annotation.models import Assignment, Participation, Payment, Study
from annotation.monitor import study_monitor, study_progress
from annotation.readiness import study_problems
from annotation.roles import IsResearcher, IsStudyAdmin
from annotation.services import admin_actions
from annotation.services.studies import (
    study_create,
    study_split,
)

logger = logging.getLogger(__name__)


class StudyListView(APIView):
    """GET: the studies (researchers). POST: a new study of a design (admins), with the
    design's default questions; its other settings are edited in the admin."""

    def get_permissions(self):
        return [IsStudyAdmin()] if self.request.method == "POST" else [IsResearcher()]

    class CreateSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=200)
        slug = serializers.SlugField(max_length=80)
        design = serializers.ChoiceField(
            choices=sorted(DESIGNS),
            default="slider",
            # a misspelt design is mended at once when the refusal lists those there are
            error_messages={
                "invalid_choice": "unknown design {input!r}; the designs are: "
                + ", ".join(sorted(DESIGNS))
            },
        )
        open_to_signed_in = serializers.BooleanField(default=False)

        def validate(self, attrs):
            """A key this call does not take is refused by name, not ignored (a study
            made with ``session_size`` 5 had 300 and nobody was told)."""
            given = getattr(self.initial_data, "keys", lambda: [])()
            unknown = sorted(set(given) - set(self.fields) - {"csrfmiddlewaretoken"})
            if unknown:
                raise serializers.ValidationError(
                    {
                        key: [
                            "not taken here: a new study's other settings are edited in the "
                            "admin (Studies, the study)"
                        ]
                        for key in unknown
                    }  # fmt: skip
                )
            return attrs

    class StudySerializer(serializers.ModelSerializer):
        class Meta:
            model = Study
            fields = [
                "slug",
                "name",
                "design",
                "state",
                "session_size",
                "golden_per_session",
                "rest_every",
                "rest_seconds",
                "window_size",
                "qualification_size",
                "qualification_pass_share",
                "qualification_tolerance_sigma",
                "golden_gate_plcc",
                "line_click_share",
                "slider_min",
                "slider_max",
                "slider_step",
                "created_at",
            ]

    @extend_schema(responses=StudySerializer(many=True))
    def get(self, request):
        return Response(self.StudySerializer(Study.objects.order_by("name"), many=True).data)

    @extend_schema(request=CreateSerializer, responses=StudySerializer)
    def post(self, request):
        data = self.CreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        study = study_create(**data.validated_data)
        logger.info("admin %s created study %s (%s)", request.user.pk, study.slug, study.design)
        return Response(self.StudySerializer(study).data, status=201)


class StudyProgressView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request, slug: str):
        study = get_object_or_404(Study, slug=slug)
        return Response(study_progress(study=study))


class StudyProblemsView(APIView):
    """What the study still lacks before raters arrive (annotation.readiness), blocking
    ones first: ``[{"code", "text", "blocks"}]``; an empty list for a study ready to run."""

    permission_classes = [IsStudyAdmin]

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request, slug: str):
        study = get_object_or_404(Study, slug=slug)
        return Response([asdict(problem) for problem in study_problems(study=study)])


class MonitorView(APIView):
    permission_classes = [IsStudyAdmin]

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request, slug: str):
        # the adaptive settings come with the study: the monitor's queries stay as many
        study = get_object_or_404(Study.objects.select_related("adaptive"), slug=slug)
        return Response(study_monitor(study=study))


class ReasonSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=2000)


class AssignmentActionView(APIView):
    permission_classes = [IsStudyAdmin]
    action = ""  # "pause", "reopen" or "exclude"

    @extend_schema(request=ReasonSerializer, responses=OpenApiTypes.OBJECT)
    def post(self, request, pk: int):
        data = ReasonSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        assignment = get_object_or_404(Assignment, pk=pk)
        act = {
            "pause": admin_actions.assignment_pause,
            "reopen": admin_actions.assignment_reopen,
            "exclude": admin_actions.assignment_exclude,
        }[self.action]
        assignment = act(
            assignment=assignment, reason=data.validated_data["reason"], by=request.user
        )
        return Response({"id": assignment.pk, "state": assignment.state})


class ExcludeRaterView(APIView):
    permission_classes = [IsStudyAdmin]

    @extend_schema(request=ReasonSerializer, responses=OpenApiTypes.OBJECT)
    def post(self, request, pk: int):
        """Exclude the rater of an assignment from its study."""
        data = ReasonSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        assignment = get_object_or_404(Assignment.objects.select_related("session"), pk=pk)
        participation = get_object_or_404(
            Participation, rater_id=assignment.rater_id, study_id=assignment.session.study_id
        )
        admin_actions.participation_exclude(
            participation=participation, reason=data.validated_data["reason"], by=request.user
        )
        return Response({"id": assignment.pk, "excluded": True})


class RequiredBooleanField(serializers.BooleanField):
    """A boolean that must be given, in JSON and in form data alike (DRF's BooleanField
    takes a checkbox left out of an HTML form for False)."""

    default_empty_html = empty


class PaymentDecisionView(APIView):
    permission_classes = [IsStudyAdmin]

    class PaymentDecisionSerializer(serializers.Serializer):
        # required in a form body too: DRF reads a boolean missing from form data as
        # False, so "note=ok" (or a misspelt "aprove") rejected the payment, for good
        approve = RequiredBooleanField()
        note = serializers.CharField(max_length=2000, required=False, allow_blank=True)

    @extend_schema(request=PaymentDecisionSerializer, responses=OpenApiTypes.OBJECT)
    def post(self, request, pk: int):
        data = self.PaymentDecisionSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        payment = admin_actions.payment_decide(
            payment=get_object_or_404(Payment, pk=pk), by=request.user, **data.validated_data
        )
        return Response({"id": payment.pk, "status": payment.status})


class SessionBuildView(APIView):
    """Split the study's stimuli that are in no session yet into new sessions (after
    uploads: an upload adds one video, and sessions are cut from all of them at once);
    sessions no rater has started get the golden items they lack (``golden_added``: how
    many sessions did)."""

    permission_classes = [IsStudyAdmin]

    @extend_schema(request=None, responses=OpenApiTypes.OBJECT)
    def post(self, request, slug: str):
        study = get_object_or_404(Study, slug=slug)
        split = study_split(study=study)
        created = [
            {"index": s.index, "stimuli": s.items.filter(is_golden=False).count()}
            for s in split.sessions
        ]
        return Response(
            {"created": created, "golden_added": split.golden_added},
            status=201 if created else 200,
        )
