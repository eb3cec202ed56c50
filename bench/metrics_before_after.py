"""Scoring throughput of this tree against an earlier tree of the project, on the same
clips, in the same run: `score_video` one clip after another (the one entry point every
version has) for GAIA's six features and for every weight-free metric, each tree in a
process of its own, the two taken in turn for each repeat (best of the repeats).

The earlier tree is a copy of `media_pipeline` at another commit, for example the last
one that derived luma from decoded RGB rather than reading the coded Y plane:

    mkdir -p /tmp/before && git archive 49bf551^ media_pipeline | tar -x -C /tmp/before
    .venv/bin/python bench/metrics_before_after.py --before /tmp/before --clips DIR \
        [--device cpu|cuda] [--repeats 3] [--batch]

--batch: `score_videos` over all the clips as one batch, as a gpu job scores (both trees
must have it: from 82c4250 on), each tree with its own default batch size and decoders.

Prints videos per second of each tree and the ratio now / before, then one JSON line.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
SETS = {
    "gaia_six": ["brightness", "contrast", "colorfulness", "sharpness", "si", "ti"],
    "all_weight_free": [
        "brightness", "contrast", "colorfulness", "sharpness", "si", "ti", "si_p910",
        "ti_p910", "motion", "flicker",
    ],
}  # fmt: skip

CHILD = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
import torch
from media_pipeline.metrics import scoring
clips, sets, device = json.loads(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4]


def values_of(clips, names):
    if sys.argv[5] == "batch":
        requests = [scoring.VideoRequest(path=c, metric_names=names) for c in clips]
        return [s.report.values for s in scoring.score_videos(requests, device=device)]
    return [scoring.score_video(path=c, metric_names=names, device=device).values for c in clips]


values_of(clips[:1], sets["all_weight_free"])  # warm-up
runs = {}
for label, names in sets.items():
    started = time.perf_counter()
    values = values_of(clips, names)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    runs[label] = {"seconds": time.perf_counter() - started, "values": values}
print(json.dumps(runs))
"""


def timed(tree: Path, clips: list[str], device: str, mode: str) -> dict:
    """{set: {seconds, values}} of one pass of each set over the clips, in a process that
    imports the tree's media_pipeline; mode: "batch" or "one_at_a_time"."""
    arguments = [str(tree), json.dumps(clips), json.dumps(SETS), device, mode]
    child = subprocess.run(
        [sys.executable, "-c", CHILD, *arguments],
        capture_output=True,
        text=True,
    )
    if child.returncode:
        raise SystemExit(f"scoring with {tree} failed:\n{child.stderr[-3000:]}")
    return json.loads(child.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", type=Path, required=True, help="the earlier tree's root")
    parser.add_argument("--clips", type=Path, required=True, help="score DIR/*.mp4")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch", action="store_true", help="score_videos, one batch")
    args = parser.parse_args()
    mode = "batch" if args.batch else "one_at_a_time"
    clips = [str(c) for c in sorted(args.clips.glob("*.mp4"))]
    trees = {"before": args.before.resolve(), "now": HERE}
    figures: dict = {"device": args.device, "clips": len(clips), "repeats": args.repeats}
    figures["mode"] = mode
    figures["clip_dir"] = args.clips.name
    runs = [
        {name: timed(tree, clips, args.device, mode) for name, tree in trees.items()}
        for _ in range(args.repeats)
    ]
    for label, names in SETS.items():
        best = {name: min(run[name][label]["seconds"] for run in runs) for name in trees}
        values = {name: runs[-1][name][label]["values"] for name in trees}
        rates = {name: len(clips) / seconds for name, seconds in best.items()}
        # the luma metrics' values moved with the Y plane (8-bit codes, not luma re-derived
        # from RGB): the largest relative change of each metric over the clips
        changes = {
            m: max(
                abs(a[m] - b[m]) / max(abs(b[m]), 1e-9)
                for a, b in zip(values["now"], values["before"], strict=True)
            )
            for m in names
        }
        gap = max(changes, key=changes.get)
        ratio = rates["now"] / rates["before"]
        print(
            f"{args.clips.name} {mode} {label:16s} before {rates['before']:7.2f} videos/s | now "
            f"{rates['now']:7.2f} videos/s | ratio {ratio:.2f} [{args.device}; largest "
            f"relative change of a value: {gap} {changes[gap]:.2e}]"
        )
        figures[label] = {
            "before_videos_per_s": round(rates["before"], 3),
            "now_videos_per_s": round(rates["now"], 3),
            "ratio": round(ratio, 3),
            "largest_relative_value_change": {m: float(f"{c:.3g}") for m, c in changes.items()},
        }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
