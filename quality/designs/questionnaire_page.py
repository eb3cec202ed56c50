"""The results page and figure of questionnaire runs (quality/designs/questionnaire.py):
how the raters answered each question, and what the page lists from the run's summary."""

from __future__ import annotations

from datetime import datetime

import numpy as np

from quality.plots import _empty_figure, _png, plt
from quality.stats.labels.answers import INVALID

FIGURES = {"answer-distributions": "How the raters answered each question"}
FIGURE_PANELS = 9


def available(summary: dict) -> list[str]:
    return ["answer-distributions"] if summary.get("distributions") else []


def answer_distributions(found: list[dict], alpha: dict) -> bytes:
    """Small multiples, one per question (the first nine): the share of the counted
    answers in each score step, level or tag (``invalid`` and "none" in grey)."""
    shown = [(d["question"], d) for d in found if d["answers"]][:FIGURE_PANELS]
    if not shown:
        return _empty_figure(FIGURES["answer-distributions"], "no answer counted yet")
    columns = min(3, len(shown))
    rows = -(-len(shown) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 2.9 * rows), squeeze=False)
    for ax, (key, found_q) in zip(axes.flat, shown, strict=False):
        bins = found_q["bins"]
        names = [b["label"] if found_q["kind"] == "tags" else b["value"] for b in bins]
        names = [name if len(name) <= 16 else name[:15] + "…" for name in names]
        shares = np.array([b["count"] for b in bins]) / found_q["answers"]
        grey = {INVALID, ""}
        colours = ["#9aa6bd" if b["value"] in grey else "#2f6fde" for b in bins]
        ax.bar(range(len(bins)), shares, color=colours)
        ax.set_xticks(range(len(bins)), names, fontsize="x-small")
        if found_q["kind"] == "tags" or len(bins) > 12:
            ax.tick_params(axis="x", labelrotation=45)
        ax.set_title(panel_title(found_q, alpha.get(key)), fontsize="small")
        ax.set_ylim(0, 1)
    for ax in list(axes.flat)[len(shown) :]:
        ax.set_visible(False)
    axes[0][0].set_ylabel("share of answers")
    fig.suptitle(FIGURES["answer-distributions"], fontsize="medium")
    fig.tight_layout()
    return _png(fig)


def panel_title(found: dict, alpha: float | None) -> str:
    """A question's panel: its label as the raters read it (its key where it has none),
    its kind and alpha."""
    note = f", α = {alpha:.2f}" if alpha is not None else ""
    name = found.get("label") or found["question"]
    name = name if len(name) <= 40 else name[:39] + "…"  # a panel is a third of the width
    return f"{name} ({found['kind']}{note})"


def draw(*, name: str, run) -> bytes:
    if name == "answer-distributions":
        summary = run.summary
        return answer_distributions(summary.get("distributions", []), summary.get("alpha", {}))
    raise KeyError(name)


def results_context(*, run) -> dict:
    """Per question its kind, answers, label statuses, alpha (per tag for tags) and
    distribution; the ties to adjudicate; the raters' agreement; the audit history."""
    summary = run.summary
    statuses = summary.get("questions", {})
    alpha, tag_alpha = summary.get("alpha", {}), summary.get("tag_alpha", {})
    questions = []
    for found in summary.get("distributions", []):
        key = found["question"]
        counts = statuses.get(key, {})
        names = {b["value"]: b["label"] for b in found["bins"]}
        questions.append(
            {
                **found,
                "labels": sum(counts.get(s, 0) for s in ("ok", "invalid", "tie")),
                "ok": counts.get("ok", 0),
                "invalid": counts.get("invalid", 0),
                "tie": counts.get("tie", 0),
                "alpha": alpha.get(key),
                "alpha_level": summary.get("alpha_level", {}).get(key, ""),
                # in the question's order of tags (a stored JSON object keeps none)
                "tag_alpha": [
                    {"tag": label, "alpha": tag_alpha[key][tag]}
                    for tag, label in names.items()
                    if tag in tag_alpha.get(key, {})
                ],
                "shown_bins": [b for b in found["bins"] if b["count"]],
            }
        )
    raters = [
        {"rater_id": rater, **figures}
        for rater, figures in sorted((summary.get("rater_agreement") or {}).items())
    ]
    audits = [
        {**a, "decided": datetime.fromisoformat(a["decided_at"]) if a["decided_at"] else None}
        for a in summary.get("audits", [])
    ]
    return {
        "label_questions": [q for q in questions if q["answers"]],
        "unanswered_questions": [q for q in questions if not q["answers"]],
        "label_ties": _named_ties(summary.get("ties", []), questions),
        "label_raters": raters,
        "label_settings": summary.get("settings", {}),
        "label_counts": summary.get("counts", {}),
        "audits": audits,
        "audit_counts": summary.get("audit_counts", {}),
    }


def _named_ties(ties: list[dict], questions: list[dict]) -> list[dict]:
    """The run's ties with what a researcher knows them by: each video's file name and
    each question's label (the ids stay, for the exports)."""
    from annotation.models import Stimulus

    names = {
        str(public_id): name
        for public_id, name in Stimulus.objects.filter(
            public_id__in=[tie["item_id"] for tie in ties]
        ).values_list("public_id", "original_name")
    }
    labels = {q["question"]: q.get("label", "") for q in questions}
    return [
        {**tie, "name": names.get(tie["item_id"], ""), "label": labels.get(tie["question"], "")}
        for tie in ties
    ]
