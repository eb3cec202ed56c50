"""Load benchmark: simulated raters against gunicorn + PostgreSQL on loopback.

    .venv/bin/python bench/load.py [--quick] [--raters 5000] [--pace 30] [--duration 60]

gunicorn runs as docker-compose.yml's web service runs it (workers, worker class,
threads) unless told otherwise, with the production settings. In one run it
0. opens every rater's session (their first request), as in a study running a while;
1. measures the floor: a bare Django view on the same stack (gunicorn, PostgreSQL) that
   stores one idempotent row per request, at full speed from C connections;
2. runs the rater loop (GET next item, POST the answer for all dimensions) at full
   speed from C clients: requests per second against the floor (target >= 0.6); floor
   and loop alternate in rounds so that both meet the same background load;
3. runs N raters at GAIA's pace (one answer every `pace` seconds each, random phase)
   and reports p50/p95/p99 latency and errors (target: 5,000 raters, p99 < 100 ms);
4. steps the number of paced raters up until p99 passes 100 ms or errors appear, and
   states the highest sustainable number found.
The last line of stdout is one JSON object of the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
import uuid
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.stack import (  # noqa: E402
    SLUG,
    analyze_database,
    compose_gunicorn,
    prepare_database,
    start_server,
    stop_server,
    token,
)

DB_NAME = "mosaic_bench"
PORT = 8765
BASE = f"http://127.0.0.1:{PORT}"
DIMENSIONS = ("subject", "completeness", "interaction")
# The full-speed loop spreads its answers over this many raters per client: one rater
# answering back to back would reach the rest break after 150 answers.
LOOP_RATERS_PER_CLIENT = 8
# Floor and rater loop alternate in this many rounds each (see against_floor).
ROUNDS = 4


class Stats:
    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.errors: dict[str, int] = {}
        self.answers = 0

    def error(self, what: str) -> None:
        self.errors[what] = self.errors.get(what, 0) + 1

    def summary(self, seconds: float) -> dict:
        lat = sorted(self.latencies)

        def pct(p: float) -> float:
            return round(lat[min(len(lat) - 1, int(p * len(lat)))] * 1000, 2) if lat else 0.0

        return {
            "requests": len(lat),
            "requests_per_s": round(len(lat) / seconds, 1),
            "answers_per_s": round(self.answers / seconds, 1),
            "p50_ms": pct(0.50),
            "p95_ms": pct(0.95),
            "p99_ms": pct(0.99),
            "errors": sum(self.errors.values()),
            "error_kinds": self.errors,
        }


async def timed(session, stats: Stats, method: str, url: str, **kwargs):
    start = time.perf_counter()
    try:
        async with session.request(method, url, **kwargs) as response:
            body = await response.json(content_type=None)
            stats.latencies.append(time.perf_counter() - start)
            if response.status >= 400:
                stats.error(f"{response.status}")
                return None
            return body
    except (TimeoutError, aiohttp.ClientError) as exc:
        stats.latencies.append(time.perf_counter() - start)
        stats.error(type(exc).__name__)
        return None


async def rater_answer(session, stats: Stats, i: int) -> None:
    headers = {"Authorization": f"Token {token(i)}"}
    base = f"{BASE}/api/rater/studies/{SLUG}/"
    body = await timed(session, stats, "GET", base + "next/", headers=headers)
    if not body or not body.get("item"):
        return
    payload = {
        "client_uuid": str(uuid.uuid4()),
        "item": body["item"]["id"],
        "scores": {d: random.randint(0, 100) for d in DIMENSIONS},  # on the slider's steps
        "watch_time_ms": 2800,
        "plays": 1,
        "stalls": 0,
    }
    if await timed(session, stats, "POST", base + "answers/", json=payload, headers=headers):
        stats.answers += 1


async def floor_request(session, stats: Stats, _: int) -> None:
    if await timed(
        session, stats, "POST", f"{BASE}/bench/floor/", json={"client_uuid": str(uuid.uuid4())}
    ):
        stats.answers += 1


async def open_sessions(raters: int, clients: int) -> dict:
    """Every rater's first request starts their session (once in a session's 300 answers);
    start them all before measuring, as in a study that has been running a while."""
    stats = Stats()
    pending = iter(range(raters))
    connector = aiohttp.TCPConnector(limit=clients)
    async with aiohttp.ClientSession(
        connector=connector, timeout=aiohttp.ClientTimeout(total=30)
    ) as session:

        async def loop() -> None:
            for i in pending:
                headers = {"Authorization": f"Token {token(i)}"}
                url = f"{BASE}/api/rater/studies/{SLUG}/next/"
                await timed(session, stats, "GET", url, headers=headers)

        start = time.monotonic()
        await asyncio.gather(*(loop() for _ in range(clients)))
        return stats.summary(time.monotonic() - start)


async def full_speed(
    action, clients: int, seconds: float, stats: Stats, *, offset: int = 0, per_client: int = 1
) -> float:
    """`clients` loops calling `action` back to back for `seconds`; returns the time taken.
    Client i acts in turn for raters offset + i + clients * k, k < per_client."""
    deadline = time.monotonic() + seconds
    connector = aiohttp.TCPConnector(limit=clients)
    async with aiohttp.ClientSession(
        connector=connector, timeout=aiohttp.ClientTimeout(total=10)
    ) as session:

        async def loop(i: int) -> None:
            turn = 0
            while time.monotonic() < deadline:
                await action(session, stats, offset + i + clients * (turn % per_client))
                turn += 1

        start = time.monotonic()
        await asyncio.gather(*(loop(i) for i in range(clients)))
        return time.monotonic() - start


def against_floor(clients: int, seconds: float, offset: int) -> tuple[dict, dict]:
    """The floor and the rater loop at full speed in alternating rounds, so that both meet
    the same background load on a shared machine; each figure sums its rounds."""
    floor, loop = Stats(), Stats()
    floor_s = loop_s = 0.0
    for _ in range(ROUNDS):
        floor_s += asyncio.run(full_speed(floor_request, clients, seconds / ROUNDS, floor))
        loop_s += asyncio.run(
            full_speed(
                rater_answer,
                clients,
                seconds / ROUNDS,
                loop,
                offset=offset,
                per_client=LOOP_RATERS_PER_CLIENT,
            )
        )
    return floor.summary(floor_s), loop.summary(loop_s)


async def paced(raters: int, pace: float, seconds: float) -> dict:
    """Each rater answers once every `pace` seconds, phases spread at random."""
    stats = Stats()
    connector = aiohttp.TCPConnector(limit=256)
    async with aiohttp.ClientSession(
        connector=connector, timeout=aiohttp.ClientTimeout(total=10)
    ) as session:
        start = time.monotonic()

        async def rater(i: int) -> None:
            next_at = start + random.uniform(0, pace)
            while next_at < start + seconds:
                await asyncio.sleep(max(0.0, next_at - time.monotonic()))
                await rater_answer(session, stats, i)
                next_at += pace

        await asyncio.gather(*(rater(i) for i in range(raters)))
        return stats.summary(time.monotonic() - start)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--raters", type=int, default=5000)
    parser.add_argument("--pace", type=float, default=30.0, help="seconds between answers")
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--clients", type=int, default=32)
    # gunicorn as docker-compose.yml's web service runs it, unless told otherwise.
    compose = compose_gunicorn()
    parser.add_argument("--workers", type=int, default=compose["workers"])
    parser.add_argument("--threads", type=int, default=compose["threads"])
    parser.add_argument("--worker-class", default=compose["worker_class"])
    args = parser.parse_args()
    if args.quick:
        args.raters, args.duration = 1000, 20.0
    burst = 10.0 if args.quick else 20.0
    steps = [args.raters, args.raters * 2, args.raters * 3]
    total_raters = max(steps) + args.clients * LOOP_RATERS_PER_CLIENT
    print(f"preparing {total_raters} raters ...", flush=True)
    prepare_database(DB_NAME, raters=total_raters, stimuli=3000)
    server = start_server(
        DB_NAME,
        port=PORT,
        workers=args.workers,
        threads=args.threads,
        worker_class=args.worker_class,
    )
    try:
        opened = asyncio.run(open_sessions(total_raters, args.clients))
        print("sessions opened:", opened, flush=True)
        analyze_database(DB_NAME)
        floor, loop = against_floor(args.clients, burst, offset=max(steps))
        print("floor (bare view, one idempotent row):", floor, flush=True)
        print("rater loop at full speed:", loop, flush=True)
        ratio = loop["requests_per_s"] / floor["requests_per_s"]
        print(f"rater loop / floor = {ratio:.2f} (target >= 0.60)", flush=True)
        results = {}
        for raters in steps:
            result = asyncio.run(paced(raters, args.pace, args.duration))
            results[raters] = result
            print(f"{raters} raters at one answer per {args.pace:g} s:", result, flush=True)
            if result["p99_ms"] >= 100 or result["errors"]:
                break
        sustainable = max(
            (n for n, r in results.items() if r["p99_ms"] < 100 and not r["errors"]), default=0
        )
        print(
            f"highest sustainable raters tried: {sustainable} "
            f"(p99 < 100 ms, no errors; steps {list(results)})"
        )
    finally:
        stop_server(server)
    target = results.get(args.raters, {})
    print(
        json.dumps(
            {
                "benchmark": "load",
                "floor_requests_per_s": floor["requests_per_s"],
                "rater_loop_requests_per_s": loop["requests_per_s"],
                "rater_loop_answers_per_s": loop["answers_per_s"],
                "ratio_vs_floor": round(ratio, 3),
                "paced_raters": args.raters,
                "pace_s": args.pace,
                "paced_p50_ms": target.get("p50_ms"),
                "paced_p95_ms": target.get("p95_ms"),
                "paced_p99_ms": target.get("p99_ms"),
                "paced_errors": target.get("errors"),
                "max_sustainable_raters_found": sustainable,
                "workers": args.workers,
                "worker_class": args.worker_class,
                "threads": args.threads,
                "clients": args.clients,
            }
        )
    )


if __name__ == "__main__":
    main()
