"""Upload addresses fetched ahead: the next job's address during this job's create."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import vidapi_async as va
from tests.conftest import make_file
from vidapi_async.batch._spares import Spares
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for


async def test_the_next_address_is_fetched_while_a_create_is_under_way(
    emulator: Emulator, tmp_path: Path
) -> None:
    files = [make_file(tmp_path / f"c{i}.mp4", 5000 + i) for i in range(5)]
    events: list[str] = []
    async with client_for(emulator) as client:
        real_fetch, real_create = client.get_upload_session, client.create_video

        async def fetch() -> va.UploadSession:
            events.append("fetch")
            return await real_fetch()

        async def create(**kwargs: Any) -> va.Video:
            events.append("create")
            video = await real_create(**kwargs)
            events.append("created")
            return video

        client.get_upload_session = fetch  # type: ignore[method-assign]
        client.create_video = create  # type: ignore[method-assign]
        jobs = [va.UploadJob(path=f, title=f.name, channel="news") for f in files]
        async with va.BatchUploader(client, concurrency=1) as batch:
            results = [r async for r in batch.run(jobs)]
    assert [r.status for r in results] == [va.JobStatus.DONE] * 5
    assert events.count("fetch") == 5  # one address per job: none fetched in vain
    # One pipeline: without fetching ahead, exactly k addresses are asked for before the
    # k-th create returns. Ahead, the next job's address is asked for before that.
    created = [i for i, e in enumerate(events) if e == "created"]
    for k, end in enumerate(created[:-1], start=1):
        assert events[:end].count("fetch") == k + 1, events


async def settled() -> None:
    """Until no fetch ahead is running (its task and the callback that forgets it)."""
    running = [t for t in asyncio.all_tasks() if t.get_name() == "vidapi-batch-address"]
    await asyncio.gather(*running, return_exceptions=True)
    await asyncio.sleep(0)  # the done callbacks run


def session(n: int) -> va.UploadSession:
    return va.UploadSession(f"https://up/{n}", f"https://progress/{n}")


async def test_take_uses_a_spare_and_fetches_only_as_many_as_jobs_wait() -> None:
    count = 0

    async def fetch() -> va.UploadSession:
        nonlocal count
        count += 1
        return session(count)

    spares = Spares(fetch)
    spares.ahead(waiting=1)
    spares.ahead(waiting=1)  # one ready or coming already: no second fetch
    await settled()
    assert count == 1
    assert await spares.take() == session(1)  # the spare, no new fetch
    assert count == 1
    assert await spares.take() == session(2)  # none left: fetched now
    spares.ahead(waiting=0)
    await settled()
    assert count == 2
    await spares.close()


async def test_a_stale_spare_is_dropped_and_a_failed_fetch_forgotten() -> None:
    calls = 0

    async def fetch() -> va.UploadSession:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise va.ServerError("down", status=503)
        return session(calls)

    spares = Spares(fetch, max_age=0.0)
    spares.ahead(waiting=1)
    await settled()  # the fetch failed: nothing kept, nothing raised
    spares.ahead(waiting=1)
    await settled()  # a spare, at once too old for max_age=0
    assert await spares.take() == session(3)
    assert calls == 3
    await spares.close()


async def test_close_cancels_fetches_under_way() -> None:
    started = asyncio.Event()

    async def fetch() -> va.UploadSession:
        started.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    spares = Spares(fetch)
    spares.ahead(waiting=3)
    await started.wait()
    await spares.close()
    assert not [t for t in asyncio.all_tasks() if t.get_name() == "vidapi-batch-address"]


@pytest.mark.parametrize("concurrency", [1, 4])
async def test_no_spare_is_left_running_after_a_batch(
    emulator: Emulator, tmp_path: Path, concurrency: int
) -> None:
    files = [make_file(tmp_path / f"d{i}.mp4", 4000 + i) for i in range(6)]
    async with client_for(emulator) as client:
        async with va.BatchUploader(client, concurrency=concurrency) as batch:
            jobs = [va.UploadJob(path=f, title=f.name, channel="news") for f in files]
            results = [r async for r in batch.run(jobs)]
        assert not [t for t in asyncio.all_tasks() if t.get_name() == "vidapi-batch-address"]
    assert all(r.ok for r in results)
    fetched = [r for r in emulator.requests if r.path.rstrip("/") == "/file/upload"]
    assert len(fetched) == len(files)


async def test_a_job_waits_for_the_spare_under_way_rather_than_fetching_its_own() -> None:
    """The spare fetched for a waiting job is that job's, even when the job asks before
    it has arrived (it fetched its own, and the spare was wasted: one address too many)."""
    gate = asyncio.Event()
    calls = 0

    async def fetch() -> va.UploadSession:
        nonlocal calls
        calls += 1
        n = calls
        await gate.wait()
        return session(n)

    spares = Spares(fetch)
    spares.ahead(waiting=1)
    await asyncio.sleep(0)  # the fetch ahead is under way
    taking = asyncio.create_task(spares.take())
    await asyncio.sleep(0)
    gate.set()
    assert await taking == session(1)
    assert calls == 1
    await spares.close()
