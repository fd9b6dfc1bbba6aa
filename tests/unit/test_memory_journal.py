"""The default journal keeps memory flat however many jobs a batch runs."""

from __future__ import annotations

import tracemalloc

import pytest

import vidapi_async as va
from vidapi_async.batch import JobRecord, MemoryJournal, Stage


async def run_jobs(journal: MemoryJournal, start: int, count: int) -> None:
    for i in range(start, start + count):
        record = JobRecord(f"key-{i:08d}", upload_url=f"https://up/{i}?seal=s")
        for stage in (Stage.UPLOADING, Stage.UPLOADED, Stage.CREATING, Stage.CREATED):
            record.stage = stage
            record.file_url = f"https://files/{i}.mp4"
            await journal.save(record)
        record.video_id = f"x{i:07d}"
        record.runs = 1
        record.stage = Stage.DONE
        await journal.save(record)


async def test_memory_does_not_grow_with_the_number_of_jobs() -> None:
    journal = MemoryJournal(keep_done=1000)
    tracemalloc.start()
    try:
        await run_jobs(journal, 0, 2000)  # past the bound: what is kept is at its size
        before, _ = tracemalloc.get_traced_memory()
        await run_jobs(journal, 2000, 20_000)
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert after - before < 64 * 1024  # 20,000 more jobs, next to no more memory
    assert len(journal.records()) == 1000


async def test_a_recent_done_job_loads_as_done_and_an_old_one_is_forgotten() -> None:
    journal = MemoryJournal(keep_done=10)
    await run_jobs(journal, 0, 25)
    recent = await journal.load("key-00000024")
    assert recent is not None
    assert (recent.stage, recent.video_id, recent.runs) == (Stage.DONE, "x0000024", 1)
    assert await journal.load("key-00000014") is None  # the eleventh from the end


async def test_a_job_under_way_is_kept_whole_and_copies_are_independent() -> None:
    journal = MemoryJournal(keep_done=0)
    record = JobRecord("k", Stage.CREATED, file_url="https://f", video_id="x1")
    record.subtitles_done.append("en")
    await journal.save(record)
    loaded = await journal.load("k")
    assert loaded == record
    assert loaded is not None
    loaded.subtitles_done.append("fr")  # a caller's change is not the journal's
    again = await journal.load("k")
    assert again is not None
    assert again.subtitles_done == ["en"]
    record.stage = Stage.DONE
    await journal.save(record)
    assert await journal.load("k") is None  # keep_done=0 keeps no finished job


def test_keep_done_must_be_a_count() -> None:
    with pytest.raises(va.InvalidArgumentError, match="keep_done"):
        MemoryJournal(keep_done=-1)
