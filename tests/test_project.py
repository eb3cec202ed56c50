"""The project's shape: compose file, settings per environment, embedded default."""

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
REQUIRED_SERVICES = {
    "web",
    "worker-default",
    "worker-media",
    "worker-gpu",
    "beat",
    "postgres",
    "redis",
}


def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_compose_has_the_production_services():
    services = compose()["services"]
    assert set(services) >= REQUIRED_SERVICES
    for name in ("worker-media", "worker-gpu"):
        command = services[name]["command"]
        assert command[command.index("--prefetch-multiplier") + 1] == "1"
    gpu = services["worker-gpu"]
    assert gpu["command"][gpu["command"].index("--concurrency") + 1] == "1"
    assert gpu["deploy"]["resources"]["reservations"]["devices"][0]["capabilities"] == ["gpu"]


def test_every_command_in_compose_exists_in_the_project():
    # Commands of our own image must name modules, apps and queues that exist.
    from django.core.management import get_commands

    from config.celery_app import app

    services = compose()["services"]
    queues = {"default", "media", "gpu"}
    routed = {route["queue"] for route in app.conf.task_routes.values()}
    assert routed <= queues
    for name, service in services.items():
        if service.get("image", "mosaic:latest") != "mosaic:latest":
            continue
        command = service["command"]
        words = shlex.split(command[-1]) if command[0] == "sh" else command
        text = " ".join(words)
        for part in text.split("&&"):
            argv = part.split()
            if argv[:2] == ["python", "manage.py"]:
                assert argv[2] in get_commands(), f"{name}: unknown command {argv[2]}"
            elif argv[0] == "gunicorn":
                module, _, attr = argv[1].partition(":")
                assert (ROOT / (module.replace(".", "/") + ".py")).is_file()
            elif argv[0] == "celery":
                assert argv[2] == "config.celery_app" and (ROOT / "config/celery_app.py").is_file()
                if "-Q" in argv:
                    assert argv[argv.index("-Q") + 1] in queues, name
            else:
                pytest.fail(f"{name}: unexpected command {argv[0]}")
    for path in ("deploy/nginx.conf", "deploy/env.example", "Dockerfile"):
        assert (ROOT / path).is_file()


def run_manage(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def clean_env(**extra: str) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DJANGO_", "DATABASE_", "CELERY_", "MOSAIC_"))
    }
    env.update(extra)
    return env


def test_embedded_default_runs_on_sqlite_with_in_process_tasks(tmp_path):
    # given: no environment at all but a private var dir
    env = clean_env(MOSAIC_VAR_DIR=str(tmp_path))
    # when
    migrate = run_manage("migrate", "--noinput", env=env)
    probe = run_manage(
        "shell",
        "--verbosity",
        "0",
        "-c",
        "from django.conf import settings as s; from django.db import connection as c;"
        "print(c.vendor, s.CELERY_TASK_ALWAYS_EAGER)",
        env=env,
    )
    # then
    assert migrate.returncode == 0, migrate.stderr
    assert probe.stdout.split() == ["sqlite", "True"]
    assert (tmp_path / "db.sqlite3").is_file()


def test_production_settings_refuse_to_start_without_a_secret(tmp_path):
    env = clean_env(
        DJANGO_SETTINGS_MODULE="config.settings.production",
        DJANGO_ALLOWED_HOSTS="example.org",
        MOSAIC_VAR_DIR=str(tmp_path),
    )
    result = run_manage("check", env=env)
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY must be set in the environment" in result.stderr


def test_production_settings_pass_deploy_checks(tmp_path):
    env = clean_env(
        DJANGO_SETTINGS_MODULE="config.settings.production",
        DJANGO_ALLOWED_HOSTS="example.org",
        MOSAIC_VAR_DIR=str(tmp_path),
        DJANGO_SECRET_KEY="k" * 20 + "Zq8#vT2!pL0@xR5$mN7^bW4&cY1*dF6(" + "j" * 10,
        DATABASE_URL="postgres://postgres@127.0.0.1:5432/postgres",
    )
    result = run_manage("check", "--deploy", "--fail-level", "WARNING", env=env)
    assert result.returncode == 0, result.stderr + result.stdout


def test_database_and_broker_come_from_the_environment(tmp_path):
    env = clean_env(
        MOSAIC_VAR_DIR=str(tmp_path),
        DATABASE_URL="postgres://postgres@127.0.0.1:5432/postgres",
        CELERY_BROKER_URL="redis://127.0.0.1:6379/14",
    )
    probe = run_manage(
        "shell",
        "--verbosity",
        "0",
        "-c",
        "from django.conf import settings as s; from django.db import connection as c;"
        "c.ensure_connection(); print(c.vendor, s.CELERY_TASK_ALWAYS_EAGER, s.CELERY_BROKER_URL)",
        env=env,
    )
    assert probe.stdout.split() == ["postgresql", "False", "redis://127.0.0.1:6379/14"], (
        probe.stderr
    )
