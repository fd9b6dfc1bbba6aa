"""A SQLite journal another user could have prepared is refused, not used: the journal
or one of its side files (``-wal``, ``-shm``, ``.lock``) owned by someone else or
writable by group or others, or a side file that is a symlink. A file that is not a
SQLite database is refused before anything is changed (its mode, a lock file beside
it)."""

from __future__ import annotations

import asyncio
import os
import pwd
import stat
from pathlib import Path

import pytest

from tests.integration.test_journal_safety import refused_at_open
from vidapi_async.batch import JobRecord, SQLiteJournal


def _refused(path: Path, words: str) -> None:
    assert words in str(refused_at_open(path))


def _journal(path: Path) -> None:
    async def make() -> None:
        journal = SQLiteJournal(path)
        await journal.save(JobRecord("k"))
        await journal.close()

    asyncio.run(make())


def _nobody() -> int:
    if os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    return pwd.getpwnam("nobody").pw_uid


@pytest.mark.parametrize("suffix", ["", "-wal", "-shm", ".lock"])
def test_a_file_of_another_user_is_refused(tmp_path: Path, suffix: str) -> None:
    uid = _nobody()
    path = tmp_path / "j.sqlite"
    _journal(path)
    side = Path(f"{path}{suffix}")
    side.touch()
    os.chown(side, uid, -1)
    os.chmod(side, 0o600)
    _refused(path, "another user")


def test_a_journal_precreated_by_another_user_is_refused(tmp_path: Path) -> None:
    uid = _nobody()
    tmp_path.chmod(0o777)
    path = tmp_path / "j.sqlite"
    path.touch()
    os.chown(path, uid, -1)
    os.chmod(path, 0o666)  # noqa: S103 - what an attacker leaves
    _refused(path, "another user")


@pytest.mark.parametrize("suffix", ["", "-wal", "-shm", ".lock"])
def test_a_file_others_can_write_is_refused(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / "j.sqlite"
    _journal(path)
    side = Path(f"{path}{suffix}")
    side.touch()
    os.chmod(side, 0o666)  # noqa: S103 - what an attacker leaves
    _refused(path, "writable by others")


@pytest.mark.parametrize("suffix", ["-wal", "-shm", ".lock"])
def test_a_side_file_that_is_a_symlink_is_refused(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / "j.sqlite"
    _journal(path)
    target = tmp_path / "elsewhere"
    target.touch()
    os.chmod(target, 0o600)
    Path(f"{path}{suffix}").unlink(missing_ok=True)
    Path(f"{path}{suffix}").symlink_to(target)
    _refused(path, "symlink")


def test_a_file_that_is_not_sqlite_is_left_untouched(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes, not a database\n")
    notes.chmod(0o644)
    _refused(notes, "not a usable SQLite database")
    assert stat.S_IMODE(notes.stat().st_mode) == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    assert notes.read_text() == "my notes, not a database\n"
