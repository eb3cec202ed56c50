"""The ffmpeg a transcode starts dies with the process that started it: a Celery pool
child killed mid-transcode (SIGKILL at its hard time limit, the out-of-memory killer)
leaves no ffmpeg running on. Real processes: a Python child runs ffmpeg through the
pipeline's runner and is killed with SIGKILL."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# A minute of work at real-time speed, reporting progress as a transcode's ffmpeg does.
RUNNER = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
from media_pipeline.ffmpeg.process import run_ffmpeg
run_ffmpeg(
    ["ffmpeg", "-nostdin", "-v", "error", "-re", "-f", "lavfi",
     "-i", "testsrc2=size=64x48:rate=10:duration=60", "-progress", "pipe:1", "-f", "null", "-"],
    on_line=lambda line: None,
    timeout_s=None,
)
"""


def stat_fields(pid: int) -> list[str] | None:
    """/proc/<pid>/stat after the command name: state, parent pid, ...; None once gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return text.rpartition(")")[2].split()


def running(pid: int) -> bool:
    fields = stat_fields(pid)
    return fields is not None and fields[0] not in ("Z", "X")  # a zombie has ended


def ffmpeg_children(parent: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = stat_fields(int(entry.name))
        try:
            command = (entry / "comm").read_text().strip()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if fields is not None and int(fields[1]) == parent and command == "ffmpeg":
            found.append(int(entry.name))
    return found


def wait_until(condition, *, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's parent-death signal")
def test_ffmpeg_dies_when_the_process_running_it_is_killed():
    # given: a child process in the middle of running ffmpeg
    child = subprocess.Popen([sys.executable, "-c", RUNNER], cwd=ROOT)
    ffmpeg_pids: list[int] = []
    try:
        assert wait_until(lambda: ffmpeg_children(child.pid), seconds=15)
        ffmpeg_pids = ffmpeg_children(child.pid)
        (ffmpeg_pid,) = ffmpeg_pids
        time.sleep(0.5)
        assert running(ffmpeg_pid)  # at work, a minute of it ahead
        # when: the child is killed as a pool child is, with no chance to clean up
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        # then: its ffmpeg is gone within a few seconds
        assert wait_until(lambda: not running(ffmpeg_pid), seconds=5)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        for pid in ffmpeg_pids:  # a failing run leaves no ffmpeg behind either
            if running(pid):
                os.kill(pid, signal.SIGKILL)
