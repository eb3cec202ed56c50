"""Part files of a run going on are never taken for a killed run's leftovers."""

import os
from pathlib import Path

from media_pipeline.ffmpeg import parts


def test_a_part_file_is_never_seen_unlocked_by_another_runs_clean_up(tmp_path, monkeypatch):
    # given: another run of the same stimulus cleans up at the very moment this run has
    # created its part file and not yet locked it
    path = tmp_path / ".abc-1.tok1.part.mp4"
    real_flock, cleaned = parts.fcntl.flock, []

    def flock_after_a_clean_up(fd, operation):
        if not cleaned:  # the other run's clean-up, once (its own checks lock too)
            cleaned.append(True)
            parts.remove_stale_parts(tmp_path, "abc-1")
        return real_flock(fd, operation)

    monkeypatch.setattr(parts.fcntl, "flock", flock_after_a_clean_up)
    # when
    fd = parts.hold_part(path)
    monkeypatch.setattr(parts.fcntl, "flock", real_flock)
    # then: the part file is there, and held
    try:
        assert path.is_file()
        assert parts._is_held(path)
    finally:
        os.close(fd)


def test_a_killed_runs_part_files_are_removed_and_a_live_runs_kept(tmp_path):
    # given: a run going on (its .part.mp4 held) and one killed (nothing held)
    live = tmp_path / ".abc-1.live.part.mp4"
    fd = parts.hold_part(live)
    (tmp_path / ".abc-1.live.part.jpg").write_bytes(b"poster")
    for name in (".abc-1.dead.part.mp4", ".abc-1.dead.part.jpg"):
        (tmp_path / name).write_bytes(b"left behind")
    # when
    try:
        parts.remove_stale_parts(tmp_path, "abc-1")
        left = sorted(p.name for p in Path(tmp_path).iterdir())
    finally:
        os.close(fd)
    # then
    assert left == [".abc-1.live.part.jpg", ".abc-1.live.part.mp4"]
