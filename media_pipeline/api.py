"""The media pipeline's API: uploading a video into a study (it is probed, stored and
queued for processing here, so that annotation never reaches into the media services)."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiTypes, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Stimulus, Study
from annotation.roles import IsStudyAdmin
from media_pipeline.services.uploads import stimulus_upload


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
        condition = label_field("condition")
        content = label_field("content")
        expected = serializers.ChoiceField(
            choices=["", "best", "worst"], required=False, allow_blank=True
        )

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
