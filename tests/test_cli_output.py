"""A fresh user's second review of the vidapi command: where its output goes, a pipe
closed early, and flags that would do something other than what they say."""

from __future__ import annotations

import asyncio
import io
import os
import sys
from pathlib import Path

from vidapi_async.cli._exit import EXIT_BROKEN_PIPE, EXIT_OTHER, EXIT_USAGE
from vidapi_async.emulator import Emulator

from .conftest import make_file
from .test_cli import vidapi
from .test_cli_review import env_for, uploads


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


async def closed_pipe_run(*args: str, env: dict[str, str]) -> tuple[int, str]:
    """``vidapi ARGS | head`` where head has already gone: stdout's reader is closed."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "vidapi_async.cli",
            *args,
            env={**os.environ, **env},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=write_end,
            stderr=asyncio.subprocess.PIPE,
        )
    finally:
        os.close(write_end)
    _, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode is not None
    return proc.returncode, err.decode()


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

    from vidapi_async.cli._shared import WorkerView

    stream = io.StringIO()
    view = WorkerView(Console(file=stream, width=80))
    line = view.totals({"done": 12345, "failed": 678, "queued": 90123})
    assert len(line) > 80
    view.say(line)
    assert stream.getvalue() == line + "\n"
