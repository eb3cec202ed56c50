"""What a study design is to the analysis side: how a run is computed and stored, which
exports and figures it offers, and what the results page shows. The journey's side of a
design is annotation.designs; the two are keyed alike (``Study.design``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Computed:
    """What a finished analysis run stores (quality.models.AnalysisRun)."""

    summary: dict
    exclusions: list[dict]
    ratings_count: int  # the answers' value rows the run read (ratings, judgments, ...)
    mos: list[dict] = field(default_factory=list)
    code_version: str = ""


@dataclass(frozen=True)
class Analysis:
    """One design's analysis. Functions take keyword arguments.

    - ``settings_for(study)``: the settings a run is made with (stored on the run).
    - ``execute(run)``: computes the run; a ValueError says why the study cannot be
      analysed (no answers yet, every answer excluded, ...).
    - ``exports``: the export names; ``run_exports``: those that need a finished run.
    - ``export(study, name, run)``: an export's lines (quality.export.Export).
    - ``figures``: name -> title; ``available(summary)``: those a run has data for;
      ``draw(name, run)``: a figure's PNG bytes.
    - ``results_template``: the results page's part for this design, and
      ``results_context(run)`` what it needs.
    """

    key: str
    settings_for: Callable[..., dict]
    execute: Callable[..., Computed]
    exports: tuple[str, ...]
    run_exports: tuple[str, ...]
    export: Callable[..., object]
    figures: dict[str, str]
    available: Callable[[dict], list[str]]
    draw: Callable[..., bytes]
    results_template: str
    results_context: Callable[..., dict]
    # The exclusion rules (quality.stats.exclusions) a run of this design applies.
    rules: tuple[str, ...] = ()
    # What the run's value rows are called on the results page ("ratings", "judgments").
    rows_noun: str = "ratings"
