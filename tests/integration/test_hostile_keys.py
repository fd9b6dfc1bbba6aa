"""Keys a journal cannot hold, and statements the server refuses (issue 29).

A key has a documented maximum length (``MAX_KEY_LENGTH``), checked before any write,
for every journal kind and for the shared queue; a statement PostgreSQL refuses (an
index row too large, SQLSTATE class 54) is an error, never taken for the database
being away (that waited for ever)."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import make_file
from tests.pg import DSN, connect_or_install, q
from vidapi_async.batch import MAX_KEY_LENGTH, JobRecord, MemoryJournal, SharedBatch, SQLiteJournal
from vidapi_async.batch._postgres import db_away

psycopg = pytest.importorskip("psycopg")

LONG = secrets.token_urlsafe(2100)  # ~2.8 KB of incompressible text: over the index's limit


def test_the_documented_maximum() -> None:
    assert MAX_KEY_LENGTH == 200


def test_only_a_lost_connection_is_the_database_away() -> None:
    assert db_away(psycopg.OperationalError("connection refused"))
    assert db_away(psycopg.errors.AdminShutdown("terminating connection"))
    refused = psycopg.errors.ProgramLimitExceeded("index row size 2816 exceeds maximum 2704")
    assert not db_away(refused)
    assert not db_away(psycopg.errors.DiskFull("no space left"))


@pytest.mark.parametrize("key", ["k" * (MAX_KEY_LENGTH + 1), LONG])
def test_an_upload_job_with_a_key_too_long_is_refused(tmp_path: Path, key: str) -> None:
    with pytest.raises(va.InvalidArgumentError) as caught:
        va.UploadJob(path=tmp_path / "a.mp4", title="a", channel="news", key=key)
    assert caught.value.argument == "key"
    assert str(MAX_KEY_LENGTH) in str(caught.value)
    assert key not in str(caught.value)  # not echoed whole


def test_a_key_of_the_maximum_length_is_fine(tmp_path: Path) -> None:
    va.UploadJob(path=tmp_path / "a.mp4", title="a", channel="news", key="k" * MAX_KEY_LENGTH)


async def test_every_local_journal_refuses_a_key_too_long(tmp_path: Path) -> None:
    sqlite = SQLiteJournal(tmp_path / "j.sqlite")
    memory = MemoryJournal()
    try:
        for journal in (sqlite, memory):
            with pytest.raises(va.InvalidArgumentError, match="key"):
                await journal.save(JobRecord(LONG))
            with pytest.raises(va.InvalidArgumentError, match="key"):
                await journal.load(LONG)
        assert await sqlite.load("k") is None  # nothing written
    finally:
        await sqlite.close()
        await memory.close()


@pytest.fixture
async def journal(schema: str) -> AsyncIterator[va.PostgresJournal]:
    opened = va.PostgresJournal(DSN, schema=schema)
    await opened.open()
    try:
        yield opened
    finally:
        await opened.close()


@pytest.mark.system
async def test_a_postgres_journal_refuses_a_key_too_long_before_writing(
    journal: va.PostgresJournal,
) -> None:
    for call in (journal.claim(LONG), journal.save(JobRecord(LONG)), journal.load(LONG)):
        with pytest.raises(va.InvalidArgumentError, match="key"):
            await asyncio.wait_for(call, 30)
    assert await journal.records() == []


@pytest.mark.system
async def test_a_statement_the_server_refuses_is_an_error_not_an_outage(
    journal: va.PostgresJournal,
) -> None:
    """SQLSTATE 54000 (program limit exceeded): raised at once as ``JournalError``."""
    with pytest.raises(va.JournalError, match="refused") as caught:
        await asyncio.wait_for(journal.fetchone("select repeat('x', 1100000000)"), 30)
    assert "away" not in str(caught.value)
    assert journal.outage.away is None


@pytest.mark.system
async def test_a_claim_the_server_refuses_names_the_job(journal: va.PostgresJournal) -> None:
    """A key within the limit whose row the server still refuses (here: a check an
    administrator added to the table) names the job, at once."""
    conn = await connect_or_install()
    try:
        await conn.execute(q("alter table {s}.jobs add check (length(key) < 10)", journal.schema))
        key = "a-key-of-more-than-ten-characters"
        with pytest.raises(va.JournalError, match="refused") as caught:
            await asyncio.wait_for(journal.claim(key), 30)
        assert f"job {key}" in str(caught.value)
        assert journal.outage.away is None
    finally:
        await conn.close()


@pytest.mark.system
async def test_the_shared_queue_refuses_a_key_too_long_before_writing(
    tmp_path: Path,
    dsn: str,
) -> None:
    f = make_file(tmp_path / "long.mp4", 1000)

    def jobs() -> Iterator[va.UploadJob]:  # the second job is refused when it is built
        yield va.UploadJob(path=f, title="fine", channel="news", key="fine")
        yield va.UploadJob(path=f, title="long", channel="news", key=LONG)

    with pytest.raises(va.InvalidArgumentError, match="key"):
        async with SharedBatch(dsn) as shared:
            await asyncio.wait_for(shared.enqueue(jobs()), 30)
    async with SharedBatch(dsn) as shared:
        assert (await shared.status()).queued == 0
