"""The enqueue lock ("one spec per key") holds through a lost session: the specs'
statement and the defer run on the lock's own connection, in one transaction with the
lock; when that connection is lost (a restart, a terminated backend) the batch step is
done again from taking the lock, never continued without it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import vidapi_async as va
from tests.conftest import make_file
from vidapi_async.batch import SharedBatch

pytestmark = pytest.mark.system

psycopg = pytest.importorskip("psycopg")
pytest.importorskip("procrastinate")

LOCK_CLASS = 7317002


async def _lock_holders(admin: Any) -> set[int]:
    rows = await (
        await admin.execute(
            "select pid from pg_locks where locktype = 'advisory' and classid = %s and granted",
            (LOCK_CLASS,),
        )
    ).fetchall()
    return {row[0] for row in rows}


async def test_the_defer_runs_under_the_lock_and_a_lost_lock_redoes_the_step(
    tmp_path: Path,
    dsn: str,
) -> None:
    f = make_file(tmp_path / "a.mp4", 3000)
    jobs = [va.UploadJob(path=f, title="t", channel="news", key=f"k{i}") for i in range(5)]
    seen: list[tuple[bool, int | None]] = []
    admin = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
    try:
        async with SharedBatch(dsn) as shared:
            manager = shared._ready().job_manager
            defer = manager.batch_defer_jobs_async

            async def watched(new_jobs: list[Any], connection: Any = None) -> Any:
                holders = await _lock_holders(admin)
                pid = None if connection is None else connection.info.backend_pid
                seen.append((pid is not None and pid in holders, pid))
                if len(seen) == 1:  # the lock's session lost, once
                    for holder in holders:
                        await admin.execute("select pg_terminate_backend(%s)", (holder,))
                return await defer(new_jobs, connection=connection)

            manager.batch_defer_jobs_async = watched
            told = await shared.enqueue(jobs)
            status = await shared.status()
    finally:
        await admin.close()
    assert all(under_lock for under_lock, _ in seen), seen
    assert len(seen) == 2  # done again after the lost lock
    assert seen[0][1] != seen[1][1]  # on a new session
    assert (told.added, told.already) == (5, 0)
    assert status.queued == 5


async def test_an_enqueue_waiting_for_the_lock_says_so(
    tmp_path: Path,
    dsn: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    import asyncio

    f = make_file(tmp_path / "a.mp4", 3000)
    admin = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
    try:
        async with SharedBatch(dsn) as shared:
            await admin.execute(
                "select pg_advisory_lock(%s, hashtext(%s))", (LOCK_CLASS, "vidapi/vidapi")
            )
            enqueuing = asyncio.ensure_future(
                shared.enqueue([va.UploadJob(path=f, title="t", channel="news", key="k")])
            )
            for _ in range(200):
                if any("waiting" in r.getMessage() for r in caplog.records):
                    break
                await asyncio.sleep(0.05)
            assert not enqueuing.done()
            await admin.execute(
                "select pg_advisory_unlock(%s, hashtext(%s))", (LOCK_CLASS, "vidapi/vidapi")
            )
            told = await asyncio.wait_for(enqueuing, 30)
    finally:
        await admin.close()
    assert told.added == 1
    [said] = [r for r in caplog.records if "waiting" in r.getMessage()]
    assert said.levelname == "WARNING" and "vidapi" in said.getMessage()
