"""Researcher endpoints: analysis runs, exports (streamed) and figures."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.http import HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiTypes, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from annotation.designs.base import plain_int
from annotation.errors import Conflict, NotFound
from annotation.models import Study
from annotation.roles import IsResearcher
from config.file_serving import file_response
from quality import export
from quality.designs import analysis_of
from quality.models import AnalysisRun, ExportJob
from quality.services import analysis_run_request, export_job_request


class RunSerializer(serializers.ModelSerializer):
    class Meta:
        model = AnalysisRun
        fields = [
            "id",
            "status",
            "progress",
            "settings_snapshot",
            "code_version",
            "ratings_count",
            "exclusions",
            "summary",
            "error",
            "created_at",
            "started_at",
            "finished_at",
        ]


def latest_done_run(study: Study, run_id: str | None) -> AnalysisRun | None:
    runs = AnalysisRun.objects.filter(study=study, status=AnalysisRun.Status.DONE)
    if run_id:
        pk = plain_int(run_id)
        run = None if pk is None else runs.filter(pk=pk).first()
        if run is None:
            raise NotFound(f"no finished analysis run {run_id} in this study")
        return run
    return runs.order_by("-created_at").first()


class AnalysisRunListView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(responses=RunSerializer(many=True))
    def get(self, request, slug: str):
        study = get_object_or_404(Study, slug=slug)
        runs = AnalysisRun.objects.filter(study=study).order_by("-created_at")[:50]
        return Response(RunSerializer(runs, many=True).data)

    @extend_schema(request=None, responses=RunSerializer)
    def post(self, request, slug: str):
        study = get_object_or_404(Study, slug=slug)
        run = analysis_run_request(study=study, requested_by=request.user)
        run.refresh_from_db()
        return Response(RunSerializer(run).data, status=status.HTTP_202_ACCEPTED)


class AnalysisRunDetailView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(responses=RunSerializer)
    def get(self, request, pk: int):
        return Response(RunSerializer(get_object_or_404(AnalysisRun, pk=pk)).data)


class FigureView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(responses={(200, "image/png"): OpenApiTypes.BINARY})
    def get(self, request, pk: int, name: str):
        run = get_object_or_404(AnalysisRun, pk=pk, status=AnalysisRun.Status.DONE)
        analysis = analysis_of(run.study)
        names = analysis.available(run.summary)
        if name not in names:
            offered = ", ".join(names) or "none: no rater was kept"
            raise NotFound(f"no figure '{name}' for this run (it offers {offered})")
        png = analysis.draw(name=name, run=run)
        response = HttpResponse(png, content_type="image/png")
        response["Content-Disposition"] = (
            f'inline; filename="{run.study.slug}-run{run.pk}-{name}.png"'
        )
        return response


def _unavailable_as_not_found(call):
    try:
        return call()
    except export.ExportUnavailable as exc:
        raise NotFound(str(exc)) from exc


class ExportView(APIView):
    """`mos.csv`, `ratings.csv`, `raters.csv`, `metric_agreement.csv`,
    `metric_pairwise.csv` and `provenance.json`, streamed; `?run=ID` picks a finished
    analysis run (default: the latest). For very large studies, an export job writes the
    same bytes to a file."""

    permission_classes = [IsResearcher]

    @extend_schema(responses={(200, "text/csv"): OpenApiTypes.STR})
    def get(self, request, slug: str, name: str):
        study = get_object_or_404(Study, slug=slug)
        run = latest_done_run(study, request.query_params.get("run"))
        content = _unavailable_as_not_found(
            lambda: export.export_content(study=study, name=name, run=run)
        )
        if isinstance(content.lines, list):  # already whole (the provenance JSON)
            response = HttpResponse("".join(content.lines), content_type=content.content_type)
        else:
            response = StreamingHttpResponse(content.lines, content_type=content.content_type)
        response["Content-Disposition"] = f'attachment; filename="{content.filename}"'
        return response


class ExportJobSerializer(serializers.ModelSerializer):
    download_url = serializers.SerializerMethodField()

    class Meta:
        model = ExportJob
        fields = [
            "id",
            "name",
            "run",
            "status",
            "size_bytes",
            "error",
            "created_at",
            "finished_at",
            "download_url",
        ]

    def get_download_url(self, job: ExportJob) -> str | None:
        if job.status != ExportJob.Status.DONE:
            return None
        return reverse("export-job-download", kwargs={"pk": job.pk})


class ExportJobListView(APIView):
    """Export jobs of a study: POST {"name": "ratings.csv", "run": ID?} queues one."""

    permission_classes = [IsResearcher]

    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=40)  # the study's design has the names
        run = serializers.IntegerField(required=False, min_value=1)

    @extend_schema(responses=ExportJobSerializer(many=True))
    def get(self, request, slug: str):
        study = get_object_or_404(Study, slug=slug)
        jobs = ExportJob.objects.filter(study=study).order_by("-created_at")[:50]
        return Response(ExportJobSerializer(jobs, many=True).data)

    @extend_schema(request=InputSerializer, responses=ExportJobSerializer)
    def post(self, request, slug: str):
        study = get_object_or_404(Study, slug=slug)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        names = analysis_of(study).exports
        if data.validated_data["name"] not in names:
            raise serializers.ValidationError(
                {"name": [f"not an export of this study (one of {', '.join(names)})"]}
            )
        run_id = data.validated_data.get("run")
        run = latest_done_run(study, None if run_id is None else str(run_id))
        job = _unavailable_as_not_found(
            lambda: export_job_request(
                study=study, name=data.validated_data["name"], run=run, requested_by=request.user
            )
        )
        job.refresh_from_db()
        return Response(ExportJobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


class ExportJobDetailView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(responses=ExportJobSerializer)
    def get(self, request, pk: int):
        return Response(ExportJobSerializer(get_object_or_404(ExportJob, pk=pk)).data)


def download_name(job: ExportJob) -> str:
    """The streamed export's name (``<slug>-mos-run16.csv``), which the file keeps after
    its ``<job>-<token>-`` prefix; a file written before it did so ends with the export's
    bare name."""
    stored = Path(job.file.name).name.split("-", 2)[-1]
    return f"{job.study.slug}-{job.name}" if stored == job.name else stored


class ExportJobDownloadView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(responses={(200, "application/octet-stream"): OpenApiTypes.BINARY})
    def get(self, request, pk: int):
        job = get_object_or_404(ExportJob, pk=pk)
        if job.status != ExportJob.Status.DONE:
            raise Conflict(f"the export is {job.status}, not ready for download")
        path = Path(settings.MEDIA_ROOT) / job.file.name
        if not path.is_file():
            raise NotFound("the export file is gone; request the export again")
        response = file_response(request, path)
        response["Content-Disposition"] = f'attachment; filename="{download_name(job)}"'
        response["Cache-Control"] = "private, no-store"
        return response
