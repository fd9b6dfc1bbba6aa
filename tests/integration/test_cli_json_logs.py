"""``vidapi worker --log-format json``: every line on stderr is one JSON object (``time``,
``level``, ``logger``, ``message``) whatever ends the worker: it runs dry, a signal stops
it, it is stopped while PostgreSQL is away, the API refuses its credentials, or a bad
setting or an unreachable database fails the command. The real command, in a subprocess,
against the shared test server (a fresh database per test) and the emulator. A usage
error found by the argument parser, before logging is set up, stays plain text (exit 2),
as the command's reference says."""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import socket
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.children import default_signals
from tests.cli_run import vidapi, vidapi_process
from tests.conftest import make_file
from tests.integration.test_shared_queue_faults import CutProxy, through, wait_for_request
from tests.system.test_shared_queue import (
    jobs_for,
    worker_cmd,
)
from vidapi_async.batch import SharedBatch
from vidapi_async.emulator import Emulator, Faults

psycopg = pytest.importorskip("psycopg")
pytest.importorskip("procrastinate")

if sys.platform == "win32":  # pragma: no cover
    pytestmark = pytest.mark.skip("POSIX only")

FIELDS = ("time", "level", "logger", "message")


def json_lines(err: str) -> list[dict[str, Any]]:
    """Every line of ``err`` as the object it must be (a line that is not one fails)."""
    lines = []
    for line in err.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            pytest.fail(f"not a JSON line on stderr: {line!r}\nall of it:\n{err[-3000:]}")
        assert isinstance(entry, dict), line
        for field in FIELDS:
            assert isinstance(entry.get(field), str) and entry[field], (field, line)
        assert entry["logger"].startswith("vidapi_async"), line
        assert entry["time"].endswith("Z"), line
        lines.append(entry)
    assert lines, "the command said nothing"
    return lines


async def start_worker(cmd: list[str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *cmd,
        "--log-format",
        "json",
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        preexec_fn=default_signals,
    )


async def finish(proc: asyncio.subprocess.Process, timeout: float = 60) -> str:
    try:
        # a guard against a hang, not a timing
        _, err = await asyncio.wait_for(proc.communicate(), timeout)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    return err.decode()


async def worker_until_empty(
    tmp_path: Path, where: str, count: int, token: str | None = None
) -> tuple[int, str]:
    """``count`` jobs enqueued, then ``vidapi worker --until-empty`` (with ``token``
    instead of the emulator's): its exit code and stderr."""
    files = [make_file(tmp_path / f"e{i}.mp4", 3000 + i) for i in range(count)]
    async with Emulator(probe=False) as emu:
        async with SharedBatch(where) as shared:
            await shared.enqueue(jobs_for(files))
        cmd = worker_cmd(emu, where, "--until-empty")
        if token is not None:
            cmd[cmd.index("--token") + 1] = token
        proc = await start_worker(cmd)
        err = await finish(proc, 120)
    assert proc.returncode is not None
    return proc.returncode, err


@pytest.mark.system
async def test_a_worker_that_runs_dry_writes_only_json_lines(
    tmp_path: Path,
    dsn: str,
) -> None:
    code, err = await worker_until_empty(tmp_path, dsn, 3)
    assert code == 0, err[-2000:]
    lines = json_lines(err)
    assert lines[-1]["logger"] == "vidapi_async.worker"
    assert lines[-1]["message"].startswith("this worker: 3 done, 0 failed")


@pytest.mark.system
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
@pytest.mark.usefixtures("parent_ignores_signals")
async def test_a_worker_stopped_by_a_signal_writes_only_json_lines(
    tmp_path: Path,
    dsn: str,
    sig: signal.Signals,
) -> None:
    files = [make_file(tmp_path / f"s{i}.mp4", 30_000 + i) for i in range(6)]
    async with Emulator(probe=False, faults=Faults(latency=0.1)) as emu:
        async with SharedBatch(dsn) as shared:
            await shared.enqueue(jobs_for(files))
        proc = await start_worker(worker_cmd(emu, dsn))
        await asyncio.wait_for(wait_for_request(emu, "upload", "POST", "/upload"), 60)
        proc.send_signal(sig)
        err = await finish(proc)
    assert proc.returncode == 0, err[-2000:]
    lines = json_lines(err)
    assert lines[-1]["message"].startswith("this worker: "), lines[-1]


@pytest.mark.system
@pytest.mark.usefixtures("parent_ignores_signals")
async def test_a_worker_stopped_while_the_database_is_away_writes_only_json_lines(
    tmp_path: Path,
    dsn: str,
) -> None:
    from psycopg.conninfo import conninfo_to_dict

    files = [make_file(tmp_path / f"a{i}.mp4", 50_000 + i) for i in range(4)]
    parts = conninfo_to_dict(dsn)
    async with (
        Emulator(probe=False, faults=Faults(latency=0.2)) as emu,
        CutProxy(str(parts.get("host", "127.0.0.1")), int(parts.get("port", 5432))) as proxy,
    ):
        cut_dsn = through(dsn, proxy.port)
        async with SharedBatch(cut_dsn) as shared:
            await shared.enqueue(jobs_for(files))
        proc = await start_worker(worker_cmd(emu, cut_dsn))
        try:
            await asyncio.wait_for(wait_for_request(emu, "upload", "POST", "/upload"), 60)
        finally:
            proxy.cut()
        proc.send_signal(signal.SIGTERM)
        err = await finish(proc)
    assert proc.returncode == 0, err[-3000:]
    lines = json_lines(err)
    [stop] = [x for x in lines if "left to be taken over" in x["message"]]
    assert stop["logger"] == "vidapi_async.worker"
    assert stop["level"] == "warning"
    assert stop["message"].startswith("stopped; ")
    assert "Traceback" not in err


@pytest.mark.system
async def test_a_worker_whose_credentials_are_refused_writes_only_json_lines(
    tmp_path: Path,
    dsn: str,
) -> None:
    code, err = await worker_until_empty(tmp_path, dsn, 2, token="wrong-token-hunter2")
    assert code == 3, err[-2000:]
    lines = json_lines(err)
    assert "wrong-token-hunter2" not in err
    last = lines[-1]
    assert (last["logger"], last["level"]) == ("vidapi_async.cli", "error"), last
    assert last["message"].startswith("vidapi: InvalidTokenError: "), last
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("case", "code", "error"),
    [
        ("retries", 2, "InvalidArgumentError"),
        ("no-database", 1, "JournalError"),
        ("metrics-port-in-use", 2, "InvalidArgumentError"),
    ],
)
async def test_a_failing_worker_command_writes_its_error_as_json(
    case: str, code: int, error: str
) -> None:
    """Errors found after logging is set up: a setting refused, a database that cannot
    be reached, a metrics port taken."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        journal = "postgresql://postgres@127.0.0.1:5432/test"
        extra: list[str] = []
        if case == "retries":
            extra = ["--retries", "0"]
        elif case == "no-database":  # (a server that is away is waited for: issue 29)
            journal = "postgresql://postgres@127.0.0.1:5432/no_such_database_here"
        else:  # the port is claimed before the database is opened (or waited for)
            journal = "postgresql://postgres@127.0.0.1:1/test"
            extra = ["--metrics-port", str(taken.getsockname()[1])]
        # a process: the worker handles SIGTERM and SIGINT once its database is open
        got, _, err = await vidapi_process(
            "--token",
            "t",
            "--base-url",
            "http://127.0.0.1:9",
            "worker",
            "--journal",
            journal,
            "--log-format",
            "json",
            *extra,
        )
    assert got == code, err
    lines = json_lines(err)
    last = lines[-1]
    assert (last["logger"], last["level"]) == ("vidapi_async.cli", "error"), last
    assert last["message"].startswith(f"vidapi: {error}: "), last


async def test_a_usage_error_stays_plain_text_before_logging_is_set_up() -> None:
    code, _, err = await vidapi("worker", "--journal", "x", "--log-format", "json", "--bogus")
    assert code == 2
    assert err.startswith("usage: ")


@pytest.fixture
def cli_logging() -> Any:
    """``main`` run in this process sets up the CLI's handlers: taken away after."""
    from vidapi_async._observe import DB_LOGGERS

    names = ["vidapi_async", *DB_LOGGERS, "py.warnings"]
    loggers = [logging.getLogger(), *map(logging.getLogger, names)]
    kept = [(lg, list(lg.handlers), lg.level) for lg in loggers]
    yield
    for lg, handlers, level in kept:
        for handler in [h for h in lg.handlers if h not in handlers]:
            lg.removeHandler(handler)
        lg.setLevel(level)
    logging.captureWarnings(False)


WORKER_JSON = ["--token", "t", "worker", "--journal", "postgresql://h/db", "--log-format", "json"]


def test_an_unexpected_error_is_one_json_line_with_its_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], cli_logging: None
) -> None:
    """A bug (no error of ours) in JSON mode: one object, its traceback a field, exit 1;
    in text mode Python's own traceback, as before."""
    from vidapi_async.cli import _main

    async def broken(*args: object) -> int:
        raise RuntimeError("a bug")

    monkeypatch.setattr(_main, "_run", broken)
    assert _main.main(WORKER_JSON) == 1
    [line] = json_lines(capsys.readouterr().err)
    assert (line["logger"], line["level"]) == ("vidapi_async.cli", "critical"), line
    assert line["error"] == "RuntimeError: a bug"
    assert 'raise RuntimeError("a bug")' in line["traceback"]
    with pytest.raises(RuntimeError, match="a bug"):
        _main.main(["--token", "t", "video", "x1"])


def test_ctrl_c_before_the_work_starts_is_one_json_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], cli_logging: None
) -> None:
    """Ctrl-C while the worker still connects (its own handler is not set yet): Python's
    KeyboardInterrupt, said as one JSON line, exit 130."""
    from vidapi_async.cli import _main

    async def interrupted(*args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(_main, "_run", interrupted)
    assert _main.main(WORKER_JSON) == 130
    [line] = json_lines(capsys.readouterr().err)
    assert (line["logger"], line["message"]) == ("vidapi_async.cli", "stopped"), line


_OTHERS = """
import logging, sys, warnings
from vidapi_async._observe import configure_logging
configure_logging(int(sys.argv[1]), "json")
logging.getLogger("procrastinate.worker").info("job 1 started")  # below WARNING: dropped
try:
    raise ValueError("boom")
except ValueError:
    logging.getLogger("procrastinate.worker").exception("job 1 failed for good")
logging.getLogger("asyncio").error("Task exception was never retrieved")
warnings.warn("old call", DeprecationWarning, stacklevel=1)
logging.getLogger("psycopg.pool").warning("error connecting: hunter2secret")
logging.getLogger("vidapi_async.worker").warning("the database x is away")
"""


@pytest.mark.parametrize("verbosity", [0, 2])
async def test_other_libraries_lines_and_python_warnings_are_json_too(
    tmp_path: Path, verbosity: int
) -> None:
    """What Python's last-resort handler would print as text (the queue's errors,
    asyncio's, a warning shown): JSON lines like ours, ours once each; the database
    driver's reconnect noise still only at debug."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-W",
        "always::DeprecationWarning",
        "-c",
        _OTHERS,
        str(verbosity),
        cwd=tmp_path,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    err = await finish(proc)
    assert proc.returncode == 0, err
    lines = [json.loads(line) for line in err.splitlines()]  # every line JSON
    by_logger = {x["logger"]: x for x in lines}
    expected = {"procrastinate.worker", "asyncio", "py.warnings", "vidapi_async.worker"}
    if verbosity >= 2:
        expected.add("psycopg.pool")
    assert set(by_logger) == expected, lines
    assert len(lines) == len(expected)  # none twice
    failed = by_logger["procrastinate.worker"]
    assert (failed["level"], failed["error"]) == ("error", "ValueError: boom")
    assert "Traceback" in failed["traceback"]
    assert "DeprecationWarning: old call" in by_logger["py.warnings"]["message"]
    for line in lines:
        assert set(FIELDS) <= set(line)
        assert line["time"].endswith("Z")
