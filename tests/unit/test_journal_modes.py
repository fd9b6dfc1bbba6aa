"""The SQLite journal holds a chunked upload's address (with its seal) while the upload
runs: its files are the user's alone (0600), whatever the umask, as the login file."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from vidapi_async.batch import JobRecord, SQLiteJournal, Stage


@pytest.fixture(params=[0o022, 0o000], ids=["umask-022", "umask-000"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_a_new_journal_and_its_side_files_are_the_users_alone(
    tmp_path: Path, umask: int
) -> None:
    path = tmp_path / "batch.sqlite"
    journal = SQLiteJournal(path)
    try:
        await journal.save(
            JobRecord("k", Stage.UPLOADING, upload_url="https://upload.example/u?seal=SECRET")
        )
        side = [Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}.lock")]
        assert all(p.exists() for p in side), [p.name for p in side if not p.exists()]
        modes = {p.name: oct(mode(p)) for p in [path, *side]}
    finally:
        await journal.close()
    assert set(modes.values()) == {oct(0o600)}, modes


async def test_an_existing_journal_readable_by_others_is_made_private(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    first = SQLiteJournal(path)
    await first.save(JobRecord("k"))
    await first.close()
    os.chmod(path, 0o644)
    again = SQLiteJournal(path)
    try:
        await again.open()
        assert mode(path) == 0o600
    finally:
        await again.close()
