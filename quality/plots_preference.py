"""A preference study's figures as PNG bytes (matplotlib, Agg), drawn from a stored run's
summary: the scale with its intervals, the win-rate matrix and each rater's position
bias. Plain data in, bytes out: nothing here knows of Django."""

from __future__ import annotations

import math

import numpy as np

from quality.plots import _empty_figure, _png, plt

FIGURES = {
    "scale": "The conditions' scale per question, with rater-bootstrap 95% intervals",
    "win-rate": "Win rate of each condition (row) against each other (column), ties aside",
    "position-bias": "Share of 'left' among each rater's decisive answers",
}


def available(summary: dict) -> list[str]:
    has = {
        "scale": bool(summary.get("scale")),
        "win-rate": bool(summary.get("pairs")),
        "position-bias": bool(summary.get("raters")),
    }
    return [name for name in FIGURES if has[name]]


def _number(value) -> float:
    return math.nan if value is None else float(value)


def scale(rows: list[dict], unit: str) -> bytes:
    questions = list(dict.fromkeys(row["question"] for row in rows))
    tallest = max(sum(r["question"] == q for r in rows) for q in questions)
    height = 1.2 + 0.45 * tallest * len(questions)
    # constrained: the figure's title clear of the first question's
    fig, axes = plt.subplots(
        len(questions), 1, figsize=(7, height), squeeze=False, layout="constrained"
    )
    for ax, question in zip(axes[:, 0], questions, strict=True):
        mine = [r for r in rows if r["question"] == question]
        mine.sort(key=lambda r: _number(r["score"]))
        y = np.arange(len(mine))
        score = np.array([_number(r["score"]) for r in mine])
        low = np.array([_number(r["ci95_low"]) for r in mine])
        high = np.array([_number(r["ci95_high"]) for r in mine])
        ax.errorbar(score, y, xerr=[score - low, high - score], fmt="o", capsize=3)
        ax.set_yticks(y, [str(r["condition"]) for r in mine])
        ax.axvline(0, color="grey", lw=0.5)
        ax.set_title(question, fontsize="medium")
        ax.set_xlabel(unit or "score")
        ax.grid(axis="x", alpha=0.3)
    fig.suptitle(FIGURES["scale"], fontsize="medium")
    return _png(fig)


def win_rate(pairs: list[dict]) -> bytes:
    questions = list(dict.fromkeys(row["question"] for row in pairs))
    fig, axes = plt.subplots(
        1, len(questions), figsize=(5.5 * len(questions), 4.6), squeeze=False, layout="constrained"
    )
    for ax, question in zip(axes[0], questions, strict=True):
        mine = [r for r in pairs if r["question"] == question]
        names = sorted({r["condition_a"] for r in mine} | {r["condition_b"] for r in mine})
        index = {name: i for i, name in enumerate(names)}
        matrix = np.full((len(names), len(names)), np.nan)
        for r in mine:
            rate = _number(r["win_rate_a"])
            a, b = index[r["condition_a"]], index[r["condition_b"]]
            matrix[a, b], matrix[b, a] = rate, 1 - rate
        image = ax.imshow(matrix, vmin=0, vmax=1, cmap="RdBu")
        ax.set_xticks(range(len(names)), names, rotation=45, ha="right")
        ax.set_yticks(range(len(names)), names)
        for (i, j), value in np.ndenumerate(matrix):
            if not np.isnan(value):
                ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize="x-small")
        ax.set_title(question, fontsize="medium")
        fig.colorbar(image, ax=ax, fraction=0.046)
    fig.suptitle(FIGURES["win-rate"], fontsize="medium")
    return _png(fig)


def position_bias(raters: list[dict]) -> bytes:
    rows = [r for r in raters if r.get("n_decisive")]
    if not rows:
        return _empty_figure(FIGURES["position-bias"], "no decisive answer yet")
    rows.sort(key=lambda r: _number(r["left_share"]))
    fig, ax = plt.subplots(figsize=(7, 1 + 0.3 * len(rows)))
    y = np.arange(len(rows))
    colours = ["#b3261e" if r.get("excluded") else "#2f6fde" for r in rows]
    ax.barh(y, [_number(r["left_share"]) for r in rows], color=colours)
    ax.axvline(0.5, color="black", lw=0.8)
    ax.set_yticks(y, [f"{r['rater_id']} (n={r['n_decisive']})" for r in rows])
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of 'left' (0.5: no bias; red: screened out)")
    ax.set_title(FIGURES["position-bias"], fontsize="medium")
    return _png(fig)


def draw(name: str, *, summary: dict) -> bytes:
    if name == "scale":
        return scale(summary.get("scale", []), summary.get("unit", ""))
    if name == "win-rate":
        return win_rate(summary.get("pairs", []))
    if name == "position-bias":
        return position_bias(summary.get("raters", []))
    raise KeyError(name)
