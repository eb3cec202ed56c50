"""PostgreSQL restarted while raters rate: clients retry, and afterwards every answer the
server acknowledged is stored exactly once."""

import asyncio
import subprocess
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import aiohttp
import psycopg
import pytest
from django.db import connections

from bench.stack import SLUG, prepare_database, start_server, stop_server, token

DB = "mosaic_fault"
PORT = 8777
RATERS = 12
RESTART_AFTER = 200  # acknowledged answers


def restart_postgres() -> None:
    version = sorted(Path("/etc/postgresql").iterdir())[-1].name
    subprocess.run(
        ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "restart"],
        check=True,
        timeout=60,
    )


async def rater(session, i: int, deadline: float, acked: set, failures: list) -> None:
    headers = {"Authorization": f"Token {token(i)}"}
    base = f"http://127.0.0.1:{PORT}/api/rater/studies/{SLUG}/"
    loop = asyncio.get_running_loop()
    while loop.time() < deadline:
        try:
            async with session.get(base + "next/", headers=headers) as response:
                if response.status != 200:
                    failures.append(("next", response.status))
                    await asyncio.sleep(0.2)
                    continue
                item = (await response.json())["item"]
        except aiohttp.ClientError as error:
            failures.append(("next", type(error).__name__))
            await asyncio.sleep(0.2)
            continue
        if item is None:
            return
        payload = {
            "client_uuid": str(uuid.uuid4()),
            "item": item["id"],
            "scores": {"subject": 10 + i, "completeness": 20, "interaction": 30},
        }
        while True:  # the same answer, the same id, until the server confirms it
            try:
                async with session.post(
                    base + "answers/", json=payload, headers=headers
                ) as response:
                    if response.status in (200, 201):
                        acked.add(payload["client_uuid"])
                        break
                    failures.append(("answer", response.status))
            except aiohttp.ClientError as error:
                failures.append(("answer", type(error).__name__))
            await asyncio.sleep(0.2)


async def rate_through_a_restart(seconds: float) -> tuple[set, list]:
    acked: set = set()
    failures: list = []
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        raters = [
            asyncio.create_task(rater(session, i, deadline, acked, failures)) for i in range(RATERS)
        ]
        # restart once rating is under way, well before the raters can be done (a fast
        # machine answers all 1,800 items in a few seconds)
        while len(acked) < RESTART_AFTER and loop.time() < deadline - 2 * seconds / 3:
            await asyncio.sleep(0.02)
        await loop.run_in_executor(None, restart_postgres)
        await asyncio.gather(*raters)
    return acked, failures


@pytest.fixture
def fault_database():
    """The stack's own database, dropped afterwards (it is not the test database)."""
    yield DB
    subprocess.run(
        ["dropdb", "-h", "127.0.0.1", "-U", "postgres", "--if-exists", "--force", DB],
        check=True,
        timeout=60,
    )


@pytest.mark.slow
def test_every_acknowledged_answer_survives_a_database_restart(monkeypatch, fault_database):
    # A browser test earlier in the run leaves Playwright's event loop registered on this
    # thread (the session's browser), and Django then refuses the connections' close
    # below as if it were called from async code: it is not.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    prepare_database(fault_database, raters=RATERS, stimuli=300)
    server = start_server(fault_database, port=PORT, workers=2, threads=4)
    try:
        # A thread of its own: a browser test earlier in the run may have left an event
        # loop registered on this one.
        with ThreadPoolExecutor(max_workers=1) as thread:
            acked, failures = thread.submit(asyncio.run, rate_through_a_restart(12.0)).result()
    finally:
        stop_server(server)
        for connection in connections.all():  # the restart closed them
            connection.close()
    with psycopg.connect(f"postgresql://postgres@127.0.0.1:5432/{fault_database}") as db:
        rows = db.execute(
            "SELECT a.client_uuid::text, count(*) FROM annotation_rating r"
            " JOIN annotation_answer a ON a.id = r.answer_id GROUP BY a.client_uuid"
        ).fetchall()
    stored = dict(rows)
    assert len(acked) > RATERS  # rating went on around the restart
    # The restart was felt: requests failed and were retried. Which ones is a race: an
    # answer in flight as the database goes down is retried with its id (and must still be
    # stored once, below); a rater asking for its next item retries that instead.
    assert failures
    assert all(stored.get(answer) == 3 for answer in acked)  # each exactly once (3 dims)
    assert all(count == 3 for count in stored.values())  # nothing half or twice stored
