"""The SQLite journal writes less per trip (issue 43, fourth pass): a save that a later
save of the same key in the same trip overwrites is not sent (never past a load or a
forget of that key), and a save of a row the journal wrote before is an ``update`` of
the columns that changed. What the file holds is the same: each key's last record."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import vidapi_async as va


def traced(journal: va.SQLiteJournal) -> list[str]:
    """The statements the journal's connection runs from now on (its thread's)."""
    seen: list[str] = []
    assert journal._db is not None
    journal._db.set_trace_callback(seen.append)
    return seen


def writes(seen: list[str]) -> list[str]:
    return [s.split(" (")[0].split(" set ")[0] for s in seen if s.startswith(("insert", "update"))]


async def test_a_save_overwritten_in_its_trip_is_not_sent_and_done_is_an_update(
    tmp_path: Path,
) -> None:
    path = tmp_path / "j.sqlite"
    journal = va.SQLiteJournal(path)
    await journal.open()
    try:
        seen = traced(journal)

        async def job(i: int) -> None:
            record = va.JobRecord(f"k{i}", va.Stage.UPLOADED, file_url=f"f{i}", runs=1)
            journal.save_soon(record)  # then creating, in the same turn: one row
            record.stage, record.metadata = va.Stage.CREATING, {"title": f"t{i}"}
            await journal.save(record)
            record.stage, record.video_id = va.Stage.DONE, f"x{i}"
            await journal.save(record)

        await asyncio.gather(*(job(i) for i in range(8)))
        assert writes(seen) == ["insert or replace into jobs"] * 8 + ["update jobs"] * 8
        # (the trace shows the values bound) done writes its stage and video id alone
        updates = [s for s in seen if s.startswith("update")]
        assert all(s.startswith("update jobs set stage = 'done', video_id = 'x") for s in updates)
    finally:
        await journal.close()
    records = {r.key: r for r in va.SQLiteJournal(path).records_sync()}
    assert records == {
        f"k{i}": va.JobRecord(
            f"k{i}",
            va.Stage.DONE,
            file_url=f"f{i}",
            video_id=f"x{i}",
            runs=1,
            metadata={"title": f"t{i}"},
        )
        for i in range(8)
    }


async def test_a_load_or_forget_between_two_saves_keeps_the_first(tmp_path: Path) -> None:
    journal = va.SQLiteJournal(tmp_path / "j.sqlite")
    await journal.open()
    try:
        first = va.JobRecord("k", va.Stage.UPLOADED, file_url="f")
        second = va.JobRecord("k", va.Stage.CREATING, file_url="f")
        _, loaded, _ = await asyncio.gather(
            journal.save(first), journal.load("k"), journal.save(second)
        )
        assert loaded == first
        third = va.JobRecord("k", va.Stage.DONE, video_id="x")
        _, _, after = await asyncio.gather(
            journal.save(third), journal.forget("k"), journal.load("k")
        )
        assert after is None
        await journal.save(va.JobRecord("k", va.Stage.PENDING, runs=2))
        assert await journal.load("k") == va.JobRecord("k", va.Stage.PENDING, runs=2)
    finally:
        await journal.close()


async def test_after_a_failed_trip_a_save_writes_the_whole_row(tmp_path: Path) -> None:
    """A failed trip's rows are not the file's: the next save of its key must not be an
    update of the columns that changed since the failed one (they were never written)."""
    path = tmp_path / "j.sqlite"
    journal = va.SQLiteJournal(path)
    await journal.open()
    try:
        await journal.save(va.JobRecord("k", va.Stage.UPLOADED, file_url="f", runs=1))
        assert journal._db is not None
        journal._db.execute(
            "create trigger no before update on jobs begin select raise(abort, 'no'); end"
        )
        creating = va.JobRecord(
            "k", va.Stage.CREATING, file_url="f", runs=1, metadata={"title": "t"}
        )
        with pytest.raises(Exception, match="no"):
            await journal.save(creating)
        journal._db.execute("drop trigger no")
        done = va.JobRecord(
            "k", va.Stage.DONE, file_url="f", runs=1, metadata={"title": "t"}, video_id="x"
        )
        await journal.save(done)
    finally:
        await journal.close()
    assert va.SQLiteJournal(path).records_sync() == [done]


async def test_each_column_changed_and_cleared_is_written(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    journal = va.SQLiteJournal(path)
    await journal.open()
    record = va.JobRecord(
        "k",
        va.Stage.UPLOADING,
        upload_url="u",
        progress_url="p",
        runs=1,
        metadata={"source_etag": "e"},
        source="/a",
        origin="m.csv",
        account="",
    )
    try:
        await journal.save(record)
        record.stage, record.file_url, record.upload_url = va.Stage.UPLOADED, "f", None
        record.metadata, record.error = None, "boom"
        await journal.save(record)
        record.stage, record.error, record.subtitles_done = va.Stage.CREATED, None, ["en"]
        record.video_id, record.progress_url, record.account = "x", None, "TOKEN_B"
        await journal.save(record)
        assert await journal.load("k") == record
    finally:
        await journal.close()
    assert va.SQLiteJournal(path).records_sync() == [record]
