"""`python -m media_pipeline transcode SRC --out DIR [--keep-audio]`: one JSON object.

Exit codes: 0 done; 2 the file cannot become a rendition (not a video, corrupt, ffmpeg
failed: final); 3 time limit reached or disk full (transient, worth retrying); 143 stopped
by SIGTERM.
However it ends, no part file is left in the output folder.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

EXIT_BAD_INPUT = 2
EXIT_TIMEOUT = 3
EXIT_STOPPED = 128 + signal.SIGTERM


class Stopped(SystemExit):
    """SIGTERM arrived (`kill`, `docker stop`, a scheduler ending the job)."""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "transcode",
        help="make the browser rendition (H.264 High, native size and rate) and poster",
        description="Prints one JSON object; exits 2 on bad input, 3 on time-out or a full disk.",
    )
    parser.add_argument("src", type=Path, help="the source video")
    parser.add_argument("--out", type=_folder, required=True, help="output folder")
    parser.add_argument("--keep-audio", action="store_true", help="keep sound (as AAC)")
    parser.add_argument("--stem", default=None, help="output name (default: SHA-256 of SRC)")
    parser.add_argument(
        "--timeout", type=_seconds, default=None, help="limit in seconds (default: none)"
    )
    parser.set_defaults(handler=run)


def _folder(text: str) -> Path:
    if not text.strip():  # Path("") is the current folder, which nobody asked for
        raise argparse.ArgumentTypeError("needs a folder's name (--out . is the current folder)")
    return Path(text)


def _seconds(text: str) -> float:
    """A time limit: a finite number of seconds above 0 (0, a negative number or NaN
    was taken as no limit or as a time-out at once, reported as worth retrying)."""
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < seconds < math.inf:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds above 0: {text}")
    return seconds


def _error(exc: Exception, code: int) -> int:
    print(json.dumps({"status": "error", "error": str(exc), "error_class": type(exc).__name__}))
    print(f"error: {exc}", file=sys.stderr)
    return code


@contextlib.contextmanager
def sigterm_raises() -> Iterator[None]:
    """Turn SIGTERM into an exception in the main thread while the block runs, so the
    transcode's clean-up (`finally`: ffmpeg stopped, part files removed) runs as it does
    for Ctrl-C; by default SIGTERM ends Python at once and leaves them behind."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set there
        return

    def stop(signum: int, frame: object) -> None:
        raise Stopped(EXIT_STOPPED)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run(args: argparse.Namespace) -> int:
    # Imported here so `python -m media_pipeline --help` stays instant.
    from media_pipeline.ffmpeg.errors import MediaError, TransientMediaError
    from media_pipeline.ffmpeg.transcode import transcode

    try:
        with sigterm_raises():
            result = transcode(
                src=args.src,
                out_dir=args.out,
                keep_audio=args.keep_audio,
                timeout_s=args.timeout,
                stem=args.stem,
            )
    except Stopped:
        return _error(Stopped("stopped by SIGTERM"), EXIT_STOPPED)
    except TransientMediaError as exc:
        return _error(exc, EXIT_TIMEOUT)
    except (MediaError, ValueError) as exc:
        return _error(exc, EXIT_BAD_INPUT)
    except OSError as exc:  # --out cannot be made (a file where a folder must be, ...)
        return _error(
            OSError(f"cannot write into {args.out}: {exc.strerror} ({exc.filename})"),
            EXIT_BAD_INPUT,
        )
    source = result.source
    print(
        json.dumps(
            {
                "status": "ok",
                "width": source.width,
                "height": source.height,
                "fps": source.fps,
                "fps_exact": source.fps_exact,
                "frames": source.frames,
                "duration": source.duration,
                "is_vfr": source.is_vfr,
                "source_codec": source.codec,
                "source_container": source.container,
                "output": result.output,
                "poster": result.poster,
                "rendition_width": result.width,
                "rendition_height": result.height,
                "padded": bool(result.pad_right or result.pad_bottom),
                "pad_right": result.pad_right,
                "pad_bottom": result.pad_bottom,
                "has_audio": result.has_audio,
                "elapsed_s": result.elapsed_s,
            }
        )
    )
    return 0
