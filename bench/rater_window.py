"""Rater page benchmark: from an answer to the next video's first frame, in real Chromium.

    .venv/bin/python bench/rater_window.py [--quick] [--answers 40]

Serves MOSaic on loopback (Django's server, PostgreSQL, real 0.5 s H.264 clips) and
rates in headless Chromium as a rater does: wait for the video to play through, move
the sliders, press Next. The time measured is from the press to the first frame of the
next video presented on screen, read in the page with requestVideoFrameCallback. Three
cases in one run:

- window: the offline window (docs/rater-api.md), window_size 5, online;
- offline: the same with the connection cut, answering within the window (the page
  comes back online between windows to deliver and refill; those steps are not timed);
- baseline: window_size 1, the page without look-ahead: each answer waits for the
  server before the next item shows (its video is downloaded ahead all the same, as the
  preload item), as the page did before the window.

Prints p50/p95 per case, the ratio baseline / window at the 95th percentile, and ends
with one JSON line. Target: p95 under 100 ms with a full window, online and offline.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DB_NAME = "mosaic_bench_window"
PORT = 8766
BASE = f"http://127.0.0.1:{PORT}"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def server_env(var_dir: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_"))}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.local",
        DJANGO_DEBUG="0",
        DATABASE_URL=f"postgres://postgres@127.0.0.1:5432/{DB_NAME}",
        MOSAIC_VAR_DIR=str(var_dir),
    )
    return env


def make_clip(folder: Path) -> tuple[bytes, bytes]:
    """A 0.5 s 320x240 H.264 clip and its poster."""
    video, poster = folder / "clip.mp4", folder / "poster.png"
    source = "testsrc2=size=320x240:rate=25"
    for args in (
        ["-t", "0.5", "-pix_fmt", "yuv420p", "-c:v", "libx264", str(video)],
        ["-frames:v", "1", str(poster)],
    ):
        subprocess.run(
            ["ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi", "-i", source, *args], check=True
        )
    return video.read_bytes(), poster.read_bytes()


SETUP = """
import hashlib
from django.core.files.base import ContentFile
from annotation.models import Stimulus, Study
from annotation.services.studies import study_build_sessions, study_create

video = open({video!r}, "rb").read()
poster = open({poster!r}, "rb").read()
tokens = {{}}
for slug, window in (("window", 5), ("baseline", 1)):
    study = study_create(
        name=slug, slug=slug, state=Study.State.RUNNING, session_size={items},
        golden_per_session=0, qualification_size=0, rest_every=0, window_size=window,
        open_to_signed_in=True, min_viewport_width=0, min_viewport_height=0,
    )
    for i in range({items}):
        stimulus = Stimulus(
            study=study, checksum=hashlib.sha256(f"{{slug}}{{i}}".encode()).hexdigest(),
            status=Stimulus.Status.READY, prompt="A girl arranges daisies.",
            action="Arranging Flowers", width=320, height=240, duration_s=0.5,
        )
        stimulus.source_file.save(f"{{slug}}{{i}}.mp4", ContentFile(video), save=False)
        stimulus.rendition.save(f"renditions/{{slug}}{{i}}.mp4", ContentFile(video), save=False)
        stimulus.poster.save(f"posters/{{slug}}{{i}}.png", ContentFile(poster), save=False)
        stimulus.save()
    study_build_sessions(study=study)
    tokens[slug] = study.entry_token
print("TOKENS", __import__("json").dumps(tokens))
"""


def prepare(var_dir: Path, *, items: int) -> dict[str, str]:
    """A fresh database with the two studies; their entry tokens."""
    for command in ("dropdb", "createdb"):
        extra = ["--if-exists"] if command == "dropdb" else []
        subprocess.run([command, "-h", "127.0.0.1", "-U", "postgres", *extra, DB_NAME], check=True)
    env = server_env(var_dir)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True
    )
    video, poster = make_clip(var_dir)
    (var_dir / "clip.mp4").write_bytes(video)
    script = SETUP.format(
        video=str(var_dir / "clip.mp4"), poster=str(var_dir / "poster.png"), items=items
    )
    out = subprocess.run(
        [sys.executable, "manage.py", "shell", "-v", "0", "-c", script],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out.split("TOKENS", 1)[1])


def start_server(var_dir: Path) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{PORT}"],
        cwd=ROOT,
        env=server_env(var_dir),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{BASE}/api/health/", timeout=1)
            return process
        except OSError:
            time.sleep(0.3)
    process.kill()
    raise RuntimeError("the server did not start")


# In the page: time from Next to the next video's first presented frame.
PROBE = """() => {
    window.benchTimes = [];
    const stage = () => document.querySelector('#stage video');
    let shown = null;
    new MutationObserver(() => {
        const video = stage();
        if (!video || video === shown) return;
        shown = video;
        const pressed = window.benchPressed;
        if (pressed === undefined) return;
        video.requestVideoFrameCallback((now) => window.benchTimes.push(now - pressed));
        window.benchPressed = undefined;
    }).observe(document.querySelector('#rater'), {subtree: true, childList: true});
    document.addEventListener('click', (event) => {
        if (event.target.id === 'next' && !window.benchSkip) {
            window.benchPressed = performance.now();
        }
    }, true);
}"""


def rate_one(page) -> None:
    page.wait_for_selector("#step-rating[data-ready]:not([hidden])")
    item = page.locator("#step-rating").get_attribute("data-item")
    for key in ("subject", "completeness", "interaction"):
        page.locator(f'#sliders input[data-dimension="{key}"]').fill("61")
    page.click("#next")
    page.wait_for_function(
        "item => document.querySelector('#step-rating').dataset.item !== item", arg=item
    )


def window_full(page) -> None:
    """Wait until the server has every answer and the page's window is downloaded."""
    page.wait_for_function("document.querySelector('#rater').dataset.unsent === '0'")
    page.wait_for_function(
        """() => {
            const [ready, held] = (document.querySelector('#rater').dataset.ahead || '0/0')
                .split('/');
            return Number(held) > 0 && ready === held;
        }"""
    )


def run_case(browser, slug: str, token: str, *, answers: int, offline: bool) -> list[float]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.goto(f"{BASE}/r/{slug}/?token={token}&PROLIFIC_PID=bench-{slug}-{offline}")
    page.wait_for_function("document.querySelector('#rater')?.dataset.step === 'consent'")
    page.click("#consent-accept")
    page.wait_for_selector("#tutorial-empty:not([hidden])")  # the study has no examples
    page.click("#tutorial-done")
    page.wait_for_function("document.querySelector('#rater').dataset.step === 'rating'")
    page.evaluate(PROBE)
    timed = 0
    while timed < answers:
        if slug == "window":
            window_full(page)  # the page's window, its media downloaded
        if offline:
            held = int(page.locator("#rater").get_attribute("data-ahead").split("/")[1])
            context.set_offline(True)
            for _ in range(min(held - 1, answers - timed)):  # each next video is held
                rate_one(page)
                timed += 1
            context.set_offline(False)
            page.wait_for_function("document.querySelector('#rater').dataset.unsent === '0'")
            page.evaluate("window.benchSkip = true")
            rate_one(page)  # the window's last answer waits for the server: not timed
            page.evaluate("window.benchSkip = false")
        else:
            rate_one(page)
            timed += 1
    page.wait_for_function(f"window.benchTimes.length >= {answers}")
    times = page.evaluate("window.benchTimes")[:answers]
    context.close()
    return times


def summary(times: list[float]) -> dict:
    ordered = sorted(times)
    return {
        "n": len(times),
        "p50_ms": round(statistics.median(ordered), 1),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=40, help="timed answers per case")
    parser.add_argument("--quick", action="store_true", help="10 answers per case")
    args = parser.parse_args()
    answers = 10 if args.quick else args.answers
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="mosaic-bench-window-") as folder:
        var_dir = Path(folder)
        tokens = prepare(var_dir, items=answers * 2 + 20)
        server = start_server(var_dir)
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS
                )
                cases = {
                    "window": run_case(
                        browser, "window", tokens["window"], answers=answers, offline=False
                    ),
                    "offline": run_case(
                        browser, "window", tokens["window"], answers=answers, offline=True
                    ),
                    "baseline": run_case(
                        browser, "baseline", tokens["baseline"], answers=answers, offline=False
                    ),
                }
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=30)
            subprocess.run(
                ["dropdb", "-h", "127.0.0.1", "-U", "postgres", "--if-exists", DB_NAME],
                check=False,
            )
    figures = {name: summary(times) for name, times in cases.items()}
    for name, figure in figures.items():
        print(f"{name:9} p50 {figure['p50_ms']:7.1f} ms   p95 {figure['p95_ms']:7.1f} ms")
    ratio = figures["baseline"]["p95_ms"] / max(figures["window"]["p95_ms"], 1e-9)
    target = all(figures[name]["p95_ms"] < 100 for name in ("window", "offline"))
    verdict = "met" if target else "NOT met"
    print(f"baseline / window at p95: {ratio:.2f}x; target p95 < 100 ms: {verdict}")
    print(
        json.dumps(
            {
                "bench": "rater_window",
                "answers_per_case": answers,
                **{
                    f"{name}_{key}": value
                    for name, f in figures.items()
                    for key, value in f.items()
                    if key != "n"
                },
                "ratio_baseline_to_window_p95": round(ratio, 2),
                "target_met": target,
            }
        )
    )


if __name__ == "__main__":
    main()
