"""The ``vidapi`` command run by tests: in this process (``vidapi``, the everyday way:
about 0.35 s of start saved per run) or as a user runs it (``vidapi_process``, a child
``python -m vidapi_async.cli``).

``vidapi`` calls ``vidapi_async.cli.main(argv)`` in a thread of its own (the command runs
its own event loop; the test's, with the emulator, keeps serving) with what a child would
have had: the environment given over this process's, the working folder, standard input
(not a terminal), standard output and error captured as bytes and decoded as a child's
pipes are. Whatever the command sets process-wide is put back after it, so a run leaks
nothing into the next test: the environment, the working folder, ``sys.std*``, the
logging handlers and levels it configured, ``logging.captureWarnings``, the S3 SDK's
session (built from the environment of the first run). A thread it started and left
running fails the test, as a warning does (``filterwarnings = error`` applies in this
process: an unclosed session or file the command leaks fails the test; a child never
showed them).

Use ``vidapi_process`` where the process is the point: a signal or a kill, a closed pipe,
a terminal, ``vidapi serve``, ``demo`` and a running ``worker`` (they handle signals,
which only a process's main thread can), two commands at once, start-up, what a user
types first."""

from __future__ import annotations

import asyncio
import functools
import io
import logging
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

__all__ = [
    "closed_pipe_run",
    "run_in_process",
    "start_serve",
    "upload_argv",
    "vidapi",
    "vidapi_process",
]

TIMEOUT = 120.0
"""Seconds a run may take (a child is waited for as long)."""

_one_at_a_time = threading.Lock()
"""One in-process run at a time: the environment, the folder and ``sys.std*`` are the
process's. A test that needs two at once runs them with ``vidapi_process``."""

CLI_LOGGERS = ("vidapi_async", "psycopg", "psycopg_pool", "")
"""The loggers ``configure_logging`` gives a handler and a level (``""``: the root)."""


async def vidapi(
    *args: str,
    env: dict[str, str] | None = None,
    stdin: bytes = b"",
    cwd: Path | None = None,
    whole_env: bool = False,
) -> tuple[int, str, str]:
    """``vidapi ARGS`` in this process: its exit code, standard output and error. ``env``
    goes over this process's environment, or is the whole of it with ``whole_env``."""
    test_thread = threading.get_ident()  # the event loop's, the emulator's
    run = functools.partial(run_in_process, whole_env=whole_env, test_thread=test_thread)
    return await asyncio.wait_for(
        asyncio.to_thread(run, list(args), env or {}, stdin, cwd), TIMEOUT
    )


async def vidapi_process(
    *args: str, env: dict[str, str] | None = None, stdin: bytes = b"", cwd: Path | None = None
) -> tuple[int, str, str]:
    """``python -m vidapi_async.cli ARGS`` in a child: its exit code, standard output
    and error."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "vidapi_async.cli",
        *args,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(stdin), TIMEOUT)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


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


async def start_serve(*args: str) -> tuple[asyncio.subprocess.Process, str]:
    """``vidapi serve ARGS`` in a subprocess, and its banner once it is listening."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "vidapi_async.cli",
        "serve",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    assert proc.stdout is not None
    banner = ""
    while "Ctrl-C" not in banner:
        line = await asyncio.wait_for(proc.stdout.readline(), 60)
        assert line, f"vidapi serve exited early: {banner}"
        banner += line.decode()
    return proc, banner


def upload_argv(src: Path, srt: Path) -> list[str]:
    """``vidapi upload`` of ``src`` titled Clip, with a French subtitle and a password."""
    args = ["upload", str(src), "--title", "Clip", "--channel", "news"]
    return [*args, "--subtitle", f"fr={srt}", "--password"]


def run_in_process(
    argv: list[str],
    env: dict[str, str],
    stdin: bytes = b"",
    cwd: Path | None = None,
    *,
    whole_env: bool = False,
    test_thread: int | None = None,
) -> tuple[int, str, str]:
    """``vidapi_async.cli.main(argv)`` in this thread, isolated as described above;
    what ``test_thread`` (the test's event loop) writes to ``sys.std*`` meanwhile is not
    the command's."""
    if not _one_at_a_time.acquire(blocking=False):
        raise RuntimeError("two in-process vidapi runs at once: use vidapi_process")
    try:
        from vidapi_async.cli import main

        threads = set(threading.enumerate())
        with _isolated(env, whole_env, stdin, cwd, test_thread) as (out, err):
            try:
                code = main(argv)
            except SystemExit as exit_:  # argparse: --help, a usage error
                code = _exit_status(exit_.code, err)
            out.flush()
            err.flush()
        _no_thread_left(threads)
        return code, _text(out), _text(err)
    finally:
        _one_at_a_time.release()


def _exit_status(code: Any, err: TextIO) -> int:
    """What ``sys.exit(code)`` makes a process exit with."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=err)
    return 1


def _text(stream: io.TextIOWrapper) -> str:
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue().decode()


def _no_thread_left(before: set[threading.Thread]) -> None:
    """A thread the command started is over once it returns (the journal's writer, a
    pool of its own): one still running after a grace period is a leak. The default
    executors' threads (``asyncio_N``) are left out: the command's loop joins its own
    (``asyncio.run``), and the test's loop, serving the emulator meanwhile, adds to its."""
    for thread in set(threading.enumerate()) - before:
        if thread.name.startswith("asyncio_"):
            continue
        thread.join(5)
        assert not thread.is_alive(), f"the command left a thread running: {thread!r}"


@contextmanager
def _isolated(
    env: dict[str, str], whole_env: bool, stdin: bytes, cwd: Path | None, test_thread: int | None
) -> Iterator[tuple[io.TextIOWrapper, io.TextIOWrapper]]:
    """The process's state as a child would see it, put back afterwards."""
    # a child's pipes: UTF-8 (this machine's locale), strict on stdout, backslashreplace
    # on stderr, as Python sets them up
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict", write_through=True)
    err = io.TextIOWrapper(
        io.BytesIO(), encoding="utf-8", errors="backslashreplace", write_through=True
    )
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    loggers = [logging.getLogger(name) for name in CLI_LOGGERS]
    saved_logging = [(lg, list(lg.handlers), lg.level) for lg in loggers]
    warnings_captured = logging._warnings_showwarning is not None  # type: ignore[attr-defined]
    s3 = sys.modules.get("vidapi_async._s3")
    saved_s3 = s3._SESSION if s3 is not None else None
    if s3 is not None:
        s3._SESSION = None  # type: ignore[attr-defined]  # a child builds its own
    if whole_env:
        os.environ.clear()
    os.environ.update(env)
    try:
        if cwd is not None:
            os.chdir(cwd)
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
        # the command's writes, from its threads; the test's thread's (such as the
        # emulator's log lines) go where they went
        sys.stdout = _ByThread(test_thread, out, saved_streams[1])
        sys.stderr = _ByThread(test_thread, err, saved_streams[2])
        yield out, err
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        for lg, handlers, level in saved_logging:
            for handler in [h for h in lg.handlers if h not in handlers]:
                lg.removeHandler(handler)
                handler.close()
            lg.setLevel(level)
        logging.captureWarnings(warnings_captured)
        s3 = sys.modules.get("vidapi_async._s3")
        if s3 is not None:
            s3._SESSION = saved_s3  # type: ignore[attr-defined]


class _ByThread:
    """A standard stream that is the command's capture for every thread but the test's
    (the event loop that called ``vidapi``, with the emulator)."""

    def __init__(self, test_thread: int | None, capture: TextIO, test: TextIO) -> None:
        self._test_thread = test_thread
        self._capture = capture
        self._test = test

    def _stream(self) -> TextIO:
        return self._test if threading.get_ident() == self._test_thread else self._capture

    def write(self, text: str) -> int:
        return self._stream().write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream(), name)
