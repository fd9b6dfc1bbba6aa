"""What a shared queue's worker tells the outside (issue 28): the queue's depth as
gauges on its metrics endpoint, and a takeover line that names the job's key."""

from __future__ import annotations

import asyncio
import logging
import re
import socket
import urllib.request
from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import make_file
from tests.system.test_shared_queue import jobs_for
from vidapi_async.batch import SharedBatch
from vidapi_async.batch._worker import retry_stalled
from vidapi_async.emulator import Emulator, Faults
from vidapi_async.testing import client_for

psycopg = pytest.importorskip("psycopg")
pytest.importorskip("procrastinate")

GAUGE = re.compile(r'^vidapi_queue_jobs\{state="(\w+)"\} (\d+)$', re.M)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def scrape(port: int) -> str:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
            return str(answer.read().decode())
    except OSError:
        return ""  # not serving yet


@pytest.mark.system
async def test_the_worker_serves_the_queue_depth(
    tmp_path: Path,
    dsn: str,
) -> None:
    files = [make_file(tmp_path / f"g{i}.mp4", 2000 + i) for i in range(5)]
    port = free_port()
    async with Emulator(faults=Faults(latency=0.3)) as emu, SharedBatch(dsn) as shared:
        await shared.enqueue(jobs_for(files))
        async with client_for(emu) as client:
            work = asyncio.create_task(
                shared.work(client, concurrency=1, until_empty=True, metrics_port=port)
            )
            seen: dict[str, int] = {}
            try:
                while not work.done() and not seen:
                    text = await asyncio.to_thread(scrape, port)
                    seen = {state: int(n) for state, n in GAUGE.findall(text)}
                    await asyncio.sleep(0.05)
            finally:
                await asyncio.wait_for(work, 120)
    assert set(seen) == {"queued", "running"}, seen
    assert 1 <= seen["queued"] + seen["running"] <= 5, seen
    assert seen["running"] <= 1, seen  # concurrency 1


@pytest.mark.system
async def test_a_takeover_line_names_the_jobs_key(
    tmp_path: Path,
    dsn: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    f = make_file(tmp_path / "stalled.mp4", 1000)
    job = va.UploadJob(path=f, title="t", channel="news", key="the-stalled-job")
    async with SharedBatch(dsn) as shared:
        await shared.enqueue([job])
        manager = shared._ready().job_manager
        worker_id = await manager.register_worker()
        fetched = await manager.fetch_job([shared.queue], worker_id)
        assert fetched is not None
        await shared.journal.execute(
            "update procrastinate_workers set last_heartbeat = now() - interval '1 hour'"
        )
        with caplog.at_level(logging.WARNING, logger="vidapi_async.worker"):
            await retry_stalled(shared._ready(), shared.queue, 60.0)
    lines = [r.getMessage() for r in caplog.records if "queued again" in r.getMessage()]
    assert len(lines) == 1, lines
    assert "the-stalled-job" in lines[0]
    assert f"job {fetched.id} " not in lines[0]
