"""Throughput of the weight-free metrics against decoding alone, on the same clips.

Clips: moving lavfi sources encoded as the media pipeline encodes the renditions that the
gpu worker scores (`media_pipeline.ffmpeg.transcode.ENCODER`: H.264 High, preset medium,
CRF 18), so decoding costs what it costs in production.
Baseline: a plain PyAV loop that decodes every frame and takes out the same frame data as
the metric pass copies out, and does nothing else: the luma plane of the frames the
metrics sample (every frame where P.910's all-frame SI/TI is among them, else frames k*8
and k*8-1) and planar RGB of every 8th frame (colourfulness), one clip after another with
FFmpeg's own threading (the target's baseline). Flicker's frame means, which the pass's
decoder sums in place, are metric work and not in the baseline. Beside it, the same
loop run as the project decodes a batch: `decoders` clips side by side, the cores shared
out among their FFmpeg threads (how fast these clips can be decoded at all, here).
Three sets: every weight-free metric; the ones the metrics issue names (GAIA's six,
frame-difference motion, flicker); GAIA's six alone.
Project: `score_videos` over the clips as one batch, as a gpu job scores its batch
(`decoders` decoder threads ahead of the metrics, + every metric on the device); also
reported: `score_video` one clip at a time (one decoder, pausing between videos while the
metrics of a video's last chunks finish). Target: the batch runs at >= 0.8 of the
baseline's videos per second; the ratio to the side-by-side decoding is printed too.

On CUDA the figures also hold the batch pass's peak GPU memory (torch's allocator) and
the GPU's mean utilisation while the batch pass runs for a few seconds (NVML, sampled
every 20 ms; nvidia-ml-py's `pynvml`, where installed).

    .venv/bin/python bench/metrics.py [--quick] [--device cpu|cuda] [--batch-size N]
                                      [--decoders N] [--preset ultrafast] [--size WxH]
                                      [--clips DIR] [--repeats N]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import av  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from media_pipeline.ffmpeg.transcode import ENCODER  # noqa: E402
from media_pipeline.metrics.decode import FramePlan, cores  # noqa: E402
from media_pipeline.metrics.registry import available_metrics, get_metric  # noqa: E402
from media_pipeline.metrics.scoring import (  # noqa: E402
    VideoRequest,
    default_decoders,
    pick_device,
    score_video,
    score_videos,
)

GAIA_SIX = ["brightness", "contrast", "colorfulness", "sharpness", "si", "ti"]
WEIGHT_FREE = [m.name for m in available_metrics() if not m.weights]
SOURCES = ["testsrc2", "mandelbrot", "cellauto", "testsrc"]  # moving lavfi sources


def encoder_args(preset: str | None) -> list[str]:
    """The renditions' video encoder options as ffmpeg arguments, `preset` replacing theirs
    (ultrafast: the cheapest clips to decode, the hardest case for the ratio)."""
    options = {k: ENCODER[k] for k in ("c:v", "profile:v", "pix_fmt", "preset", "crf")}
    if preset:
        options["preset"] = preset
    return [arg for key, value in options.items() for arg in (f"-{key}", str(value))]


def make_clips(
    folder: Path, *, count: int, size: str, fps: int, seconds: float, preset: str | None
) -> list[Path]:
    clips = []
    for i in range(count):
        source = SOURCES[i % len(SOURCES)]
        path = folder / f"clip{i}.mp4"
        subprocess.run(
            [
                "ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi",
                "-i", f"{source}=size={size}:rate={fps}",
                "-t", str(seconds), "-r", str(fps), *encoder_args(preset), str(path),
            ],
            check=True,
        )  # fmt: skip
        clips.append(path)
    return clips


def decode_only(path: Path, *, all_frames: bool, step: int = 8, threads: int = 0) -> int:
    """The baseline: decode every frame, copy out the luma of the wanted ones and RGB
    planes of every step-th one. threads: FFmpeg's (0: its own choice)."""
    kept = 0
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        if threads:
            stream.codec_context.thread_count = threads
        for index, frame in enumerate(container.decode(stream)):
            if all_frames or index % step in (0, step - 1):
                plane = frame.planes[0]
                luma = np.frombuffer(plane, np.uint8).reshape(frame.height, plane.line_size)
                luma[:, : frame.width].copy()
                kept += 1
            if index % step == 0:  # planar RGB, as the metric pass converts it
                planar = frame.reformat(format="gbrp")
                for plane in planar.planes:
                    rows = np.frombuffer(plane, np.uint8).reshape(frame.height, plane.line_size)
                    rows[:, : frame.width].copy()
    return kept


def decode_side_by_side(clips: list[Path], *, all_frames: bool, decoders: int) -> None:
    """The baseline loop over the clips as `score_videos` decodes them: `decoders` at a
    time, the cores shared out among their FFmpeg threads."""
    threads = 0 if decoders == 1 else max(1, cores() // decoders)
    with ThreadPoolExecutor(decoders) as pool:
        list(pool.map(lambda c: decode_only(c, all_frames=all_frames, threads=threads), clips))


def best_rates(passes: dict, clips: list[Path], repeats: int) -> dict[str, float]:
    """Videos per second of each pass over all clips, the best of `repeats`, the passes
    taken in turn so that a machine whose speed drifts (shared cores) slows all alike."""
    best = dict.fromkeys(passes, float("inf"))
    for _ in range(repeats):
        for name, run_over in passes.items():
            started = time.perf_counter()
            run_over(clips)
            if torch.cuda.is_available():
                torch.cuda.synchronize()
            best[name] = min(best[name], time.perf_counter() - started)
    return {name: len(clips) / seconds for name, seconds in best.items()}


def gpu_load(run_over, clips: list[Path], *, seconds: float = 2.0) -> dict:
    """Peak GPU memory of one pass of `run_over` over the clips, and the GPU's mean
    utilisation (NVML: the share of each sample period in which a kernel ran) while the
    pass repeats for at least `seconds`."""
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    run_over(clips)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated()
    samples: list[int] = []
    stop = threading.Event()
    try:
        import pynvml

        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
    except Exception:  # no NVML here: memory only
        handle = None

    def sample() -> None:
        while not stop.wait(0.02):
            samples.append(pynvml.nvmlDeviceGetUtilizationRates(handle).gpu)

    sampler = threading.Thread(target=sample, daemon=True) if handle else None
    if sampler:
        sampler.start()
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        run_over(clips)
    torch.cuda.synchronize()
    stop.set()
    if sampler:
        sampler.join()
    return {
        "peak_gpu_memory_mib": round(peak / 2**20, 1),
        "gpu_utilisation_pct": round(float(np.mean(samples)), 1) if samples else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--device", default=None)
    parser.add_argument(
        "--batch-size",
        type=int,
        default=None,
        help="default: the worker's (CPU 4; CUDA per video, from its frame size and free memory)",
    )
    parser.add_argument(
        "--decoders", type=int, default=None, help="default: the worker's (one per core, <= 4)"
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=0,
        help="torch CPU threads of the process (default 0: torch's own, as in the worker; "
        "score_video gives the content metrics half of them, the decoder the rest)",
    )
    parser.add_argument("--clips", type=Path, default=None, help="score DIR/*.mp4 instead")
    parser.add_argument("--repeats", type=int, default=None, help="passes (best of)")
    parser.add_argument("--size", default=None, help="WxH of the clips (default 512x288)")
    parser.add_argument(
        "--preset", default=None, help="x264 preset of the clips (default: the renditions')"
    )
    args = parser.parse_args()
    device = pick_device(args.device)
    args.decoders = args.decoders or default_decoders()
    if args.threads:
        torch.set_num_threads(args.threads)
    count, seconds, repeats = (4, 1.0, 2) if args.quick else (8, 2.8, 5)
    repeats = args.repeats or repeats
    size = args.size or ("256x256" if args.quick else "512x288")
    fps = 16
    figures: dict = {"device": device, "batch_size": args.batch_size, "clips": count}
    figures |= {"decoders": args.decoders, "cores": cores()}
    figures["torch_threads"] = torch.get_num_threads()
    figures |= {"size": size, "fps": fps, "seconds": seconds, "repeats": repeats}
    figures["preset"] = args.preset or ENCODER["preset"]
    if device.startswith("cuda"):
        figures["gpu"] = torch.cuda.get_device_name(0)
    with tempfile.TemporaryDirectory() as folder:
        if args.clips:  # ready-made clips (a machine without the ffmpeg command line)
            clips = sorted(args.clips.glob("*.mp4"))
            with av.open(str(clips[0])) as c:
                s = c.streams.video[0]
                size, fps, count = f"{s.width}x{s.height}", float(s.average_rate), len(clips)
            figures |= {"clips": count, "size": size, "fps": fps, "seconds": None}
        else:
            clips = make_clips(
                Path(folder), count=count, size=size, fps=fps, seconds=seconds, preset=args.preset
            )
        # warm-up: first-call costs (kernels, CUDA context) are not throughput
        warm = score_video(
            path=clips[0], metric_names=WEIGHT_FREE, device=device, batch_size=args.batch_size
        )
        figures["batch_size"] = warm.batch_size  # as the worker chose it for these clips
        for label, names in (
            ("all_weight_free", WEIGHT_FREE),
            ("gaia_six_motion_flicker", [*GAIA_SIX, "motion", "flicker"]),
            ("gaia_six", GAIA_SIX),
        ):
            all_frames = FramePlan.for_samplings(get_metric(n).sampling for n in names).all_frames

            def batch(cs, n=names):
                requests = [VideoRequest(path=c, metric_names=n) for c in cs]
                kwargs = {"device": device, "batch_size": args.batch_size}
                list(score_videos(requests, decoders=args.decoders, **kwargs))

            rates = best_rates(
                {
                    "baseline": lambda cs, a=all_frames: [decode_only(c, all_frames=a) for c in cs],
                    "side_by_side": lambda cs, a=all_frames: decode_side_by_side(
                        cs, all_frames=a, decoders=args.decoders
                    ),
                    "batch": batch,
                    "one_at_a_time": lambda cs, n=names: [
                        score_video(
                            path=c, metric_names=n, device=device, batch_size=args.batch_size
                        )
                        for c in cs
                    ],
                },
                clips,
                repeats,
            )
            baseline, ours = rates["baseline"], rates["batch"]
            ratio = ours / baseline
            one_ratio = rates["one_at_a_time"] / baseline
            side_ratio = ours / rates["side_by_side"]
            print(
                f"{label:24s} decode-only {baseline:7.2f} videos/s | decode+metrics "
                f"{ours:7.2f} videos/s | ratio {ratio:.3f} (target >= 0.8; one video at a time "
                f"{one_ratio:.3f}; to decoding side by side, {rates['side_by_side']:.2f} "
                f"videos/s: {side_ratio:.3f}) [{device}, batch {warm.batch_size}, "
                f"{args.decoders} decoders]"
            )
            figures[label] = {
                "metrics": names,
                "decode_only_videos_per_s": round(baseline, 3),
                "metrics_videos_per_s": round(ours, 3),
                "ratio": round(ratio, 3),
                "meets_target": ratio >= 0.8,
                "one_at_a_time_videos_per_s": round(rates["one_at_a_time"], 3),
                "one_at_a_time_ratio": round(one_ratio, 3),
                "side_by_side_decode_videos_per_s": round(rates["side_by_side"], 3),
                "side_by_side_ratio": round(side_ratio, 3),
            }
            if device.startswith("cuda"):
                load = gpu_load(batch, clips)
                figures[label] |= load
                print(f"{'':24s} GPU while scoring: {load}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
