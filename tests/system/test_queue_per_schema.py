"""Two ``SharedBatch`` schemas on one database are two queues: one's worker never runs,
finishes nor counts the other's jobs; a queued job whose spec is missing fails loudly."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import make_file
from vidapi_async.batch import SharedBatch
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

pytestmark = pytest.mark.system

pytest.importorskip("procrastinate")


async def test_schemas_do_not_share_a_queue(
    emulator: Emulator,
    tmp_path: Path,
    dsn: str,
) -> None:
    f = make_file(tmp_path / "a.mp4", 4000)
    g = make_file(tmp_path / "b.mp4", 4001)
    async with SharedBatch(dsn, schema="team_a") as a, SharedBatch(dsn, schema="team_b") as b:
        assert a.queue != b.queue
        await a.enqueue(
            [
                va.UploadJob(path=f, title="A's title", channel="news", key="shared-k"),
                va.UploadJob(path=g, title="only A", channel="news", key="only-a"),
            ]
        )
        told = await b.enqueue(
            [va.UploadJob(path=f, title="B's title", channel="news", key="shared-k")]
        )
        assert (told.added, told.already, told.changed) == (1, 0, [])
        assert (await b.status()).queued == 1
        async with client_for(emulator) as client:
            await asyncio.wait_for(b.work(client, until_empty=True), 60)
        assert Counter(v["title"] for v in emulator.videos()) == {"B's title": 1}
        status_a = await a.status()
        assert (status_a.queued, status_a.done, status_a.failed) == (2, 0, 0)
        async with client_for(emulator) as client:
            await asyncio.wait_for(a.work(client, until_empty=True), 60)
    assert Counter(v["title"] for v in emulator.videos()) == {
        "B's title": 1,
        "A's title": 1,
        "only A": 1,
    }


def test_the_default_queue_follows_the_schema() -> None:
    """The default pair is today's (schema and queue ``vidapi``: existing deployments
    keep their queue); another schema gets its own; an explicit queue is kept."""
    assert SharedBatch("postgresql://h/db").queue == "vidapi"
    assert SharedBatch("postgresql://h/db", schema="vidapi").queue == "vidapi"
    assert SharedBatch("postgresql://h/db", schema="team_a").queue == "team_a"
    assert SharedBatch("postgresql://h/db", schema="team_a", queue="vidapi").queue == "vidapi"


async def test_a_job_without_its_spec_fails_loudly(
    emulator: Emulator,
    tmp_path: Path,
    dsn: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    f = make_file(tmp_path / "a.mp4", 4000)
    async with SharedBatch(dsn, schema="team_a") as a:
        await a.enqueue([va.UploadJob(path=f, title="t", channel="news", key="no-spec")])
        await a.journal.execute(a.journal.statement("delete from {s}.specs"))
        async with client_for(emulator) as client:
            await asyncio.wait_for(a.work(client, until_empty=True), 60)
        status = await a.status()
        record = await a.journal.load("no-spec")
    assert emulator.videos() == []
    assert (status.done, status.failed) == (0, 1)
    assert record is not None and record.error is not None
    assert "spec" in record.error
    assert any("no-spec" in r.getMessage() and r.levelname == "ERROR" for r in caplog.records)


@pytest.mark.parametrize("queue", ["x" * 3000, "", "a/b", "q\n"])
def test_a_bad_queue_name_is_refused(queue: str) -> None:
    with pytest.raises(va.UsageError, match="queue"):
        SharedBatch("postgresql://h/db", queue=queue)


async def test_a_file_whose_name_is_not_utf8_is_enqueued_twice(
    tmp_path: Path,
    dsn: str,
) -> None:
    import os

    f = make_file(tmp_path / os.fsdecode(b"caf\xe9.mp4"), 3000)
    job = va.UploadJob(path=f, title="t", channel="news")
    async with SharedBatch(dsn) as shared:
        first = await shared.enqueue([job])
        again = await shared.enqueue([job])
    assert (first.added, again.added, again.already, again.changed) == (1, 0, 1, [])
