"""Journals: one live process per journal, and every unusable file refused at open with
a ``JournalError`` that names it, before any job starts."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import make_file
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

HOLD = """
import asyncio, sys
import vidapi_async as va

async def main():
    journal = va.SQLiteJournal(sys.argv[1])
    await journal.open()
    print("ready", flush=True)
    await asyncio.sleep(600)

asyncio.run(main())
"""


async def test_a_second_live_process_is_refused_and_a_killed_one_frees_the_journal(
    emulator: Emulator, tmp_path: Path
) -> None:
    journal = tmp_path / "batch.sqlite"
    holder = await asyncio.create_subprocess_exec(
        sys.executable, "-c", HOLD, str(journal), stdout=asyncio.subprocess.PIPE
    )
    try:
        assert holder.stdout is not None
        assert (await asyncio.wait_for(holder.stdout.readline(), 30)).strip() == b"ready"
        job = va.UploadJob(path=make_file(tmp_path / "m.mp4", 1000), title="t", channel="news")
        async with client_for(emulator) as client:
            with pytest.raises(va.JournalError) as info:
                async with va.BatchUploader(client, journal=journal) as batch:
                    [r async for r in batch.run([job])]
            assert str(journal) in str(info.value)
            assert emulator.requests == []  # refused before any job started
            holder.kill()
            await holder.wait()
            async with va.BatchUploader(client, journal=journal) as batch:
                [result] = [r async for r in batch.run([job])]
            assert result.status is va.JobStatus.DONE
    finally:
        if holder.returncode is None:
            holder.kill()
            await holder.wait()


def _corrupt(path: Path) -> None:
    path.write_bytes(os.urandom(8192))


def _foreign(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("create table invoices (id integer primary key, amount real)")
    db.commit()
    db.close()


def _unknown_stage(path: Path) -> None:
    async def make() -> None:
        journal = va.SQLiteJournal(path)
        await journal.save(va.JobRecord("k1", va.Stage.CREATED, video_id="x1"))
        await journal.close()

    asyncio.run(make())
    db = sqlite3.connect(path)
    db.execute("update jobs set stage = 'teleported'")
    db.commit()
    db.close()


def _newer(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("pragma user_version = 99")
    db.execute("create table jobs (key text)")
    db.commit()
    db.close()


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (_corrupt, "not a usable SQLite database"),
        (_foreign, "not a vidapi journal"),
        (_unknown_stage, "unknown stage 'teleported'"),
        (_newer, "newer"),
        (lambda p: p.mkdir(), "is a directory"),
    ],
    ids=["corrupt", "foreign", "unknown-stage", "newer", "directory"],
)
def test_an_unusable_journal_is_refused_at_open(make: object, words: str, tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    make(path)  # type: ignore[operator]
    error = refused_at_open(path)
    assert words in str(error)
    assert str(path) in str(error)


def refused_at_open(path: Path) -> va.JournalError:
    """The ``JournalError`` opening the SQLite journal at ``path`` raises."""

    async def open_it() -> None:
        journal = va.SQLiteJournal(path)
        try:
            await journal.open()
        finally:
            await journal.close()

    with pytest.raises(va.JournalError) as info:
        asyncio.run(open_it())
    return info.value


async def test_a_journal_that_cannot_be_written_is_refused_before_any_upload(
    emulator: Emulator, tmp_path: Path
) -> None:
    # /proc takes no new files, even for root: the journal can never be written there.
    job = va.UploadJob(path=make_file(tmp_path / "m.mp4", 1000), title="t", channel="news")
    async with client_for(emulator) as client:
        with pytest.raises(va.JournalError):
            async with va.BatchUploader(client, journal="/proc/vidapi-journal.sqlite") as batch:
                [r async for r in batch.run([job])]
    assert emulator.requests == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes read-only files")
async def test_a_read_only_journal_is_refused_at_open(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    journal = va.SQLiteJournal(path)
    await journal.open()
    await journal.close()
    path.chmod(0o444)
    tmp_path.chmod(0o555)
    try:
        journal = va.SQLiteJournal(path)
        with pytest.raises(va.JournalError):
            await journal.open()
        await journal.close()
    finally:
        tmp_path.chmod(0o755)


async def test_records_of_a_journal_whose_schema_is_not_written_yet_are_none(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.sqlite"
    sqlite3.connect(path).close()  # the file exists, the table not yet
    assert va.SQLiteJournal(path).records_sync() == []


async def test_records_can_be_read_from_a_path_with_uri_characters(tmp_path: Path) -> None:
    folder = tmp_path / "runs #1 ?50%"
    folder.mkdir()
    journal = va.SQLiteJournal(folder / "journal.sqlite")
    await journal.save(va.JobRecord("k1", va.Stage.DONE, video_id="x1"))
    await journal.close()
    assert [r.video_id for r in va.SQLiteJournal(folder / "journal.sqlite").records_sync()] == [
        "x1"
    ]
