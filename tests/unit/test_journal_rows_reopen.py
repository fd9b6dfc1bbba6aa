"""Attack on 85df371 (issue 43, SQLite journal narrowed writes): the rows an
``SQLiteJournal`` knows (``_Rows``) outlive ``close()``. The journal object can be
closed and opened again (``open`` re-reads the keys for exactly that case: ``_KnownKeys``
is reset), and between the two another writer (another process's batch, another
``SQLiteJournal`` of the same file) may change the row. The next save of that key is
then an ``update`` of the columns that differ from the *stale* row: a column whose new
value equals the stale one is not written, and the file keeps the other writer's value.
A ``save`` returns without its record being what the file holds."""

from __future__ import annotations

from pathlib import Path

import vidapi_async as va


async def test_a_save_after_close_and_reopen_writes_the_record_as_given(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    mine = va.SQLiteJournal(path)
    await mine.open()
    created = va.JobRecord("k", va.Stage.CREATED, file_url="f", video_id="v1", runs=1)
    await mine.save(created)
    await mine.close()  # lock released: another batch may use the file now

    other = va.SQLiteJournal(path)  # (as another process's batch would)
    await other.open()
    await other.forget("k")
    await other.save(va.JobRecord("k", va.Stage.PENDING, runs=1))
    await other.close()

    await mine.open()  # the same object, used again (its keys are read again)
    try:
        await mine.save(created)  # durably recorded on return, the docstring says
        assert await mine.load("k") == created
    finally:
        await mine.close()
    # the file: stage 'pending' and no video id -> a re-run creates the video again
    assert va.SQLiteJournal(path).records_sync() == [created]
