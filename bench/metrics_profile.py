"""Where the time of a scoring batch goes, and how it moves with the batch size.

For each batch size asked for, a `score_videos` pass over the clips (as a gpu job scores
its batch, every weight-free metric): videos per second, the share of the wall time the
metrics spent waiting for decoded frames (`ScoreReport.decode_s`: near 1, decode-bound;
near 0, the metrics are the bottleneck), and the device time of the metric kernels. Then
one pass under torch's profiler (CPU and, where present, CUDA activity) whose top
operators by self time are printed (and appended to --out FILE).

    .venv/bin/python bench/metrics_profile.py --clips DIR [--device cuda]
                                              [--batch-sizes 8,16,32,64] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import av  # noqa: E402
import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

from media_pipeline.metrics.registry import available_metrics  # noqa: E402
from media_pipeline.metrics.scoring import (  # noqa: E402
    VideoRequest,
    default_decoders,
    pick_device,
    score_videos,
)

WEIGHT_FREE = [m.name for m in available_metrics() if not m.weights]


def one_pass(clips: list[Path], *, device: str, batch_size: int | None, decoders: int) -> dict:
    requests = [VideoRequest(path=c, metric_names=WEIGHT_FREE) for c in clips]
    started = time.perf_counter()
    reports = [
        s.report
        for s in score_videos(requests, device=device, batch_size=batch_size, decoders=decoders)
    ]
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    wall = time.perf_counter() - started
    return {
        "batch_size": reports[0].batch_size,
        "videos_per_s": round(len(clips) / wall, 2),
        "waiting_for_frames_share": round(sum(r.decode_s for r in reports) / wall, 3),
        "metric_time_share": round(sum(sum(r.runtimes.values()) for r in reports) / wall, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clips", type=Path, required=True, help="score DIR/*.mp4")
    parser.add_argument("--device", default=None)
    parser.add_argument("--batch-sizes", default="", help="comma-separated (default: the worker's)")
    parser.add_argument("--decoders", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None, help="append the tables here")
    args = parser.parse_args()
    device = pick_device(args.device)
    decoders = args.decoders or default_decoders()
    clips = sorted(args.clips.glob("*.mp4"))
    with av.open(str(clips[0])) as container:
        size = f"{container.streams.video[0].width}x{container.streams.video[0].height}"
    sizes = [int(b) for b in args.batch_sizes.split(",") if b] or [None]
    one_pass(clips[:1], device=device, batch_size=sizes[0], decoders=decoders)  # warm-up
    figures: dict = {"device": device, "size": size, "clips": len(clips), "decoders": decoders}
    if device.startswith("cuda"):
        figures["gpu"] = torch.cuda.get_device_name(0)
    sweep = []
    for batch_size in sizes:
        passes = [
            one_pass(clips, device=device, batch_size=batch_size, decoders=decoders)
            for _ in range(args.repeats)
        ]
        best = max(passes, key=lambda p: p["videos_per_s"])
        sweep.append(best)
        print(f"{size} {json.dumps(best)}")
    figures["sweep"] = sweep
    activities = [ProfilerActivity.CPU]
    if device.startswith("cuda"):
        activities.append(ProfilerActivity.CUDA)
    best_size = max(sweep, key=lambda p: p["videos_per_s"])["batch_size"]
    with profile(activities=activities) as profiler:
        one_pass(clips, device=device, batch_size=best_size, decoders=decoders)
    sort = "self_cuda_time_total" if device.startswith("cuda") else "self_cpu_time_total"
    table = profiler.key_averages().table(sort_by=sort, row_limit=25)
    cpu_table = profiler.key_averages().table(sort_by="self_cpu_time_total", row_limit=25)
    print(cpu_table if not device.startswith("cuda") else table + "\n" + cpu_table)
    if args.out:
        with args.out.open("a") as out:
            out.write(f"# {size}, batch {best_size}, {device}\n{table}\n\n{cpu_table}\n\n")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
