"""The SQLite journal's group commit (issue 43): the saves and loads of one loop turn
go to the journal's thread in one trip, the saves in one transaction; each save still
returns only once its record is committed (a job's ``creating`` is durable before its
create is sent)."""

from __future__ import annotations

import asyncio
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

import vidapi_async as va


def count_trips(journal: va.SQLiteJournal, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    trips: list[int] = []
    submit = journal._thread.submit

    def counted(fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        trips.append(1)
        return submit(fn, *args, **kwargs)

    monkeypatch.setattr(journal._thread, "submit", counted)
    return trips


async def test_the_saves_of_one_turn_are_one_trip_and_durable_on_return(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "j.sqlite"
    journal = va.SQLiteJournal(path)
    await journal.open()
    try:
        trips = count_trips(journal, monkeypatch)

        async def job(i: int) -> None:
            record = va.JobRecord(f"k{i}", va.Stage.CREATING, file_url=f"f{i}")
            await journal.save(record)
            # durable on return: another connection (another process) reads it
            seen = {r.key: r for r in await asyncio.to_thread(va.SQLiteJournal(path).records_sync)}
            assert seen[f"k{i}"].stage is va.Stage.CREATING

        await asyncio.gather(*(job(i) for i in range(16)))
        assert len(trips) == 1
        # a load in the same turn as a save of its key sees that save
        loaded = await asyncio.gather(
            journal.save(va.JobRecord("k1", va.Stage.DONE, video_id="x1")), journal.load("k1")
        )
        got = loaded[1]
        assert got is not None and (got.stage, got.video_id) == (va.Stage.DONE, "x1")
        assert len(trips) == 2
    finally:
        await journal.close()
    records = va.SQLiteJournal(path).records_sync()
    assert len(records) == 16 and {r.stage for r in records} == {va.Stage.CREATING, va.Stage.DONE}


async def test_a_failed_group_fails_each_of_its_saves(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    journal = va.SQLiteJournal(path)
    await journal.open()
    try:
        assert journal._db is not None
        journal._db.execute(
            "create trigger no before insert on jobs begin select raise(abort, 'no'); end"
        )
        results = await asyncio.gather(
            *(journal.save(va.JobRecord(f"k{i}")) for i in range(3)), return_exceptions=True
        )
        assert all(isinstance(r, Exception) for r in results), results
        assert va.SQLiteJournal(path).records_sync() == []
        journal._db.execute("drop trigger no")
        await journal.save(va.JobRecord("k9"))  # the journal goes on
    finally:
        await journal.close()
    assert [r.key for r in va.SQLiteJournal(path).records_sync()] == ["k9"]
