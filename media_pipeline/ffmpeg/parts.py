"""Part files: a rendition is written under a hidden temporary name and renamed into place.

A run's part files are `.<stem>.<token>.part.mp4` and `.part.jpg`, the token unique to
the run. The run holds an advisory lock (flock) on its .part.mp4 while it writes, so the
next run for the same stem can tell part files a killed run left behind (no lock: the
kernel dropped it with the process) from those of a run going on beside it.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import os
from pathlib import Path


def hold_part(path: Path) -> int:
    """Create `path` and lock it (flock) for as long as the returned descriptor is open.

    The lock tells another run's clean-up that the part file is being written, not left
    behind; the kernel drops it when this process ends, however it ends. ffmpeg opens the
    same file again (O_TRUNC keeps the inode), so the lock stays on what it writes.
    """
    # Created and locked under a name clean-up does not look at, then renamed into place
    # (the lock goes with the open file): never seen unlocked, so never removed as stale.
    # (A run killed between the two leaves an empty .claim. file, which is left alone.)
    claim = path.with_name(path.name.replace(".part.", ".claim.", 1))
    fd = os.open(claim, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    with contextlib.suppress(OSError):  # a file system without locks: clean-up spares it
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.rename(claim, path)
    return fd


def _is_held(path: Path) -> bool:
    """Whether a live run holds `path` (see hold_part); True where that cannot be told."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # BlockingIOError: held; anything else: no locks here, keep it
        return True
    finally:
        os.close(fd)  # closing drops the lock taken just now
    return False


def remove_stale_parts(out_dir: Path, stem: str) -> None:
    """Remove the part files of `stem` that no live run holds: a run killed mid-write (a
    worker lost) leaves its own behind. A run's part files share its token, and its
    .part.mp4 carries its lock, so a run going on beside this one keeps its files."""
    runs: dict[str, list[Path]] = {}
    for part in out_dir.glob(f".{glob.escape(stem)}.*.part.*"):
        runs.setdefault(part.name.rpartition(".part.")[0], []).append(part)
    for token, parts in runs.items():
        if _is_held(out_dir / f"{token}.part.mp4"):
            continue
        for part in parts:
            with contextlib.suppress(FileNotFoundError):
                part.unlink()
