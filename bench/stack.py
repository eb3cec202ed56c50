"""The production stack on loopback for benchmarks and fault tests: a fresh PostgreSQL
database with a running study and qualified raters (API tokens), served by gunicorn."""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SLUG = "load"


def server_env(db_name: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_"))}
    env.update(
        DJANGO_SETTINGS_MODULE="bench.load_settings",
        DATABASE_URL=f"postgres://postgres@127.0.0.1:5432/{db_name}",
        DATABASE_CONN_HEALTH_CHECKS="1",
        DATABASE_CONN_MAX_AGE="600",
        DJANGO_SECRET_KEY="bench-" + "x8Kq2#Lm9$Vn4@Rt7!Zp" * 3,
        DJANGO_ALLOWED_HOSTS="127.0.0.1,localhost",
        CELERY_BROKER_URL="redis://127.0.0.1:6379/13",
        MOSAIC_VAR_DIR="/tmp/mosaic-bench-var",
    )
    return env


def prepare_database(db_name: str, *, raters: int, stimuli: int) -> None:
    """A fresh database with a running study, qualified raters and their API tokens."""
    subprocess.run(
        ["dropdb", "-h", "127.0.0.1", "-U", "postgres", "--if-exists", db_name], check=True
    )
    subprocess.run(["createdb", "-h", "127.0.0.1", "-U", "postgres", db_name], check=True)
    env = server_env(db_name)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True
    )
    script = f"""
import hashlib
from django.contrib.auth.models import User
from django.db import connection
from django.utils import timezone
from rest_framework.authtoken.models import Token
from annotation.models import Participation, Rater, Stimulus, Study
from annotation.services.studies import study_build_sessions, study_create

with connection.cursor() as c:
    c.execute("CREATE TABLE bench_floor (client_uuid uuid PRIMARY KEY, "
              "at timestamptz DEFAULT now())")
study = study_create(name="Load", slug="{SLUG}", state=Study.State.RUNNING, session_size=300,
                     qualification_size=0)
Stimulus.objects.bulk_create(
    Stimulus(study=study, checksum=hashlib.sha256(str(i).encode()).hexdigest(),
             source_file=f"sources/{{i}}.mp4", rendition=f"renditions/{{i}}.mp4",
             status=Stimulus.Status.READY, prompt="A girl arranges daisies.",
             action="Arranging Flowers", width=320, height=240)
    for i in range({stimuli}))
study_build_sessions(study=study)
users = User.objects.bulk_create(User(username=f"load{{i}}") for i in range({raters}))
raters = Rater.objects.bulk_create(Rater(user=u) for u in users)
now = timezone.now()
Participation.objects.bulk_create(
    Participation(rater=r, study=study, consent_at=now, tutorial_done_at=now,
                  qualification_state="passed") for r in raters)
Token.objects.bulk_create(Token(user=u, key=hashlib.sha1(u.username.encode()).hexdigest())
                          for u in users)
"""
    subprocess.run(
        [sys.executable, "manage.py", "shell", "-v", "0", "-c", script],
        cwd=ROOT,
        env=env,
        check=True,
    )


def analyze_database(db_name: str) -> None:
    """Fresh planner statistics, as autovacuum keeps them in a database that has run a
    while (a freshly filled table otherwise looks empty to the planner)."""
    subprocess.run(
        ["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", db_name, "-q", "-c", "ANALYZE"],
        check=True,
    )


def token(i: int) -> str:
    return hashlib.sha1(f"load{i}".encode()).hexdigest()


def compose_gunicorn() -> dict:
    """How docker-compose.yml's web service runs gunicorn (workers, worker class, threads),
    so that the benchmark measures the production shape; gunicorn's defaults fill in
    what the command leaves out (one sync worker, one thread)."""
    text = (ROOT / "docker-compose.yml").read_text()
    line = next(line for line in text.splitlines() if "gunicorn config.wsgi" in line)
    command = shlex.split(re.search(r"gunicorn config\.wsgi[^\"]*", line).group(0))
    options = {}
    for flag, value in zip(command, command[1:], strict=False):
        options.setdefault(flag, value)
    return {
        "workers": int(options.get("--workers", options.get("-w", 1))),
        "worker_class": options.get("--worker-class", options.get("-k", "sync")),
        "threads": int(options.get("--threads", 1)),
    }


def start_server(
    db_name: str, *, port: int, workers: int, threads: int, worker_class: str = "gthread"
) -> subprocess.Popen:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "config.wsgi:application",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            "--worker-class",
            worker_class,
            "--threads",
            str(threads),
            "--backlog",
            "4096",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=server_env(db_name),
        start_new_session=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health/", timeout=1)
            return process
        except OSError:
            time.sleep(0.3)
    os.killpg(process.pid, signal.SIGKILL)
    raise RuntimeError("gunicorn did not start")


def stop_server(process: subprocess.Popen) -> None:
    os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=30)
