"""The project's shape: compose file, settings per environment, embedded default."""

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from django.conf import settings as django_settings

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
    for name in ("worker-default", "worker-media", "worker-gpu", "beat"):
        command = services[name]["command"]  # INFO: videos settled, jobs sent again, runs
        assert command[command.index("--loglevel") + 1] == "INFO", name
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


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(instruction, arguments) per Dockerfile line, continuation lines joined."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines()]
    return [
        (line.split(None, 1)[0].upper(), line.split(None, 1)[1])
        for line in lines
        if line and not line.startswith("#")
    ]


def test_the_image_user_owns_every_folder_the_services_write(settings):
    # given: what the image's services write: collectstatic's target and each volume
    # mounted writable (an empty named volume takes its mount point's owner)
    instructions = dockerfile_instructions()
    user = [args for name, args in instructions if name == "USER"][-1]
    workdir = Path([args for name, args in instructions if name == "WORKDIR"][-1])
    static = workdir / Path(settings.STATIC_ROOT).relative_to(ROOT)
    mounts = [volume.split(":") for volume in compose()["x-app"]["volumes"]]
    writable = [Path(static)] + [Path(m[1]) for m in mounts if m[2:] != ["ro"]]
    # when: the commands run as root before the image switches to its user
    before_user = instructions[: instructions.index(("USER", user))]
    commands = [
        shlex.split(step)
        for name, args in before_user
        if name == "RUN"
        for step in args.split("&&")
    ]
    created = {Path(a) for c in commands if c[:2] == ["mkdir", "-p"] for a in c[2:]}
    owned = {
        Path(a)
        for c in commands
        if c[:2] == ["chown", "-R"] and c[2].split(":")[0] == user
        for a in c[3:]
    }
    # then
    for folder in writable:
        assert folder in created, f"{folder} is not made in the image"
        assert any(folder == o or o in folder.parents for o in owned), f"{folder} is root's"


def run_manage(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def run_shell(code: str, *, env: dict) -> subprocess.CompletedProcess:
    """``manage.py shell -c code``, quietly (only what ``code`` prints on stdout)."""
    return run_manage("shell", "--verbosity", "0", "-c", code, env=env)


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
    probe = run_shell(
        "from django.conf import settings as s; from django.db import connection as c;"
        "print(c.vendor, s.CELERY_TASK_ALWAYS_EAGER)",
        env=env,
    )
    # then
    assert migrate.returncode == 0, migrate.stderr
    assert probe.stdout.split() == ["sqlite", "True"]
    assert (tmp_path / "db.sqlite3").is_file()


def test_the_embedded_default_runs_a_task_without_a_broker_warning(tmp_path):
    # given: the embedded default, whose tasks run in-process
    env = clean_env(MOSAIC_VAR_DIR=str(tmp_path))
    assert run_manage("migrate", "--noinput", env=env).returncode == 0
    # when: a task is sent (an analysis run that does not exist: logged, nothing to do)
    sent = run_shell(
        "from quality.tasks import run_analysis; run_analysis.delay(987654)",
        env=env,
    )
    # then: it ran, and kombu did not warn of a broker host the mode never contacts
    assert sent.returncode == 0, sent.stderr
    assert "Task quality.tasks.run_analysis" in sent.stderr
    assert "No hostname" not in sent.stderr


def test_the_embedded_default_logs_a_refused_request_once(tmp_path):
    # given: the embedded default (DEBUG on, where Django adds a console handler of its own)
    env = clean_env(MOSAIC_VAR_DIR=str(tmp_path))
    # when: a request is refused
    probe = run_shell(
        "from django.test import Client;"
        "print(Client(HTTP_HOST='127.0.0.1').get('/api/studies/').status_code)",
        env=env,
    )
    # then: Django's line is written once, by the project's handler and in its format
    assert probe.stdout.split() == ["403"], probe.stderr
    lines = [line for line in probe.stderr.splitlines() if "Forbidden: /api/studies/" in line]
    assert len(lines) == 1, probe.stderr
    assert " WARNING django.request Forbidden: /api/studies/" in lines[0]


def test_production_settings_refuse_to_start_without_a_secret(tmp_path):
    env = clean_env(
        DJANGO_SETTINGS_MODULE="config.settings.production",
        DJANGO_ALLOWED_HOSTS="example.org",
        MOSAIC_VAR_DIR=str(tmp_path),
    )
    result = run_manage("check", env=env)
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY must be set in the environment" in result.stderr


GOOD_SECRET = "k" * 20 + "Zq8#vT2!pL0@xR5$mN7^bW4&cY1*dF6(" + "j" * 10


def production_env(tmp_path, **extra: str) -> dict:
    settings = dict(
        DJANGO_SETTINGS_MODULE="config.settings.production",
        DJANGO_ALLOWED_HOSTS="mosaic.example.org",
        MOSAIC_VAR_DIR=str(tmp_path),
        DJANGO_SECRET_KEY=GOOD_SECRET,
        DATABASE_URL="postgres://postgres@127.0.0.1:5432/postgres",
        CELERY_BROKER_URL="redis://127.0.0.1:6379/14",
        CACHE_URL="redis://127.0.0.1:6379/14",
    )
    settings.update(extra)
    return clean_env(**{k: v for k, v in settings.items() if v is not None})


def run_production_shell(tmp_path, code: str, **extra: str) -> subprocess.CompletedProcess:
    return run_shell(code, env=production_env(tmp_path, **extra))


def env_example() -> dict[str, str]:
    lines = (ROOT / "deploy/env.example").read_text().splitlines()
    pairs = (line.split("=", 1) for line in lines if line.strip() and not line.startswith("#"))
    return {key.strip(): value.strip() for key, value in pairs}


def test_production_settings_pass_deploy_checks(tmp_path):
    env = production_env(tmp_path, DJANGO_ALLOWED_HOSTS="example.org")
    result = run_manage("check", "--deploy", "--fail-level", "WARNING", env=env)
    assert result.returncode == 0, result.stderr + result.stdout


@pytest.mark.parametrize(("setting", "preload"), [(None, "False"), ("true", "True")])
def test_hsts_preload_is_off_unless_the_environment_asks_for_it(tmp_path, setting, preload):
    # given: DJANGO_SECURE_HSTS_PRELOAD unset, or set to true
    code = (
        "from django.conf import settings as s;"
        "print(s.SECURE_HSTS_PRELOAD, s.SECURE_HSTS_SECONDS, s.SECURE_HSTS_INCLUDE_SUBDOMAINS)"
    )
    # when
    result = run_production_shell(tmp_path, code, DJANGO_SECURE_HSTS_PRELOAD=setting)
    deploy = run_manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        env=production_env(tmp_path, DJANGO_SECURE_HSTS_PRELOAD=setting),
    )
    # then: preloading is an admin's decision; either way the deploy checks pass
    assert result.stdout.split() == [preload, "31536000", "True"], result.stderr
    assert deploy.returncode == 0, deploy.stderr + deploy.stdout
    # and deploy/env.example names the switch, off
    example = (ROOT / "deploy/env.example").read_text()
    assert "# DJANGO_SECURE_HSTS_PRELOAD=true" in example.splitlines()


@pytest.mark.parametrize(
    "secret",
    [
        env_example()["DJANGO_SECRET_KEY"],
        "x" * 60,
        "change-me-" + "Zq8#vT2!pL0@xR5$mN7^bW4&cY1*dF6(" * 2,
        "django-example-" + "Zq8#vT2!pL0@xR5$mN7^bW4&cY1*dF6(" * 2,
    ],
)
def test_production_settings_refuse_a_placeholder_secret(tmp_path, secret):
    # given: the secret key copied from deploy/env.example, or another made-up one
    env = production_env(tmp_path, DJANGO_SECRET_KEY=secret)
    # when
    result = run_manage("check", env=env)
    # then
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY is a placeholder" in result.stderr


@pytest.mark.parametrize(
    ("missing", "message"),
    [
        ({"DATABASE_URL": None}, "production settings need PostgreSQL: set DATABASE_URL"),
        ({"CELERY_BROKER_URL": None}, "production settings need a broker for the workers"),
    ],
)
def test_production_settings_refuse_the_embedded_defaults(tmp_path, missing, message):
    result = run_manage("check", env=production_env(tmp_path, **missing))
    assert result.returncode != 0
    assert message in result.stderr


def test_a_secret_key_starting_with_a_dollar_is_taken_as_it_is(tmp_path):
    # django-environ would read "$..." as a reference to another variable
    secret = "$" + GOOD_SECRET
    code = (
        "import os; from django.conf import settings as s;"
        "print(s.SECRET_KEY == os.environ['DJANGO_SECRET_KEY'])"
    )
    result = run_production_shell(tmp_path, code, DJANGO_SECRET_KEY=secret)
    assert result.stdout.split() == ["True"], result.stderr


def test_production_counts_sign_in_failures_in_redis(tmp_path):
    code = (
        "from django.conf import settings as s; c = s.CACHES['default'];"
        "print(c['BACKEND'], c['LOCATION'])"
    )
    # CACHE_URL names the cache ...
    named = run_production_shell(tmp_path, code, CACHE_URL="redis://127.0.0.1:6379/13")
    assert named.stdout.split() == [
        "django.core.cache.backends.redis.RedisCache",
        "redis://127.0.0.1:6379/13",
    ], named.stderr
    # ... else the broker's Redis is shared ...
    broker = run_production_shell(
        tmp_path, code, CACHE_URL=None, CELERY_BROKER_URL="redis://127.0.0.1:6379/12"
    )
    assert broker.stdout.split()[1:] == ["redis://127.0.0.1:6379/12"], broker.stderr
    # ... and never each worker's own memory
    neither = run_production_shell(
        tmp_path, code, CACHE_URL=None, CELERY_BROKER_URL="amqp://guest@127.0.0.1//"
    )
    assert neither.returncode != 0
    assert "production settings need a cache shared by all workers" in neither.stderr
    # compose hands every container the Redis service's cache
    assert compose()["x-app"]["environment"]["CACHE_URL"] == "redis://redis:6379/1"


def test_the_web_healthcheck_passes_under_production_settings(tmp_path):
    # given: compose's health check, and production settings with the SSL redirect on
    test = compose()["services"]["web"]["healthcheck"]["test"]
    assert test == ["CMD", "python", "config/healthcheck.py"]
    assert (ROOT / "config/healthcheck.py").is_file()
    code = (
        "from urllib.parse import urlsplit; from django.test import Client;"
        "from config.healthcheck import health_request; r = health_request();"
        "path = urlsplit(r.full_url).path; c = Client();"
        "print(c.get(path, HTTP_HOST=r.get_header('Host')).status_code,"
        " c.get(path, HTTP_HOST='127.0.0.1:8000').status_code)"
    )
    # when: it asks gunicorn over plain http, as the container does
    result = run_production_shell(tmp_path, code, DJANGO_ALLOWED_HOSTS=".example.org,other.org")
    # then: the check passes; the bare loopback address is still not an allowed host
    assert result.stdout.split() == ["200", "400"], result.stderr


@pytest.mark.parametrize(
    ("allowed", "host"),
    [
        ("mosaic.example.org", "mosaic.example.org"),
        (" .example.org , b.org", "example.org"),
        ("*", "localhost"),
        ("", "localhost"),
    ],
)
def test_the_healthcheck_names_an_allowed_host(allowed, host):
    from config.healthcheck import health_request

    assert health_request({"DJANGO_ALLOWED_HOSTS": allowed}).get_header("Host") == host


def test_nginx_passes_on_the_scheme_of_the_tls_terminator():
    # nginx listens on http only; TLS ends in front of it, whose X-Forwarded-Proto must
    # reach Django, or every request looks like http and the https redirect loops.
    conf = (ROOT / "deploy/nginx.conf").read_text()
    assert "map $http_x_forwarded_proto $forwarded_proto" in conf
    assert '"" $scheme;' in " ".join(conf.split())
    assert "proxy_set_header X-Forwarded-Proto $forwarded_proto;" in conf
    assert "X-Forwarded-Proto $scheme" not in conf


@pytest.mark.parametrize(
    "code", ["import config.wsgi", "from config.celery_app import app; app.conf.broker_url"]
)
def test_servers_default_to_the_production_settings(tmp_path, code):
    # gunicorn or a worker started without DJANGO_SETTINGS_MODULE never runs DEBUG with a
    # known key: it gets the production settings, which refuse to start without a secret.
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=clean_env(MOSAIC_VAR_DIR=str(tmp_path)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY must be set in the environment" in result.stderr


def test_manage_py_defaults_to_the_embedded_settings(tmp_path):
    probe = run_shell(
        "import os; print(os.environ['DJANGO_SETTINGS_MODULE'])",
        env=clean_env(MOSAIC_VAR_DIR=str(tmp_path)),
    )
    assert probe.stdout.split() == ["config.settings.local"], probe.stderr


def test_database_and_broker_come_from_the_environment(tmp_path):
    env = clean_env(
        MOSAIC_VAR_DIR=str(tmp_path),
        DATABASE_URL="postgres://postgres@127.0.0.1:5432/postgres",
        CELERY_BROKER_URL="redis://127.0.0.1:6379/14",
    )
    probe = run_shell(
        "from django.conf import settings as s; from django.db import connection as c;"
        "c.ensure_connection(); print(c.vendor, s.CELERY_TASK_ALWAYS_EAGER, s.CELERY_BROKER_URL)",
        env=env,
    )
    assert probe.stdout.split() == ["postgresql", "False", "redis://127.0.0.1:6379/14"], (
        probe.stderr
    )


def test_the_documented_weight_pins_name_the_files_the_metrics_read():
    # MOSAIC_WEIGHT_SHA256's keys are paths under MOSAIC_WEIGHTS_DIR, as the registry names them
    import re

    from media_pipeline.metrics.registry import CLIP_DIR, DINO_DIR

    for path in ("README.md", "docs/admins.md", "deploy/env.example", "config/settings/base.py"):
        named = set(re.findall(r"([\w.-]+)/model\.safetensors", (ROOT / path).read_text()))
        assert named and named <= {CLIP_DIR, DINO_DIR}, (path, named)


def test_the_readme_says_every_service_restarts():
    services = compose()["services"]
    assert {service.get("restart") for service in services.values()} == {"unless-stopped"}
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "Every service restarts on failure (`restart: unless-stopped`)" in readme


def test_a_dotenv_file_sets_the_var_dir_and_what_is_built_from_it(tmp_path):
    # given: the settings in a tree of their own, its .env naming the var dir
    shutil.copytree(ROOT / "config", tmp_path / "config")
    (tmp_path / ".env").write_text(f"MOSAIC_VAR_DIR={tmp_path / 'elsewhere'}\n")
    # when
    probe = subprocess.run(
        [sys.executable, "-c", "import config.settings.base as b; print(b.VAR_DIR, b.MEDIA_ROOT)"],
        cwd=tmp_path,
        env=clean_env(PYTHONPATH=str(tmp_path)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    # then
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.split() == [str(tmp_path / "elsewhere"), str(tmp_path / "elsewhere/media")]


def test_the_embedded_default_serialises_writers_rather_than_failing_one(tmp_path):
    # given: the embedded default (SQLite); two transactions at once that read and then
    # write, as storing an answer does (a rater's two tabs sending their queued answers)
    script = """
import threading, time
from django.db import connection, transaction
with connection.cursor() as cursor:
    cursor.execute("CREATE TABLE probe (n integer)")
connection.close()
barrier, outcomes = threading.Barrier(2), []
def write(n):
    try:
        barrier.wait()
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SELECT count(*) FROM probe")
                time.sleep(0.3)
                cursor.execute("INSERT INTO probe VALUES (%s)", [n])
        outcomes.append("stored")
    except Exception as exc:
        outcomes.append(repr(exc))
    finally:
        connection.close()
threads = [threading.Thread(target=write, args=(n,)) for n in range(2)]
[t.start() for t in threads]
[t.join() for t in threads]
with connection.cursor() as cursor:
    cursor.execute("SELECT count(*) FROM probe")
    print(sorted(outcomes), cursor.fetchone()[0])
"""
    # when
    probe = run_shell(script, env=clean_env(MOSAIC_VAR_DIR=str(tmp_path)))
    # then: the second waited for the first (without the setting: "database is locked")
    assert probe.stdout.split("\n")[0] == "['stored', 'stored'] 2", probe.stdout + probe.stderr


def test_the_embedded_default_sends_browsers_to_the_icon(tmp_path):
    # DEBUG is on there, and the static files are served by a URL pattern of their own
    env = clean_env(MOSAIC_VAR_DIR=str(tmp_path))
    probe = run_shell(
        "from django.test import Client; from django.conf import settings;"
        "r = Client().get('/favicon.ico', HTTP_HOST='127.0.0.1');"
        "print(settings.DEBUG, r.status_code, r['Location'])",
        env=env,
    )
    assert probe.stdout.split() == ["True", "301", "/static/frontend/favicon.svg"], probe.stderr


def test_a_browser_asking_for_another_language_gets_one_language(client):
    # given: a German browser; MOSaic ships no German catalogue
    # when
    response = client.get("/accounts/login/", HTTP_ACCEPT_LANGUAGE="de-DE,de;q=0.9")
    # then: the page is English throughout, not English with Django's own German words
    assert response["Content-Language"] == "en"
    assert 'lang="en"' in response.content.decode()


@pytest.mark.parametrize("language", [code for code, _ in django_settings.LANGUAGES])
def test_every_language_writes_a_moment_one_way(language):
    from datetime import datetime

    from django.utils import formats, translation

    # given: a moment, on a page in each language MOSaic offers
    moment = datetime(2026, 11, 27, 22, 26)
    with translation.override(language):
        # then: ISO 8601's order (config/formats), never 27.11.2026 or 2026年11月27日
        assert formats.date_format(moment, "DATETIME_FORMAT") == "2026-11-27 22:26"
        assert formats.date_format(moment, "SHORT_DATE_FORMAT") == "2026-11-27"


def test_the_upgrade_and_restore_steps_stop_every_service_that_runs_the_code():
    # given: the services built from the project's image, web aside (it migrates)
    services = compose()["services"]
    ours = {name for name, service in services.items() if service.get("build") == "."} - {"web"}
    admins = (ROOT / "docs/admins.md").read_text()
    section = admins.split("## Backups, restores and upgrades", 1)[1].split("\n## ", 1)[0]
    # when: the services the section's `docker compose stop` lines name
    stops = [
        set(line.split("#")[0].split()) - {"docker", "compose", "stop", "-t", "600"}
        for line in section.splitlines()
        if line.startswith("docker compose stop")
    ]
    # then: both (restore, upgrade) stop every worker and beat, or one would run the new
    # code on the old schema, or write into a database being restored
    assert len(stops) == 2
    assert stops[0] - {"web"} == ours and stops[1] == ours
    # and the volumes the section tells to back up are compose's
    for volume in ("pgdata", "media", "weights", "redisdata"):
        assert f"`{volume}`" in section and volume in compose()["volumes"]
