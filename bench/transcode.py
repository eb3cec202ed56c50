"""Pipeline transcode() against the plain ffmpeg command line with the same encoder settings.

    .venv/bin/python bench/transcode.py [--quick] [--repeats N]

The pipeline adds, per video: an ffprobe of the source (with packet counting), a poster
output in the same ffmpeg run, progress parsing, the SHA-256 of the source, an in-process
re-probe of the rendition, fsync and rename. The baseline is one `ffmpeg -i SRC ... OUT`
with the same libx264 settings (and the same one-pixel pad where a side is odd).

Runs are interleaved (pipeline and baseline alternate, the order flips every repeat) so
a neighbour's load hits both alike; the figure is the median over repeats of the time for
the whole clip set. Throughput is clips/s with 1 and 2 worker processes. The last line of
stdout is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
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


def plain_ffmpeg(src: str, out: str) -> None:
    """The baseline: what an admin would type, same encoder settings as ENCODER."""
    cmd = ["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", src, "-map", "0:v:0"]
    cmd += ["-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2"]  # only changes odd sizes
    cmd += ["-c:v", "libx264", "-profile:v", "high", "-pix_fmt", "yuv420p", "-preset", "medium"]
    cmd += ["-crf", "18", "-movflags", "+faststart", "-fps_mode", "passthrough", "-an", out]
    subprocess.run(cmd, check=True)


def pipeline(src: str, out_dir: str) -> None:
    transcode(src=Path(src), out_dir=Path(out_dir), stem=Path(src).stem)


def run_one(method: str, src: str, work: str) -> float:
    started = time.perf_counter()
    if method == "pipeline":
        pipeline(src, os.path.join(work, "pipeline"))
    else:
        plain_ffmpeg(src, os.path.join(work, "plain", Path(src).stem + ".mp4"))
    return time.perf_counter() - started


def run_set(method: str, clips: list[str], work: str, workers: int, pool) -> float:
    """Wall time to transcode all clips with `workers` processes (pool reused)."""
    started = time.perf_counter()
    if workers == 1:
        for clip in clips:
            run_one(method, clip, work)
    else:
        list(pool.map(run_one, [method] * len(clips), clips, [work] * len(clips)))
    return time.perf_counter() - started


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
        # warm-up: page cache, PyAV import, x264 code paths
        for method in ("pipeline", "plain"):
            run_one(method, clips[0], work)

        results: dict[str, dict[str, float]] = {}
        with ProcessPoolExecutor(max_workers=2) as pool:
            list(pool.map(run_one, ["pipeline", "plain"], clips[:2], [work] * 2))  # warm workers
            for workers, reps in ((1, repeats), (2, max(2, repeats - 2))):
                times: dict[str, list[float]] = {"pipeline": [], "plain": []}
                for rep in range(reps):
                    order = ("pipeline", "plain") if rep % 2 == 0 else ("plain", "pipeline")
                    for method in order:
                        times[method].append(run_set(method, clips, work, workers, pool))
                medians = {m: statistics.median(t) for m, t in times.items()}
                results[str(workers)] = {
                    "pipeline_s": round(medians["pipeline"], 3),
                    "plain_s": round(medians["plain"], 3),
                    "overhead": round(medians["pipeline"] / medians["plain"] - 1, 4),
                    "pipeline_clips_per_s": round(len(clips) / medians["pipeline"], 3),
                    "plain_clips_per_s": round(len(clips) / medians["plain"], 3),
                    "repeats": reps,
                }
                row = results[str(workers)]
                print(
                    f"{workers} worker(s): pipeline {row['pipeline_s']:.3f} s, plain ffmpeg "
                    f"{row['plain_s']:.3f} s for {len(clips)} clips -> ratio "
                    f"{1 + row['overhead']:.3f} (overhead {row['overhead']:+.1%}); "
                    f"{row['pipeline_clips_per_s']:.2f} vs {row['plain_clips_per_s']:.2f} clips/s"
                )
    overhead = results["1"]["overhead"]
    print(f"target: overhead <= 5% with one worker: {'met' if overhead <= 0.05 else 'NOT met'}")
    print(
        json.dumps(
            {
                "bench": "transcode",
                "quick": args.quick,
                "clips": len(clips),
                "clip_seconds": seconds,
                "cpus": os.cpu_count(),
                "overhead_1_worker": overhead,
                "overhead_2_workers": results["2"]["overhead"],
                "target_overhead": 0.05,
                "target_met": overhead <= 0.05,
                "workers": results,
            }
        )
    )


if __name__ == "__main__":
    main()
