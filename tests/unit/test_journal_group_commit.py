"""The SQLite journal's group commit (issue 43): the saves and loads of one loop turn
go to the journal's thread in one trip, the saves in one transaction; each save still
returns only once its record is committed (a job's ``creating`` is durable before its
create is sent)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import vidapi_async as va


def count_trips(journal: va.SQLiteJournal, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    trips: list[int] = []
    submit = journal._thread.submit

    def counted(fn: Any, /, *args: Any, **kwargs: Any) -> Any:
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


async def test_a_new_keys_load_makes_no_trip_and_every_load_stays_true(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The keys the file holds are read by ``open`` (issue 43): a load of another key
    is ``None`` without a trip to the thread; a key saved, forgotten or already in the
    file is read as before."""
    path = tmp_path / "j.sqlite"
    first = va.SQLiteJournal(path)
    await first.save(va.JobRecord("old", va.Stage.UPLOADED, file_url="f"))
    await first.close()
    journal = va.SQLiteJournal(path)
    await journal.open()
    try:
        trips = count_trips(journal, monkeypatch)
        assert await journal.load("new") is None
        assert trips == []
        old = await journal.load("old")
        assert old is not None and old.file_url == "f" and len(trips) == 1
        await journal.save(va.JobRecord("new", va.Stage.CREATING, file_url="g"))
        new = await journal.load("new")
        assert new is not None and new.stage is va.Stage.CREATING
        await journal.forget("old")
        before = len(trips)
        assert await journal.load("old") is None
        assert len(trips) == before
    finally:
        await journal.close()
    assert {r.key for r in va.SQLiteJournal(path).records_sync()} == {"new"}


async def test_a_failed_write_ends_the_shortcut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A forget whose transaction fails leaves its record in the file: a load after it
    reads the file again rather than trust the keys in memory."""
    path = tmp_path / "j.sqlite"
    journal = va.SQLiteJournal(path)
    await journal.open()
    try:
        await journal.save(va.JobRecord("k", va.Stage.UPLOADED, file_url="f"))
        apply = journal._apply

        def failing(ops: list[Any]) -> list[object]:
            if any(kind == "forget" for kind, _ in ops):
                raise OSError("disk gone")
            return apply(ops)

        monkeypatch.setattr(journal, "_apply", failing)
        with pytest.raises(OSError, match="disk gone"):
            await journal.forget("k")
        found = await journal.load("k")
        assert found is not None and found.file_url == "f"
    finally:
        await journal.close()


async def test_a_write_during_open_is_not_missed(tmp_path: Path) -> None:
    """A save queued while ``open`` reads the keys: the keys read are not kept (they
    may lack it), so its load still finds it."""
    journal = va.SQLiteJournal(tmp_path / "j.sqlite")
    try:
        opening = asyncio.ensure_future(journal.open())
        await asyncio.sleep(0)
        await journal.save(va.JobRecord("k", va.Stage.UPLOADED, file_url="f"))
        await opening
        found = await journal.load("k")
        assert found is not None and found.file_url == "f"
    finally:
        await journal.close()


async def test_a_save_soon_goes_with_the_next_save_in_one_trip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job's ``uploaded`` (``save_soon``, not waited for) and its ``creating`` saved
    right after (waited for) go to the thread in one trip; the file holds the latter.
    A ``save_soon`` alone is written too, by the trip of its loop turn."""
    path = tmp_path / "j.sqlite"
    journal = va.SQLiteJournal(path)
    await journal.open()
    try:
        trips = count_trips(journal, monkeypatch)
        record = va.JobRecord("k", va.Stage.UPLOADED, file_url="f")
        journal.save_soon(record)
        record.stage = va.Stage.CREATING
        await journal.save(record)
        assert len(trips) == 1
        journal.save_soon(va.JobRecord("alone", va.Stage.UPLOADED, file_url="g"))
        for _ in range(50):
            if len(trips) == 2 and journal._in_flight is None:
                break
            await asyncio.sleep(0.01)
        assert len(trips) == 2
    finally:
        await journal.close()
    stages = {r.key: r.stage for r in va.SQLiteJournal(path).records_sync()}
    assert stages == {"k": va.Stage.CREATING, "alone": va.Stage.UPLOADED}


async def test_a_failed_save_soon_is_logged_not_lost_in_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    journal = va.SQLiteJournal(tmp_path / "j.sqlite")
    await journal.open()
    try:

        def failing(ops: list[Any]) -> list[object]:
            raise OSError("disk gone")

        monkeypatch.setattr(journal, "_apply", failing)
        journal.save_soon(va.JobRecord("k", va.Stage.UPLOADED, file_url="f"))
        with pytest.raises(OSError, match="disk gone"):
            await journal.save(va.JobRecord("k", va.Stage.CREATING, file_url="f"))
        assert "job k: the journal did not record its stage: disk gone" in caplog.text
    finally:
        monkeypatch.undo()
        await journal.close()


async def test_the_journals_thread_ends_with_it(tmp_path: Path) -> None:
    """The journal's own worker thread (issue 43: no executor) runs its work in order
    and is gone once the journal is closed; an error on it is its caller's."""
    import threading

    journal = va.SQLiteJournal(tmp_path / "j.sqlite")
    await journal.open()
    saves = [journal.save(va.JobRecord(f"k{i}", va.Stage.UPLOADED)) for i in range(5)]
    await asyncio.gather(*saves)
    assert [t for t in threading.enumerate() if t.name == "vidapi-journal"]
    with pytest.raises(ZeroDivisionError):
        await journal._run(lambda: 1 / 0)
    await journal.close()
    await journal.close()
    assert not [t for t in threading.enumerate() if t.name == "vidapi-journal"]
    assert len(va.SQLiteJournal(tmp_path / "j.sqlite").records_sync()) == 5
