"""Running ffmpeg: a deadline, the tail of its stderr told apart into the errors of
media_pipeline.ffmpeg.errors, and a process that dies with the one that started it.

A Celery pool child killed mid-transcode (SIGKILL at the task's hard time limit, the
out-of-memory killer, a worker's warm shutdown timing out) runs no clean-up, so the
ffmpeg it started would run on as an orphan, encoding for nobody and holding the CPU
the next transcode needs. Linux's parent-death signal (prctl PR_SET_PDEATHSIG) has the
kernel kill ffmpeg when its parent dies, however it dies; a process group killed on
exit would need an exit that runs. The signal follows the thread that started ffmpeg,
so `run_ffmpeg` waits for it in that same thread. Elsewhere than on Linux ffmpeg is
started plainly.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable

from media_pipeline.ffmpeg.errors import CorruptVideo, DiskFull, TranscodeFailed, TranscodeTimeout

# stderr phrases that mean the input could not be decoded, not that ffmpeg itself failed.
DECODE_ERRORS = (
    "Invalid data",
    "rror while decoding",
    "corrupt",
    "partial file",
    "Invalid NAL",
    "ended prematurely",
)
# strerror of ENOSPC and EDQUOT, as ffmpeg prints them when a write fails.
DISK_FULL_ERRORS = ("No space left on device", "Disk quota exceeded")
STDERR_TAIL_LINES = 20
PR_SET_PDEATHSIG = 1  # linux/prctl.h
# Looked up once, here: between fork and exec the child may only call what is loaded
# already (another thread may have held a lock, the import lock among them, at the fork).
_prctl = ctypes.CDLL(None, use_errno=True).prctl if sys.platform.startswith("linux") else None


def _die_with(parent: int) -> Callable[[], None] | None:
    """The function the child runs before exec: SIGKILL when `parent` dies."""
    if _prctl is None:
        return None

    def arm() -> None:
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the signal was armed
            os.kill(os.getpid(), signal.SIGKILL)

    return arm


def run_ffmpeg(args: list[str], *, on_line: Callable[[str], None], timeout_s: float | None) -> None:
    """Run ffmpeg, giving each line of its stdout to `on_line` (its -progress); kill it at
    the deadline even if it prints nothing, and when this process dies. Raises
    TranscodeTimeout past the deadline, DiskFull when it could not write, CorruptVideo when
    the input could not be decoded part-way, TranscodeFailed for any other failure, with
    the tail of its stderr."""
    process = subprocess.Popen(
        args,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_die_with(os.getpid()),  # safe with threads: a loaded C call, no import
    )
    timed_out = threading.Event()

    def kill_at_deadline() -> None:
        timed_out.set()
        process.kill()

    watchdog = threading.Timer(timeout_s, kill_at_deadline) if timeout_s else None
    stderr_tail: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
    reader = threading.Thread(target=lambda: stderr_tail.extend(process.stderr), daemon=True)
    reader.start()
    if watchdog:
        watchdog.daemon = True
        watchdog.start()
    try:
        for line in process.stdout:
            on_line(line)
        code = process.wait()
    finally:
        if watchdog:
            watchdog.cancel()
        if process.poll() is None:  # the callback raised: do not leave ffmpeg running
            process.kill()
            process.wait()
        reader.join(timeout=5)
    if timed_out.is_set():
        raise TranscodeTimeout(
            f"transcode timed out: ffmpeg ran past its limit of {timeout_s:g} s and was "
            "stopped; worth retrying when the machine is less busy"
        )
    if code != 0:
        tail = "".join(stderr_tail).strip() or "(no message)"
        if any(marker in tail for marker in DISK_FULL_ERRORS):
            raise DiskFull(f"transcode failed: no space left to write the rendition ({tail})")
        if any(marker in tail for marker in DECODE_ERRORS):
            last = tail.splitlines()[-1]
            raise CorruptVideo(f"corrupt video: decoding failed part-way ({last})")
        how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
        raise TranscodeFailed(f"transcode failed: ffmpeg {how}: {tail}")
