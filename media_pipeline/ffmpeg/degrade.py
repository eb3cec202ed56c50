"""Visibly degraded copies of a video, for golden items with a known answer: a clean
video against a degraded copy of itself is a pair (or a best and a worst in a ranking)
whose better side every attentive rater sees.

`python -m media_pipeline degrade SRC --out FILE [--kind blur|noise|blocks] [--strength S]`

Kinds (ffmpeg filters): `blur` a Gaussian blur of sigma S pixels (gblur); `noise`
temporal and spatial noise of amplitude S (0-100, noise=alls); `blocks` the picture
shrunk S times and enlarged back without smoothing (scale, neighbor), as heavy
compression looks. The copy keeps the source's size, rate and length; its codec follows
the output suffix as for synthetic clips (media_pipeline.ffmpeg.synth).
"""

from __future__ import annotations

import argparse
import json
import os
import uuid
from pathlib import Path

import ffmpeg

from media_pipeline.ffmpeg.demux import libav_path
from media_pipeline.ffmpeg.errors import MediaError, TransientMediaError
from media_pipeline.ffmpeg.probe import probe
from media_pipeline.ffmpeg.process import run_ffmpeg
from media_pipeline.ffmpeg.synth import CODECS
from media_pipeline.ffmpeg.transcode import FFMPEG

KINDS = {"blur": 6.0, "noise": 40.0, "blocks": 8.0}  # kind -> default strength


def degrade(*, source: Path | str, out: Path | str, kind: str = "blur", strength=None) -> Path:
    """Write a degraded copy of `source` to `out` (see the module docstring); raises
    ValueError for an unknown kind or a strength out of range, MediaError for a file
    that is not a video."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r} (one of {', '.join(KINDS)})")
    strength = KINDS[kind] if strength is None else float(strength)
    limits = {"blur": (0.1, 100.0), "noise": (1.0, 100.0), "blocks": (1.5, 64.0)}[kind]
    if not limits[0] <= strength <= limits[1]:
        raise ValueError(f"{kind} strength must be in [{limits[0]:g}, {limits[1]:g}]")
    source, out = Path(source), Path(out)
    if out.suffix.lower() not in CODECS:
        raise ValueError(f"unsupported output type {out.suffix!r} (one of {', '.join(CODECS)})")
    if out.exists() and source.exists() and os.path.samefile(source, out):
        # by name, a link or a hard link: the copy would replace the video it is made from
        raise ValueError(f"--out {out} is the source video itself: write the copy elsewhere")
    if out.is_dir():
        raise ValueError(f"--out {out} is a folder: name the copy's file")
    info = probe(source)  # a clear MediaError for anything that is not a video
    video = ffmpeg.input(libav_path(source)).video
    if kind == "blur":
        video = video.filter("gblur", sigma=strength)
    elif kind == "noise":
        video = video.filter("noise", alls=int(strength), allf="t+u")
    else:
        small_w = max(2, round(info.width / strength))
        small_h = max(2, round(info.height / strength))
        video = video.filter("scale", small_w, small_h).filter(
            "scale", info.width, info.height, flags="neighbor"
        )
    args = dict(CODECS[out.suffix.lower()])
    if out.suffix.lower() in (".mp4", ".mov"):
        even = info.width % 2 == 0 and info.height % 2 == 0
        args["pix_fmt"] = "yuv420p" if even else "yuv444p"
    out.parent.mkdir(parents=True, exist_ok=True)
    # Written under a part name beside `out` and renamed once whole: a failed or stopped
    # run leaves `out` as it was (an earlier file there is never removed), and ffmpeg is
    # started by run_ffmpeg, so it dies with this process
    part = out.with_name(f".{out.stem}.{uuid.uuid4().hex[:12]}.part{out.suffix}")
    command = (
        # every frame with its own time, as the transcode: a variable-rate source is
        # not padded out to a constant rate (duplicated frames)
        ffmpeg.output(video, libav_path(part), an=None, fps_mode="passthrough", **args)
        .global_args("-nostdin", "-v", "error")
        .overwrite_output()
        .compile(cmd=FFMPEG)
    )
    try:
        run_ffmpeg(command, on_line=lambda line: None, timeout_s=None)
        os.replace(part, out)
    except (MediaError, TransientMediaError) as exc:
        raise MediaError(f"ffmpeg could not degrade {source.name}: {exc}") from None
    finally:
        part.unlink(missing_ok=True)
    return out


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "degrade",
        help="write a visibly degraded copy of a video (for golden pairs)",
        description="Prints one JSON object; exits 2 on bad input.",
    )
    parser.add_argument("src", type=Path, help="the source video")
    parser.add_argument("--out", type=Path, required=True, help="the copy to write")
    parser.add_argument("--kind", choices=sorted(KINDS), default="blur")
    parser.add_argument("--strength", type=float, default=None)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import sys

    from media_pipeline.ffmpeg.cli import EXIT_STOPPED, Stopped, sigterm_raises

    try:
        with sigterm_raises():  # the part file is removed, as on Ctrl-C
            written = degrade(source=args.src, out=args.out, kind=args.kind, strength=args.strength)
    except Stopped:
        print("error: stopped by SIGTERM; nothing was written", file=sys.stderr)
        return EXIT_STOPPED
    except (ValueError, MediaError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # --out cannot be written (a file where a folder must be, ...)
        print(f"error: cannot write {args.out}: {exc.strerror} ({exc.filename})", file=sys.stderr)
        return 2
    print(json.dumps({"source": str(args.src), "copy": str(written), "kind": args.kind}))
    return 0
