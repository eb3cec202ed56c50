"""Exports for researchers, streamed row by row so a study of any size fits in memory.

CSV text cells that a spreadsheet would run as a formula (starting with = + - @, tab or
carriage return: prompts, file names, actions, source models, exclusion reasons, keys)
get a leading single quote (OWASP, "CSV Injection"); numbers are written as numbers.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from annotation.models import Answer, Dimension, Stimulus, Study
from annotation.models.session import pseudonym_for
from quality.models import AnalysisRun
from quality.selectors import (
    RATER_COLUMNS,
    RATINGS_COLUMNS,
    rater_statistics,
    ratings_rows,
    received_by,
    run_through,
    study_exclusions,
)
from quality.stats.exclusions import Exclusion, ExclusionIndex
from quality.stats.ratings_csv import spreadsheet_safe

# The interval bounds mos_raw (raw 0-100 scale), not the z-scored mos: hence "_raw".
MOS_FIELDS = ("mos", "mos_raw", "std", "n", "ci95_low_raw", "ci95_high_raw")
# Runs stored before quality.stats/1.1 hold the same interval under its old name.
LEGACY_MOS_KEYS = {"ci95_low_raw": "ci95_low", "ci95_high_raw": "ci95_high"}
EXPORT_NAMES = (
    "mos.csv",
    "ratings.csv",
    "raters.csv",
    "metric_agreement.csv",
    "metric_pairwise.csv",
    "provenance.json",
)
# Exports computed from an analysis run: they need a finished one.
RUN_EXPORTS = ("mos.csv", "metric_agreement.csv", "metric_pairwise.csv")
AGREEMENT_HEADER = (
    "kind",
    "metric",
    "target",
    "n",
    "srcc",
    "plcc",
    "srcc_ci95_low",
    "srcc_ci95_high",
    "plcc_ci95_low",
    "plcc_ci95_high",
    "splits",
    "srcc_std",
    "plcc_std",
)
PAIRWISE_HEADER = ("target", "metric_a", "metric_b", "n", "srcc_a", "srcc_b", "p_value")


class ExportUnavailable(Exception):
    """The export cannot be made (yet); the message says why."""


@dataclass(frozen=True)
class Export:
    lines: Iterable[str]
    filename: str
    content_type: str


class _Echo:
    def write(self, value: str) -> str:
        return value


def _cell(value):
    # None, and NaN (a stored summary's null read into a float column): undefined, an
    # empty cell as the command line writes it, never the text "nan"
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return spreadsheet_safe(value) if isinstance(value, str) else value


def csv_lines(header: Iterable[str], rows: Iterable[Iterable]) -> Iterator[str]:
    """UTF-8 CSV lines (no byte-order mark); None is an empty cell, text is made safe
    for spreadsheets (see the module docstring), numbers are written as they are.

    Lines end in CRLF (RFC 4180): the csv module quotes a cell holding any character of
    the line terminator, so only with CRLF is a carriage return inside a text cell
    quoted rather than read back as the end of a line."""
    writer = csv.writer(_Echo(), lineterminator="\r\n")
    yield writer.writerow([_cell(value) for value in header])
    for row in rows:
        yield writer.writerow([_cell(value) for value in row])


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
    """One row per stimulus with a MOS in the run (at least one kept rating), wide over
    dimensions (MOS_s, MOS_c, MOS_i ...); unrated stimuli are left out."""
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
            cells += [row.get(field, row.get(LEGACY_MOS_KEYS.get(field))) for field in MOS_FIELDS]
        cells.append(combined.get(stimulus[0]))
        yield cells


def run_exclusions(*, study: Study, run: AnalysisRun | None) -> list[Exclusion]:
    """The exclusions the run applied (so that its exports reproduce it), or without a run
    those the study's state decides now (line clickers are found by a run only)."""
    if run is None:
        return study_exclusions(study=study)
    return [Exclusion.from_dict(e) for e in run.exclusions]


def raw_ratings_lines(*, study: Study, run: AnalysisRun | None) -> Iterator[str]:
    """The `python -m quality analyze` input format, plus the rule that left each rating
    out of the run (quality.stats.exclusions; empty when it counts): the ratings the run
    read (received by its start, ``run_through``), the rows with an empty `excluded` cell
    exactly those it analysed; without a run, every rating."""
    index = ExclusionIndex(run_exclusions(study=study, run=run))
    ratings = ratings_rows(study=study, through=run_through(run))
    rows = ((*row, index.rule(row[0], row[4])) for row in ratings)
    return csv_lines([*RATINGS_COLUMNS, "excluded"], rows)


def rater_statistics_lines(*, study: Study, run: AnalysisRun | None) -> Iterator[str]:
    """raters.csv: per rater the live guard's flag while rating (`live_guard_line_click_flag`,
    a warning to admins that excludes nothing) beside what the run decided: `kept`,
    `excluded` (every rating) or `sessions_excluded` (some sessions), with its rules;
    `no_ratings` for a rater with nothing to keep (one who failed the qualification test,
    or stopped before their first answer); `not_in_run` for one whose every answer came
    after the run started (the next run decides)."""
    rows = rater_statistics(study=study)
    in_run = _raters_answered_by(study=study, through=run_through(run)) if run else set()
    rules: dict[str, set[str]] = {}
    whole: set[str] = set()
    for exclusion in run_exclusions(study=study, run=run) if run else []:
        rules.setdefault(exclusion.rater_id, set()).add(exclusion.rule)
        if exclusion.session is None:
            whole.add(exclusion.rater_id)
    for row in rows:
        rater = row["rater_id"]
        row["latest_run_id"] = run.pk if run else None
        if run is None:
            row["latest_run_decision"] = ""
        elif rater in whole:
            row["latest_run_decision"] = "excluded"
        elif not row["answers"]:
            row["latest_run_decision"] = "no_ratings"
        elif rater not in in_run:
            row["latest_run_decision"] = "not_in_run"
        else:
            row["latest_run_decision"] = "sessions_excluded" if rater in rules else "kept"
        row["latest_run_rules"] = ";".join(sorted(rules.get(rater, ())))
    header = [*RATER_COLUMNS, "latest_run_id", "latest_run_decision", "latest_run_rules"]
    return csv_lines(header, ([row[k] for k in header] for row in rows))


def _raters_answered_by(*, study: Study, through) -> set[str]:
    """The pseudonyms of the raters with a session answer received by ``through``."""
    answers = Answer.objects.filter(item__study=study, assignment__isnull=False)
    raters = received_by(answers, through, field="received_at").values_list(
        "assignment__rater_id", flat=True
    )
    return {pseudonym_for(rater) for rater in raters.order_by().distinct()}


def provenance(*, study: Study, run: AnalysisRun | None) -> dict:
    from django.forms.models import model_to_dict

    # not the entry token, nor the marketplace's return links: their completion codes
    # would let anyone who reads a shared provenance file mark a submission complete
    settings = model_to_dict(
        study, exclude=["id", "entry_token", "completion_url", "screenout_url"]
    )
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
            "excluded_ratings": run.summary.get("excluded_ratings"),
            "selection": run.summary.get("selection"),
        },
    }


def metric_agreement_rows(*, run: AnalysisRun) -> Iterator[list]:
    """GAIA Tab. 5 as rows: each metric against each target (bootstrap 95% intervals),
    then the ridge predictor on the content features (mean and std over 80/20 splits)."""
    agreement = run.summary.get("metric_agreement") or {}
    for row in agreement.get("rows", []):
        yield [
            "metric",
            *(row[key] for key in AGREEMENT_HEADER[1:10]),
            None,
            None,
            None,
        ]
    for target, trained in (agreement.get("ridge") or {}).items():
        name = "ridge(" + "+".join(trained["features"]) + ")"
        yield [
            "trained",
            name,
            target,
            trained.get("n", agreement.get("n")),  # runs before 1.1: one common n
            trained["srcc_mean"],
            trained["plcc_mean"],
            *([None] * 4),
            trained["splits"],
            trained["srcc_std"],
            trained["plcc_std"],
        ]


def metric_pairwise_rows(*, run: AnalysisRun) -> Iterator[list]:
    """The paired bootstrap test between each two metrics, per target (GAIA Fig. 15):
    n common stimuli, each metric's SRCC on them, and the two-sided p-value that their
    |SRCC| differ. Runs before quality.stats/1.1 stored pairs (as "a"/"b") from a test of
    signed SRCC, which called an equally good decreasing metric different: not exported."""
    agreement = run.summary.get("metric_agreement") or {}
    for pair in agreement.get("pairwise", []):
        if "metric_a" in pair:
            yield [pair.get(key) for key in PAIRWISE_HEADER]


def export_content(*, study: Study, name: str, run: AnalysisRun | None) -> Export:
    """The lines of one named export of the study's design and how to deliver them;
    raises ExportUnavailable for an unknown name, or a run export without a finished
    run."""
    from quality.designs import analysis_of

    analysis = analysis_of(study)
    if name not in analysis.exports:
        raise ExportUnavailable(f"no export '{name}' (one of {', '.join(analysis.exports)})")
    if name in analysis.run_exports and run is None:
        raise ExportUnavailable("no finished analysis run yet: request one first")
    return analysis.export(study=study, name=name, run=run)


def slider_export(*, study: Study, name: str, run: AnalysisRun | None) -> Export:
    """The exports of a slider study (EXPORT_NAMES)."""
    slug = study.slug
    if name == "mos.csv":
        keys = list(study.dimensions.values_list("key", flat=True))
        lines = csv_lines(mos_header(keys), mos_rows(run=run))
        return Export(lines, f"{slug}-mos-run{run.pk}.csv", "text/csv; charset=utf-8")
    if name == "metric_agreement.csv":
        lines = csv_lines(AGREEMENT_HEADER, metric_agreement_rows(run=run))
        return Export(lines, f"{slug}-metric-agreement-run{run.pk}.csv", "text/csv; charset=utf-8")
    if name == "metric_pairwise.csv":
        lines = csv_lines(PAIRWISE_HEADER, metric_pairwise_rows(run=run))
        return Export(lines, f"{slug}-metric-pairwise-run{run.pk}.csv", "text/csv; charset=utf-8")
    if name == "ratings.csv":
        lines = raw_ratings_lines(study=study, run=run)
        return Export(lines, raw_name(study, name, run), "text/csv; charset=utf-8")
    return shared_export(study=study, name=name, run=run)


def raw_name(study: Study, name: str, run: AnalysisRun | None) -> str:
    """A raw export's file name, ``<slug>-ratings-run16.csv``: what it holds (the answers
    received by the run's start, its exclusions marked) depends on the run, so two
    downloads for two runs are not one name; ``<slug>-ratings.csv`` before any run."""
    stem, dot, suffix = name.rpartition(".")
    return f"{study.slug}-{stem}{f'-run{run.pk}' if run is not None else ''}{dot}{suffix}"


def shared_export(*, study: Study, name: str, run: AnalysisRun | None) -> Export:
    """The exports every design offers: raters.csv, else provenance.json."""
    if name == "raters.csv":
        return Export(
            rater_statistics_lines(study=study, run=run),
            raw_name(study, name, run),
            "text/csv; charset=utf-8",
        )
    text = json.dumps(provenance(study=study, run=run), indent=2) + "\n"
    return Export([text], raw_name(study, name, run), "application/json")
