"""Endpoints for admins (the live monitor and its actions) and researchers (studies)."""

from __future__ import annotations

from django.db import transaction
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiTypes, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Assignment, Participation, Payment, Stimulus, Study
from annotation.monitor import study_monitor
from annotation.roles import IsResearcher, IsStudyAdmin
from annotation.services import admin_actions
from annotation.services.studies import study_build_sessions
from annotation.services.uploads import stimulus_upload


class StudyListView(APIView):
    permission_classes = [IsResearcher]

    class StudySerializer(serializers.ModelSerializer):
        class Meta:
            model = Study
            fields = [
                "slug",
                "name",
                "state",
                "session_size",
                "golden_per_session",
                "rest_every",
                "rest_seconds",
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


class StudyProgressView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request, slug: str):
        study = get_object_or_404(Study, slug=slug)
        return Response(study_monitor(study=study)["progress"])


class MonitorView(APIView):
    permission_classes = [IsStudyAdmin]

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request, slug: str):
        return Response(study_monitor(study=get_object_or_404(Study, slug=slug)))


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


class PaymentDecisionView(APIView):
    permission_classes = [IsStudyAdmin]

    class PaymentDecisionSerializer(serializers.Serializer):
        approve = serializers.BooleanField()
        note = serializers.CharField(max_length=2000, required=False, allow_blank=True)

    @extend_schema(request=PaymentDecisionSerializer, responses=OpenApiTypes.OBJECT)
    def post(self, request, pk: int):
        data = self.PaymentDecisionSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        payment = admin_actions.payment_decide(
            payment=get_object_or_404(Payment, pk=pk), by=request.user, **data.validated_data
        )
        return Response({"id": payment.pk, "status": payment.status})


def label_field(name: str) -> serializers.CharField:
    """An optional content label, as long as the Stimulus field that stores it allows."""
    return serializers.CharField(
        required=False, allow_blank=True, max_length=Stimulus._meta.get_field(name).max_length
    )


class StimulusUploadView(APIView):
    """Upload one video into a study (multipart: `file`, optional `role` and labels)."""

    permission_classes = [IsStudyAdmin]

    class UploadSerializer(serializers.Serializer):
        file = serializers.FileField()
        role = serializers.ChoiceField(choices=Stimulus.Role.choices, default="stimulus")
        prompt = serializers.CharField(required=False, allow_blank=True)
        action = label_field("action")
        action_class = label_field("action_class")
        action_subclass = label_field("action_subclass")
        source_model = label_field("source_model")

    @extend_schema(request={"multipart/form-data": UploadSerializer}, responses=OpenApiTypes.OBJECT)
    def post(self, request, slug: str):
        study = get_object_or_404(Study, slug=slug)
        data = self.UploadSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        upload, role = values.pop("file"), values.pop("role")
        stimulus = stimulus_upload(study=study, upload=upload, role=role, labels=values)
        return Response(
            {
                "stimulus": str(stimulus.public_id),
                "status": stimulus.status,
                "checksum": stimulus.checksum,
            },
            status=201,
        )


class SessionBuildView(APIView):
    """Split the study's stimuli that are in no session yet into new sessions (after
    uploads: an upload adds one video, and sessions are cut from all of them at once)."""

    permission_classes = [IsStudyAdmin]

    @extend_schema(request=None, responses=OpenApiTypes.OBJECT)
    def post(self, request, slug: str):
        study = get_object_or_404(Study, slug=slug)
        with transaction.atomic():
            sessions = study_build_sessions(study=study)
        created = [
            {"index": s.index, "stimuli": s.items.filter(is_golden=False).count()} for s in sessions
        ]
        return Response({"created": created}, status=201 if created else 200)
