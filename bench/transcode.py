"""Pipeline transcode() against the plain ffmpeg command line with the same encoder settings.

    .venv/bin/python bench/transcode.py [--quick] [--repeats N]

The pipeline does, per video: an in-process PyAV probe of the source (packets counted,
first frame decoded for its rotation), one ffmpeg run writing the rendition and the
poster (the first frame as JPEG, a second output of the same decode), progress parsing,
an in-process re-probe of the rendition, fsync and rename. The baseline is the command an
admin would type for the same rendition: one `ffmpeg -i SRC ... OUT` with the same
libx264 settings and the same one-pixel pad where a side is odd. It writes no poster, so
the poster's cost counts as pipeline overhead.

Runs are interleaved so a neighbour's load hits both alike: with one worker the two
alternate clip by clip, with two workers set by set, and the order flips every repeat.
The figure is the median over repeats of the wall time for the whole clip set, with 1
and 2 worker processes (the same clips and workers for both). CPU seconds (the process
and its ffmpeg children) are printed beside it: they move less than wall time when the
machine is shared. The last line of stdout is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from media_pipeline.ffmpeg import transcode  # noqa: E402
from media_pipeline.ffmpeg.synth import make_clip  # noqa: E402

# GAIA-like shapes (2.8 s clips, 256x256 to 2048x1536, 8 to 30 fps), odd sizes included.
FULL_SET = [
    ("a.mp4", 256, 256, 8),
    ("b.mp4", 512, 512, 8),
    ("c.mp4", 1024, 576, 24),
    ("d.webm", 720, 480, 16),
    ("e.mp4", 1088, 640, 30),
    ("f.mp4", 1280, 720, 24),
    ("g.mp4", 257, 255, 12),
    ("h.gif", 320, 240, 10),
]
QUICK_SET = [("a.mp4", 256, 256, 8), ("c.mp4", 640, 360, 24), ("g.mp4", 257, 255, 12)]
TARGET_OVERHEAD = 0.05
METHODS = ("pipeline", "plain")
BASELINE_NOTE = (
    "plain ffmpeg: same clips, workers and libx264 settings, pad for odd sizes; "
    "it writes no poster, the pipeline does (counted as overhead)"
)


def plain_ffmpeg(src: str, out: str) -> None:
    """The baseline: what an admin would type, same encoder settings as ENCODER."""
    cmd = ["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", src, "-map", "0:v:0"]
    cmd += ["-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2"]  # only changes odd sizes
    cmd += ["-c:v", "libx264", "-profile:v", "high", "-pix_fmt", "yuv420p", "-preset", "medium"]
    cmd += ["-crf", "18", "-movflags", "+faststart", "-fps_mode", "passthrough", "-an", out]
    subprocess.run(cmd, check=True)


def pipeline(src: str, out_dir: str) -> None:
    transcode(src=Path(src), out_dir=Path(out_dir), stem=Path(src).stem)


def _cpu_s() -> float:
    """CPU seconds of this process and of its finished children (the ffmpeg runs)."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run_one(method: str, src: str, work: str) -> float:
    """Transcode one clip; returns the CPU seconds it took (wall time is taken per set)."""
    cpu = _cpu_s()
    if method == "pipeline":
        pipeline(src, os.path.join(work, "pipeline"))
    else:
        plain_ffmpeg(src, os.path.join(work, "plain", Path(src).stem + ".mp4"))
    return _cpu_s() - cpu


def run_set(methods: tuple[str, ...], clips: list[str], work: str, pool) -> dict:
    """Wall and CPU seconds per method to transcode all clips.

    Without a pool the methods alternate clip by clip (a load burst from a neighbour
    then falls on both); with a pool each method runs the whole set on its workers, as
    a queue of jobs would.
    """
    wall = dict.fromkeys(methods, 0.0)
    cpu = dict.fromkeys(methods, 0.0)
    if pool is None:
        for clip in clips:
            for method in methods:
                started = time.perf_counter()
                cpu[method] += run_one(method, clip, work)
                wall[method] += time.perf_counter() - started
    else:
        for method in methods:
            started = time.perf_counter()
            cpu[method] = sum(pool.map(run_one, [method] * len(clips), clips, [work] * len(clips)))
            wall[method] = time.perf_counter() - started
    return {"wall": wall, "cpu": cpu}


def measure(clips: list[str], work: str, repeats: int, pool) -> dict[str, float]:
    wall: dict[str, list[float]] = {method: [] for method in METHODS}
    cpu: dict[str, list[float]] = {method: [] for method in METHODS}
    for rep in range(repeats):
        timed = run_set(METHODS if rep % 2 == 0 else METHODS[::-1], clips, work, pool)
        for method in METHODS:
            wall[method].append(timed["wall"][method])
            cpu[method].append(timed["cpu"][method])
    median = {m: statistics.median(wall[m]) for m in METHODS}
    cpu_median = {m: statistics.median(cpu[m]) for m in METHODS}
    ratios = sorted(p / b for p, b in zip(wall["pipeline"], wall["plain"], strict=True))
    return {
        "pipeline_s": round(median["pipeline"], 3),
        "plain_s": round(median["plain"], 3),
        "overhead": round(median["pipeline"] / median["plain"] - 1, 4),
        "overhead_min_max": [round(ratios[0] - 1, 4), round(ratios[-1] - 1, 4)],
        "pipeline_cpu_s": round(cpu_median["pipeline"], 3),
        "plain_cpu_s": round(cpu_median["plain"], 3),
        "cpu_overhead": round(cpu_median["pipeline"] / cpu_median["plain"] - 1, 4),
        "pipeline_clips_per_s": round(len(clips) / median["pipeline"], 3),
        "plain_clips_per_s": round(len(clips) / median["plain"], 3),
        "repeats": repeats,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="three small clips, 1 s each")
    parser.add_argument("--repeats", type=int, default=None)
    args = parser.parse_args()
    shapes, seconds = (QUICK_SET, 1.0) if args.quick else (FULL_SET, 2.8)
    repeats = args.repeats or (3 if args.quick else 5)

    with tempfile.TemporaryDirectory(prefix="bench-transcode-") as work:
        os.makedirs(os.path.join(work, "plain"))
        clips = []
        for name, width, height, fps in shapes:
            path = Path(work) / "src" / name
            make_clip(path=path, width=width, height=height, fps=fps, seconds=seconds, text="x")
            clips.append(str(path))
        # warm-up: page cache, PyAV import (the forked workers inherit it), x264 code paths
        for method in METHODS:
            run_one(method, clips[0], work)

        results: dict[str, dict] = {}
        print(f"baseline: {BASELINE_NOTE}")
        with ProcessPoolExecutor(max_workers=2) as pool:
            list(pool.map(run_one, METHODS, clips[:2], [work] * 2))  # start the workers
            for workers in (1, 2):
                row = measure(clips, work, repeats, pool if workers > 1 else None)
                results[str(workers)] = row
                low, high = row["overhead_min_max"]
                print(
                    f"{workers} worker(s): pipeline {row['pipeline_s']:.3f} s, plain ffmpeg "
                    f"{row['plain_s']:.3f} s for {len(clips)} clips -> ratio "
                    f"{1 + row['overhead']:.3f} (overhead {row['overhead']:+.1%}, "
                    f"{low:+.1%} to {high:+.1%} over {repeats} paired runs); CPU "
                    f"{row['pipeline_cpu_s']:.2f} vs {row['plain_cpu_s']:.2f} s "
                    f"({row['cpu_overhead']:+.1%}); {row['pipeline_clips_per_s']:.2f} vs "
                    f"{row['plain_clips_per_s']:.2f} clips/s"
                )
    met = {w: results[w]["overhead"] <= TARGET_OVERHEAD for w in results}
    print(
        f"target: overhead <= {TARGET_OVERHEAD:.0%} with one worker: "
        f"{'met' if met['1'] else 'NOT met'}, with two workers: "
        f"{'met' if met['2'] else 'NOT met'}"
    )
    print(
        json.dumps(
            {
                "bench": "transcode",
                "quick": args.quick,
                "clips": len(clips),
                "clip_seconds": seconds,
                "cpus": os.cpu_count(),
                "baseline": BASELINE_NOTE,
                "overhead_1_worker": results["1"]["overhead"],
                "overhead_2_workers": results["2"]["overhead"],
                "target_overhead": TARGET_OVERHEAD,
                "target_met_1_worker": met["1"],
                "target_met_2_workers": met["2"],
                "target_met": all(met.values()),
                "workers": results,
            }
        )
    )


if __name__ == "__main__":
    main()
