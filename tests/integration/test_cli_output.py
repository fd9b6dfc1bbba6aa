"""A fresh user's second review of the vidapi command: where its output goes, a pipe
closed early, and flags that would do something other than what they say."""

from __future__ import annotations

import asyncio
import fcntl
import io
import json
import os
import sys
from pathlib import Path

import pytest

import vidapi_async as va
from tests.cli_run import closed_pipe_run, vidapi
from tests.conftest import make_file
from tests.integration.test_cli_usage import env_for, uploads
from vidapi_async.batch import JobRecord, SQLiteJournal, Stage
from vidapi_async.batch import _journal as journal_module
from vidapi_async.cli._exit import EXIT_BROKEN_PIPE, EXIT_OTHER, EXIT_USAGE
from vidapi_async.emulator import Emulator


async def test_enqueue_only_with_a_file_journal_is_a_usage_error(
    emulator: Emulator, tmp_path: Path
) -> None:
    make_file(tmp_path / "a.mp4", 20_000)
    code, _, err = await vidapi(
        "batch",
        str(tmp_path),
        "--channel",
        "news",
        "--journal",
        str(tmp_path / "x.db"),
        "--enqueue-only",
        env=env_for(emulator),
    )
    assert code == EXIT_USAGE, err
    assert "--enqueue-only" in err and "PostgreSQL" in err
    assert uploads(emulator) == [] and emulator.videos() == []


async def test_output_into_a_closed_pipe_exits_quietly(emulator: Emulator, tmp_path: Path) -> None:
    env = env_for(emulator)
    code, _, err = await vidapi(
        "--json",
        "upload",
        str(make_file(tmp_path / "m.mp4", 20_000)),
        "--title",
        "T",
        "--channel",
        "news",
        env=env,
    )
    assert code == 0, err
    video_id = emulator.videos()[0]["id"]
    for args in (("api", "/me/videos", "--paginate"), ("video", video_id), ("embed", "x1")):
        code, err = await closed_pipe_run(*args, env=env)
        assert (code, err) == (EXIT_BROKEN_PIPE, ""), args


async def test_status_of_a_sqlite_journal_prints_its_table_on_stdout(
    emulator: Emulator, tmp_path: Path
) -> None:
    (tmp_path / "src").mkdir()
    make_file(tmp_path / "src" / "a.mp4", 20_000)
    journal = str(tmp_path / "j.sqlite")
    env = env_for(emulator)
    code, out, err = await vidapi(
        "batch", str(tmp_path / "src"), "--channel", "news", "--journal", journal, env=env
    )
    assert code == 0, err
    assert "batch summary" in out and "batch summary" not in err
    code, out, err = await vidapi("status", "--journal", journal, env=env)
    assert code == 0, err
    rows = {
        line.split("│")[1].strip(): line.split("│")[2].strip()
        for line in out.splitlines()
        if line.count("│") == 3
    }
    assert rows["done"] == "1" and rows["unfinished"] == "0", out
    assert "done" not in err


async def test_status_while_the_database_hangs_up_says_cannot_connect_once() -> None:
    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()  # a TCP peer that is no PostgreSQL: it closes at once

    server = await asyncio.start_server(hang_up, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        code, _, err = await vidapi("status", "--journal", f"postgresql://u@127.0.0.1:{port}/db")
    finally:
        server.close()
        await server.wait_closed()
    assert code == EXIT_OTHER, err
    assert "JournalError" in err and err.count("cannot connect") == 1, err


async def test_worker_journal_names_only_the_dsn_forms() -> None:
    for given in ("nonsense", "x.db", "sqlite:x.sqlite"):
        code, _, err = await vidapi("worker", "--journal", given, env={"VIDAPI_TOKEN": "t"})
        assert code == EXIT_USAGE, err
        assert "postgresql://" in err and "host=" in err, err
        assert "sqlite:" not in err.replace(given, ""), err


async def test_worker_help_shows_the_stalled_after_default_and_the_key_value_dsn() -> None:
    code, out, err = await vidapi("worker", "--help", env={"COLUMNS": "200"})
    assert code == 0, err
    assert "taken over (default 60)" in " ".join(out.split()), out
    assert "'host=" in out, out


def test_worker_totals_are_one_line_at_80_columns() -> None:
    from rich.console import Console

    from vidapi_async.batch import QueueStatus
    from vidapi_async.cli._shared import WorkerView

    stream = io.StringIO()
    view = WorkerView(Console(file=stream, width=80))
    line = view.totals(QueueStatus(queued=90123, running=0, done=12345, failed=678, stages={}))
    assert len(line) > 80
    view.say(line)
    assert stream.getvalue() == line + "\n"


async def test_status_watch_of_a_sqlite_journal_follows_its_batch_to_the_end(
    tmp_path: Path,
) -> None:
    """``--watch`` on a batch's SQLite file refreshes while a batch holds the journal and
    ends when the batch lets go, with the counts of that moment (before: printed once)."""
    path = tmp_path / "vidapi-journal.sqlite"
    journal = SQLiteJournal(path)  # this test is the running batch: it holds the lock
    await journal.save(JobRecord("a", Stage.DONE, video_id="x1"))
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "vidapi_async.cli",
        "--json",
        "status",
        "--journal",
        str(path),
        "--watch",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stderr is not None and proc.stdout is not None
        line = await asyncio.wait_for(proc.stderr.readline(), 60)
        assert b"watching" in line and b"batch" in line, line
        await journal.save(JobRecord("b", Stage.DONE, video_id="x2"))
        await journal.save(JobRecord("c", Stage.UPLOADED, error="HTTP 500"))
        assert proc.returncode is None  # still watching while the batch runs
    except BaseException:
        proc.kill()
        await proc.communicate()
        raise
    finally:
        await journal.close()  # the batch ends: its lock is released
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err
    assert json.loads(out) == {
        "done": 2,
        "failed": 1,
        "unfinished": 0,
        "stages": {"done": 2, "uploaded": 1},
    }


async def test_status_watch_with_no_batch_running_says_so_and_ends(tmp_path: Path) -> None:
    path = tmp_path / "vidapi-journal.sqlite"
    journal = SQLiteJournal(path)
    await journal.save(JobRecord("a", Stage.DONE, video_id="x1"))
    await journal.close()
    code, out, err = await vidapi("--json", "status", "--journal", str(path), "--watch")
    assert code == 0, err
    assert "no batch is using this journal" in err
    assert json.loads(out)["done"] == 1


async def test_a_batch_starts_while_status_looks_at_its_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watcher's look at the lock (a shared lock held for an instant) never makes a
    batch starting at that instant refuse the journal: it tries again."""
    path = tmp_path / "vidapi-journal.sqlite"
    look = os.open(str(path) + ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(look, fcntl.LOCK_SH | fcntl.LOCK_NB)  # a look, caught in the middle
    refused: list[int] = []
    real_flock = fcntl.flock

    def flock(fd: int, operation: int) -> None:
        try:
            real_flock(fd, operation)
        except OSError:
            if fd != look and not refused:
                refused.append(operation)
                os.close(look)  # the look ends just after the batch's first try
            raise

    monkeypatch.setattr(journal_module.fcntl, "flock", flock)
    journal = SQLiteJournal(path)
    try:
        await journal.open()
        assert refused, "the batch never met the look"
        assert journal.in_use() is True  # held, by this batch
    finally:
        await journal.close()
    assert SQLiteJournal(path).in_use() is False


async def test_one_journal_under_two_names_is_still_one_batch_at_a_time(tmp_path: Path) -> None:
    """A symlink to a journal names the same journal: a second batch through it is
    refused, and ``in_use`` (``status --watch``) sees the first batch through it."""
    path = tmp_path / "j.sqlite"
    link = tmp_path / "link.sqlite"
    first = SQLiteJournal(path)
    await first.open()
    link.symlink_to(path.name)
    try:
        assert SQLiteJournal(link).in_use() is True
        second = SQLiteJournal(link)
        with pytest.raises(va.JournalError, match="another live process"):
            await second.open()
        await second.close()
    finally:
        await first.close()
    assert SQLiteJournal(link).in_use() is False


async def test_messages_off_a_terminal_are_never_wrapped(
    emulator: Emulator, tmp_path: Path
) -> None:
    """stderr into a log file or a pipe: each message is one line whatever its length
    (rich wrapped them at 80 columns, splitting a failed job's path and error across
    lines that a grep or a log shipper then reads as separate records)."""
    deep = tmp_path / ("a-rather-long-folder-name-" * 3) / "and-another-level-of-folders"
    deep.mkdir(parents=True)
    make_file(deep / "present.mp4", 20_000)
    manifest = tmp_path / "jobs.csv"
    missing = deep / ("a-missing-file-with-a-long-name-" * 2 + ".mp4")
    manifest.write_text(
        f"path,title,channel\n{deep / 'present.mp4'},One,news\n{missing},Two,news\n",
        encoding="utf-8",
    )
    code, _, err = await vidapi(
        "batch", str(manifest), "--journal", str(tmp_path / "j.sqlite"), env=env_for(emulator)
    )
    assert code == 6, err
    lines = err.splitlines()
    [failed] = [line for line in lines if line.startswith("failed ")]  # the summary's
    assert failed.startswith(f"failed {missing} at pending: ") and len(failed) > 80, err
    assert not [line for line in lines if "━" in line and "failed" in line], err  # no glue


async def test_a_title_with_colons_is_printed_as_written(
    emulator: Emulator, tmp_path: Path
) -> None:
    """The fresh user's look at issue 39: rich turned ``:thumbs_up:`` in a title and
    ``urn:x:2`` in a key into emoji on the terminal."""
    (tmp_path / "a.mp4").write_bytes(b"\0" * 64)
    manifest = tmp_path / "jobs.csv"
    manifest.write_text("key,path,title\nurn:x:2,a.mp4,before :thumbs_up: after\n")
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    code, out, err = await vidapi(
        "batch", str(manifest), "--channel", "news", "--journal",
        str(tmp_path / "j.sqlite"), "--dry-run", env=env,
    )  # fmt: skip
    assert code == 0, err
    assert "before :thumbs_up: after" in out and "urn:x:2" in out, out
