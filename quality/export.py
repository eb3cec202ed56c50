"""Exports for researchers, streamed row by row so a study of any size fits in memory."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator

from annotation.models import Dimension, Stimulus, Study
from quality.models import AnalysisRun
from quality.selectors import RATINGS_COLUMNS, rater_statistics, ratings_rows

MOS_FIELDS = ("mos", "mos_raw", "std", "n", "ci95_low", "ci95_high")


class _Echo:
    def write(self, value: str) -> str:
        return value


def csv_lines(header: Iterable[str], rows: Iterable[Iterable]) -> Iterator[str]:
    writer = csv.writer(_Echo(), lineterminator="\n")
    yield writer.writerow(list(header))
    for row in rows:
        yield writer.writerow(["" if value is None else value for value in row])


def mos_header(dimension_keys: list[str]) -> list[str]:
    header = [
        "stimulus_id",
        "file_name",
        "prompt",
        "action",
        "action_class",
        "action_subclass",
        "source_model",
    ]
    for key in dimension_keys:
        header += [f"{field}_{key}" for field in MOS_FIELDS]
    return [*header, "all_combined"]


def mos_rows(*, run: AnalysisRun) -> Iterator[list]:
    """One row per stimulus of the run, wide over dimensions (MOS_s, MOS_c, MOS_i ...)."""
    keys = list(Dimension.objects.filter(study=run.study).values_list("key", flat=True))
    by_video: dict[int, dict[str, dict]] = {}
    for row in run.mos:
        by_video.setdefault(int(row["video_id"]), {})[row["dimension"]] = row
    combined = {int(k): v for k, v in run.summary.get("all_combined", {}).items()}
    stimuli = (
        Stimulus.objects.filter(pk__in=by_video)
        .order_by("pk")
        .values_list(
            "pk",
            "original_name",
            "prompt",
            "action",
            "action_class",
            "action_subclass",
            "source_model",
        )
    )
    for stimulus in stimuli.iterator(chunk_size=2000):
        cells = list(stimulus)
        for key in keys:
            row = by_video[stimulus[0]].get(key, {})
            cells += [row.get(field) for field in MOS_FIELDS]
        cells.append(combined.get(stimulus[0]))
        yield cells


def raw_ratings_lines(*, study: Study, run: AnalysisRun | None) -> Iterator[str]:
    """The `python -m quality analyze` input format, plus why a rater was excluded."""
    reasons = {}
    for exclusion in run.exclusions if run else []:
        reasons[exclusion["rater_id"]] = exclusion.get("reason", "excluded")
    rows = ((*row, reasons.get(row[0], "")) for row in ratings_rows(study=study))
    return csv_lines([*RATINGS_COLUMNS, "excluded"], rows)


def rater_statistics_lines(*, study: Study) -> Iterator[str]:
    rows = rater_statistics(study=study)
    header = list(rows[0]) if rows else ["rater_id"]
    return csv_lines(header, ([row[k] for k in header] for row in rows))


def provenance(*, study: Study, run: AnalysisRun | None) -> dict:
    from django.forms.models import model_to_dict

    settings = model_to_dict(study, exclude=["id", "entry_token"])
    settings["payment_per_session"] = str(settings["payment_per_session"])
    return {
        "study": study.slug,
        "study_settings": settings,
        "dimensions": list(study.dimensions.values("key", "label", "order")),
        "analysis_run": None
        if run is None
        else {
            "id": run.pk,
            "code_version": run.code_version,
            "status": run.status,
            "settings": run.settings_snapshot,
            "ratings_count": run.ratings_count,
            "created_at": run.created_at.isoformat(),
            "finished_at": run.finished_at.isoformat() if run.finished_at else None,
            "exclusions": run.exclusions,
        },
    }
