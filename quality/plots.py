"""The study's figures as PNG bytes (matplotlib, Agg): GAIA Fig. 2, 3, 5, 6, 14 and Tab. 5.

Each function takes plain data (DataFrames and dicts from a stored analysis run) and
knows nothing of Django, so the same figures can be drawn from the CLI's output.
"""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
# Labels are names people chose (dimensions, conditions, metrics, rater ids): drawn as
# written, never read as mathtext ("$\x$" would be TeX, or a parse error and no figure).
matplotlib.rcParams["text.parse_math"] = False
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import FuncFormatter, NullFormatter  # noqa: E402

FIGURES = {
    "srcc-curve": "SRCC between two groups of raters against the number of raters (Fig. 2)",
    "mos-by-model": "MOS distribution per source model (Fig. 3)",
    "mos-by-class": "MOS per action class (Fig. 5)",
    "model-ranking": "Source models ranked by mean MOS (Fig. 6)",
    "mos-vs-std": "MOS against the standard deviation of ratings (Fig. 14)",
    "metric-agreement": "SRCC of each automatic metric with MOS, bootstrap 95% intervals (Tab. 5)",
}


MOS_FIGURES = ("mos-by-model", "mos-by-class", "model-ranking", "mos-vs-std")
NO_MOS = "no MOS in this run (no kept ratings)"


def available(summary: dict) -> list[str]:
    """The figures a run's summary has data for, the one list the API and the results
    page offer: the MOS figures need a kept rating (a run whose raters were all excluded
    has no MOS), the SRCC curve a group size, the metric agreement metric scores."""
    has_data = {
        "srcc-curve": any(summary.get("srcc_curve", {}).values()),
        "metric-agreement": bool(summary.get("metric_agreement")),
    }
    has_mos = summary.get("counts", {}).get("ratings_kept", 0) > 0
    return [name for name in FIGURES if has_data.get(name, has_mos)]


def _png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return buffer.getvalue()


def _no_data(ax, message: str) -> None:
    ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes, wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])


def _empty_figure(title: str, message: str) -> bytes:
    fig, ax = plt.subplots(figsize=(6, 2.5))
    _no_data(ax, message)
    ax.set_title(title)
    return _png(fig)


def _number(value) -> float:
    """A stored statistic as a float: null (undefined, NaN before storage) is NaN again."""
    return float("nan") if value is None else float(value)


# Past this many raters per group (the sizes are then on a grid, past 30:
# quality.stats.srcc_curve.group_sizes) the curve's x axis is logarithmic, so that the
# first few raters, where the curve climbs, are not squeezed against the axis.
LOG_AXIS_FROM = 60


def srcc_curve(curve: dict[str, dict]) -> bytes:
    """`curve`: {dimension: {n: {"mean", "low", "high"}}}; an undefined point (no two
    stimuli rated by both groups in any draw, stored as null) is a gap in the line. The
    x axis is logarithmic past LOG_AXIS_FROM raters per group."""
    fig, ax = plt.subplots(figsize=(6, 4))
    defined = False
    largest = max((int(n) for points in curve.values() for n in points), default=0)
    if largest > LOG_AXIS_FROM:
        ax.set_xscale("log")
        # plain numbers (1, 10, 100): the log formatter's TeX is off with parse_math
        ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
    for dimension, points in curve.items():
        ns = sorted(points, key=int)
        sizes = [int(n) for n in ns]
        means = [_number(points[n]["mean"]) for n in ns]
        lows = [_number(points[n].get("low", points[n]["mean"])) for n in ns]
        highs = [_number(points[n].get("high", points[n]["mean"])) for n in ns]
        ax.plot(sizes, means, marker="o", ms=3, label=dimension)
        ax.fill_between(sizes, lows, highs, alpha=0.15)
        defined = defined or any(m == m for m in means)  # NaN != NaN
    if not defined:
        _no_data(ax, "no defined SRCC: too few raters, or no two stimuli rated by both groups")
    ax.set_xlabel("raters per group")
    ax.set_ylabel("mean SRCC between groups")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    if curve:
        ax.legend()
    return _png(fig)


def mos_by_group(mos: pd.DataFrame, *, group: str, title: str) -> bytes:
    """Box plots of MOS per `group` (source_model or action_class), one panel a dimension."""
    if mos.empty:
        return _empty_figure(title, NO_MOS)
    dimensions = sorted(mos["dimension"].unique())
    fig, axes = plt.subplots(
        1, len(dimensions), figsize=(4.2 * len(dimensions), 4), squeeze=False, sharey=True
    )
    for ax, dimension in zip(axes[0], dimensions, strict=True):
        part = mos[mos["dimension"] == dimension]
        groups = sorted(part[group].fillna("unknown").unique())
        data = [part.loc[part[group].fillna("unknown") == g, "mos"].to_numpy() for g in groups]
        ax.boxplot(data, tick_labels=groups)
        ax.set_title(dimension)
        ax.tick_params(axis="x", rotation=60)
        ax.set_ylim(0, 100)
    axes[0][0].set_ylabel("MOS")
    fig.suptitle(title)
    return _png(fig)


def model_ranking(mos: pd.DataFrame) -> bytes:
    if mos.empty:
        return _empty_figure(FIGURES["model-ranking"], NO_MOS)
    models = mos["source_model"].fillna("unknown")
    means = mos.groupby([models, "dimension"])["mos"].mean().unstack("dimension")
    means = means.assign(_all=means.mean(axis=1)).sort_values("_all").drop(columns="_all")
    fig, ax = plt.subplots(figsize=(7, 0.4 * len(means) + 1.5))
    means.plot.barh(ax=ax)
    ax.set_xlabel("mean MOS")
    ax.set_xlim(0, 100)
    ax.grid(axis="x", alpha=0.3)
    return _png(fig)


def mos_vs_std(mos: pd.DataFrame) -> bytes:
    if mos.empty:
        return _empty_figure(FIGURES["mos-vs-std"], NO_MOS)
    dimensions = sorted(mos["dimension"].unique())
    fig, axes = plt.subplots(1, len(dimensions), figsize=(4 * len(dimensions), 3.6), squeeze=False)
    for ax, dimension in zip(axes[0], dimensions, strict=True):
        part = mos[mos["dimension"] == dimension]
        ax.scatter(part["mos"], part["std"], s=6, alpha=0.5)
        ax.set_title(dimension)
        ax.set_xlabel("MOS")
    axes[0][0].set_ylabel("standard deviation of raw scores")
    return _png(fig)


def metric_agreement(agreement: dict) -> bytes:
    """Horizontal bars of SRCC per metric, one group of bars per target (MOS dimension,
    All-Combined), with the bootstrap 95% interval as error bars."""
    rows = pd.DataFrame(agreement["rows"])
    metrics = sorted(rows["metric"].unique())
    targets = list(dict.fromkeys(rows["target"]))
    height = 0.8 / len(targets)
    fig, ax = plt.subplots(figsize=(7, 0.35 * len(metrics) * len(targets) + 1.5))
    for i, target in enumerate(targets):
        part = rows[rows["target"] == target].set_index("metric").reindex(metrics)
        positions = [m + i * height for m in range(len(metrics))]
        errors = [
            (part["srcc"] - part["srcc_ci95_low"]).clip(lower=0).fillna(0),
            (part["srcc_ci95_high"] - part["srcc"]).clip(lower=0).fillna(0),
        ]
        ax.barh(positions, part["srcc"].fillna(0), height=height, xerr=errors, label=target)
    ax.set_yticks([m + 0.4 - height / 2 for m in range(len(metrics))], metrics)
    ax.set_xlabel("SRCC with MOS")
    ax.set_xlim(-1, 1)
    ax.axvline(0, color="black", lw=0.5)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize="small")
    return _png(fig)


def draw(name: str, *, mos: pd.DataFrame, summary: dict) -> bytes:
    if name == "srcc-curve":
        return srcc_curve(
            summary.get("srcc_curve_detail")
            or {
                d: {n: {"mean": v} for n, v in points.items()}
                for d, points in summary.get("srcc_curve", {}).items()
            }
        )
    if name == "mos-by-model":
        return mos_by_group(mos, group="source_model", title=FIGURES[name])
    if name == "mos-by-class":
        return mos_by_group(mos, group="action_class", title=FIGURES[name])
    if name == "model-ranking":
        return model_ranking(mos)
    if name == "mos-vs-std":
        return mos_vs_std(mos)
    if name == "metric-agreement" and summary.get("metric_agreement"):
        return metric_agreement(summary["metric_agreement"])
    raise KeyError(name)
