"""The results page and figures of propose-then-verify runs (quality/designs/
propose_verify.py): stage 1's recall curve, the labels proposed and kept, and what the
page lists from the run's summary."""

from __future__ import annotations

import numpy as np

from annotation.designs.propose_study import PROPOSE, VERIFY
from quality.plots import _empty_figure, _png, plt

FIGURES = {
    "proposal-recall": "Recall of the experts' labels by k proposers' union (golden segments)",
    "label-counts": "Labels proposed and kept, per action",
}
SHOWN_SEGMENTS = 200  # the results page lists this many segments; the exports hold all


def available(summary: dict) -> list[str]:
    found = {
        "proposal-recall": bool((summary.get("recall") or {}).get("curve")),
        "label-counts": any(c["proposed"] for c in summary.get("label_counts", [])),
    }
    return [name for name in FIGURES if found[name]]


def _shown_k(summary: dict) -> int:
    """The recall table and the curve's labels stop at 3 proposers or the study's number,
    whichever is more (every proposer of a stage answers its golden segments)."""
    return max(3, summary.get("settings", {}).get("proposers_per_item", 3))


def recall_curve(recall: dict | None, proposers: int, shown: int) -> bytes:
    """recall(k) against k, the study's proposers per segment marked, the first `shown`
    points labelled with their values."""
    curve = (recall or {}).get("curve") or {}
    if not curve:
        return _empty_figure(FIGURES["proposal-recall"], "no golden segment proposed for yet")
    ks = sorted(int(k) for k in curve)
    values = [curve[str(k)] for k in ks]
    fig, ax = plt.subplots(figsize=(6, 3.8))
    ax.plot(ks, values, marker="o")
    for k, value in zip(ks[:shown], values, strict=False):
        ax.annotate(f"{value:.2f}", (k, value), textcoords="offset points", xytext=(0, 7),
                    ha="center", fontsize="small")  # fmt: skip
    ax.axvline(
        proposers, color="grey", ls="--", lw=0.8, label=f"proposers per segment: {proposers}"
    )
    ax.set_xticks(ks)
    ax.set_xlim(min(ks) - 0.3, max(ks) + 0.3)
    ax.set_xlabel("proposers k (union of their proposals)")
    ax.set_ylabel("recall of the experts' labels")
    ax.set_ylim(0, 1.12)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", loc="lower right")
    ax.set_title(FIGURES["proposal-recall"], fontsize="medium")
    return _png(fig)


def _short(name: str, most: int = 36) -> str:
    return name if len(name) <= most else name[: most - 1] + "…"


def label_count_bars(counts: list[dict]) -> bytes:
    """Per action proposed at least once: proposals and segments where it was kept."""
    shown = [c for c in counts if c["proposed"] or c["kept"]]
    if not shown:
        return _empty_figure(FIGURES["label-counts"], "no label proposed yet")
    names = [f"{c['action_id']} {_short(c['action'])}" for c in shown][::-1]
    fig, ax = plt.subplots(figsize=(7, 1.2 + 0.32 * len(shown)))
    positions = np.arange(len(shown))
    ax.barh(positions + 0.2, [c["proposed"] for c in shown][::-1], 0.4, label="proposed")
    ax.barh(positions - 0.2, [c["kept"] for c in shown][::-1], 0.4, label="kept (segments)")
    ax.set_yticks(positions, names, fontsize="small")
    ax.set_xlabel("count")
    ax.grid(axis="x", alpha=0.3)
    # outside, to the right: inside it would cover the end of a long bar
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    ax.set_title(FIGURES["label-counts"], fontsize="medium")
    return _png(fig)


def draw(*, name: str, run) -> bytes:
    summary = run.summary
    if name == "proposal-recall":
        proposers = summary.get("settings", {}).get("proposers_per_item", 3)
        return recall_curve(summary.get("recall"), proposers, _shown_k(summary))
    if name == "label-counts":
        return label_count_bars(summary.get("label_counts", []))
    raise KeyError(name)


def results_context(*, run) -> dict:
    """The kept labels per segment (by name; the first SHOWN_SEGMENTS), the per-label
    counts, the verifiers' alpha and accuracy, the recall curve, the times per stage
    beside AVA's, the segments set aside and the other actions."""
    summary = run.summary
    counts = summary.get("label_counts", [])
    names = {c["action_id"]: c["action"] for c in counts}
    segments = summary.get("segments", [])
    recall = summary.get("recall") or {}
    curve = recall.get("curve") or {}
    proposer_recall = recall.get("proposer_recall") or {}
    return {
        "pv_counts": summary.get("counts", {}),
        "pv_settings": summary.get("settings", {}),
        "pv_alpha": summary.get("alpha"),
        "pv_segments": [
            {**s, "kept_names": [f"{a} {names.get(a, '')}".strip() for a in s["kept"]]}
            for s in segments[:SHOWN_SEGMENTS]
        ],
        "pv_segments_hidden": max(0, len(segments) - SHOWN_SEGMENTS),
        "pv_label_counts": [c for c in counts if c["proposed"] or c["verified"]],
        "pv_verifiers": [
            {"rater_id": rater, **figures}
            for rater, figures in sorted((summary.get("verifier_accuracy") or {}).items())
        ],
        "pv_recall": [
            {"k": int(k), "recall": curve[k], "labels": recall.get("curve_labels", {}).get(k)}
            for k in sorted(curve, key=int)
            if int(k) <= _shown_k(summary)
        ],
        "pv_recall_counts": recall.get("counts", {}),
        "pv_proposers": [
            {"rater_id": rater, "recall": value} for rater, value in sorted(proposer_recall.items())
        ],
        "pv_times": [  # in the stages' order (a stored JSON object keeps none)
            {"stage": stage, **summary["times"][stage]}
            for stage in (PROPOSE, VERIFY)
            if stage in summary.get("times", {})
        ],
        "pv_set_aside": summary.get("set_aside", []),
        "pv_other_actions": summary.get("other_actions", []),
    }
