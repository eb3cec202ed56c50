"""Researcher endpoints: analysis runs, exports (streamed) and figures."""

from __future__ import annotations

import pandas as pd
from django.http import HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiTypes, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.errors import NotFound
from annotation.models import Stimulus, Study
from annotation.roles import IsResearcher
from quality import export, plots
from quality.models import AnalysisRun
from quality.services import analysis_run_request


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
        run = runs.filter(pk=run_id).first() if run_id.isdigit() else None
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


def run_mos_frame(run: AnalysisRun) -> pd.DataFrame:
    mos = pd.DataFrame(run.mos)
    labels = pd.DataFrame(
        Stimulus.objects.filter(study=run.study).values("id", "source_model", "action_class")
    ).rename(columns={"id": "video_id"})
    mos["video_id"] = mos["video_id"].astype(int)
    return mos.merge(labels, on="video_id", how="left")


class FigureView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(responses={(200, "image/png"): OpenApiTypes.BINARY})
    def get(self, request, pk: int, name: str):
        run = get_object_or_404(AnalysisRun, pk=pk, status=AnalysisRun.Status.DONE)
        if name not in plots.FIGURES:
            raise NotFound(f"no figure '{name}' (one of {', '.join(plots.FIGURES)})")
        png = plots.draw(name, mos=run_mos_frame(run), summary=run.summary)
        response = HttpResponse(png, content_type="image/png")
        response["Content-Disposition"] = (
            f'inline; filename="{run.study.slug}-run{run.pk}-{name}.png"'
        )
        return response


def _csv_response(lines, filename: str) -> StreamingHttpResponse:
    response = StreamingHttpResponse(lines, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


class ExportView(APIView):
    """`mos.csv`, `ratings.csv`, `raters.csv` and `provenance.json`; `?run=ID` picks a
    finished analysis run (default: the latest)."""

    permission_classes = [IsResearcher]
    NAMES = ("mos.csv", "ratings.csv", "raters.csv", "provenance.json")

    @extend_schema(responses={(200, "text/csv"): OpenApiTypes.STR})
    def get(self, request, slug: str, name: str):
        study = get_object_or_404(Study, slug=slug)
        if name not in self.NAMES:
            raise NotFound(f"no export '{name}' (one of {', '.join(self.NAMES)})")
        run = latest_done_run(study, request.query_params.get("run"))
        if name == "mos.csv":
            if run is None:
                raise NotFound("no finished analysis run yet: request one first")
            keys = list(study.dimensions.values_list("key", flat=True))
            lines = export.csv_lines(export.mos_header(keys), export.mos_rows(run=run))
            return _csv_response(lines, f"{study.slug}-mos-run{run.pk}.csv")
        if name == "ratings.csv":
            return _csv_response(
                export.raw_ratings_lines(study=study, run=run), f"{study.slug}-ratings.csv"
            )
        if name == "raters.csv":
            return _csv_response(
                export.rater_statistics_lines(study=study), f"{study.slug}-raters.csv"
            )
        response = JsonResponse(
            export.provenance(study=study, run=run), json_dumps_params={"indent": 2}
        )
        response["Content-Disposition"] = f'attachment; filename="{study.slug}-provenance.json"'
        return response
