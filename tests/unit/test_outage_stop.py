"""A stopping worker never waits for the database (issue 29): ``Outage.patiently``
once ``give_up`` is set. In-process, no server: the calls are stand-ins for a pool
waiting for a connection that never comes."""

from __future__ import annotations

import asyncio

import pytest

import vidapi_async as va
from vidapi_async.batch._postgres import Outage

psycopg = pytest.importorskip("psycopg")


async def test_a_call_waiting_when_the_stop_comes_is_cut_short() -> None:
    outage = Outage("postgresql://db:5432/x")
    started = asyncio.Event()

    async def pool_waits_for_ever() -> None:
        started.set()
        await asyncio.Event().wait()

    call = asyncio.create_task(outage.patiently(pool_waits_for_ever))
    await started.wait()
    outage.give_up.set()  # the stop
    with pytest.raises(va.JournalError, match="away"):
        await asyncio.wait_for(call, 30)  # a guard: it waited for ever


async def test_nothing_is_tried_once_stopping_with_the_database_away() -> None:
    outage = Outage("postgresql://db:5432/x")
    outage.gone(psycopg.OperationalError("connection refused"))
    outage.give_up.set()
    tried = 0

    async def statement() -> int:
        nonlocal tried
        tried += 1
        return 1

    with pytest.raises(va.JournalError, match="away"):
        await asyncio.wait_for(outage.patiently(statement), 30)
    assert tried == 0


async def test_a_healthy_call_under_way_at_the_stop_still_answers() -> None:
    outage = Outage("postgresql://db:5432/x")
    release = asyncio.Event()

    async def statement() -> str:
        await release.wait()
        return "row"

    call = asyncio.create_task(outage.patiently(statement))
    await asyncio.sleep(0)
    outage.give_up.set()
    release.set()
    assert await asyncio.wait_for(call, 30) == "row"


async def test_cancelling_a_patient_call_cancels_the_statement() -> None:
    outage = Outage("postgresql://db:5432/x")
    cancelled = asyncio.Event()
    started = asyncio.Event()

    async def statement() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    call = asyncio.create_task(outage.patiently(statement))
    await started.wait()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    await asyncio.wait_for(cancelled.wait(), 30)
