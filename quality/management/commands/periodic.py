"""`python manage.py periodic`: beat's schedule run in this process, for the embedded
default, which has no broker and so no beat. scripts/start runs it beside the web server,
so that a demo on one machine analyses its running studies, sweeps stale jobs and reviews
adaptive collection as a deployment does."""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import time
from datetime import timedelta

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import close_old_connections

logger = logging.getLogger(__name__)

# How often the loop looks whether the process it serves beside is still there.
ALIVE_CHECK_S = 2.0


def scheduled_tasks() -> dict[str, tuple[object, float]]:
    """{entry name: (task, seconds between runs)} of CELERY_BEAT_SCHEDULE; every entry
    is a number of seconds or a timedelta (a crontab would need beat itself)."""
    tasks = {}
    for name, entry in settings.CELERY_BEAT_SCHEDULE.items():
        every = entry["schedule"]
        if isinstance(every, timedelta):
            every = every.total_seconds()
        if not isinstance(every, int | float) or every <= 0:
            raise CommandError(f"{name}: only a number of seconds can be run here")
        module, _, task = entry["task"].rpartition(".")  # a task's name is its import path
        tasks[name] = (getattr(importlib.import_module(module), task), float(every))
    return tasks


def run_task(name: str, task) -> bool:
    """Run `task` here and now; a failure is logged, and the loop goes on."""
    try:
        task.apply(throw=True)
    except Exception:
        logger.exception("periodic %s failed; it runs again at its next turn", name)
        return False
    return True


class Command(BaseCommand):
    help = (
        "Run beat's schedule (CELERY_BEAT_SCHEDULE) in this process, each task at its "
        "interval, one at a time, until the process that started it ends (scripts/start "
        "runs it beside the web server on the embedded default, which has no beat). A "
        "deployment runs beat instead."
    )

    def add_arguments(self, parser):
        parser.add_argument("--once", action="store_true", help="run every task once, then stop")
        parser.add_argument(
            "--while-alive",
            type=_pid,
            metavar="PID",
            help="stop once this process has ended (default: the one that started this)",
        )

    def handle(self, *args, once: bool, while_alive: int | None, **options):
        tasks = scheduled_tasks()
        if once:
            failed = [name for name, (task, _) in tasks.items() if not run_task(name, task)]
            if failed:
                raise CommandError(f"failed: {', '.join(failed)} (logged)")
            self.stdout.write(f"ran {len(tasks)} periodic task(s)")
            return
        watched = while_alive or os.getppid()
        # as beat does, each runs first one interval after the start
        due = {name: time.monotonic() + every for name, (_, every) in tasks.items()}
        logger.info(
            "periodic tasks: %s", ", ".join(f"{n} every {e:g} s" for n, (_, e) in tasks.items())
        )
        while _alive(watched):
            for name, (task, every) in tasks.items():
                if due[name] <= time.monotonic():
                    # connections checked before and let go after, as a request's are,
                    # so that a database restart between two turns costs nothing
                    close_old_connections()
                    run_task(name, task)
                    close_old_connections()
                    due[name] = time.monotonic() + every
            time.sleep(max(0.0, min(ALIVE_CHECK_S, min(due.values()) - time.monotonic())))
        logger.info("periodic tasks: process %d ended; stopping", watched)


def _pid(text: str) -> int:
    """A process id: a whole number from 1 to 2**22 (Linux's largest pid_max); a larger
    one overflowed os.kill, a traceback, and 0 or a negative one names a process group."""
    try:
        pid = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a process id: {text!r}") from None
    if not 1 <= pid <= 2**22:
        raise argparse.ArgumentTypeError(f"not a process id (1 to {2**22}): {pid}")
    return pid


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # there, but another user's
    return True
