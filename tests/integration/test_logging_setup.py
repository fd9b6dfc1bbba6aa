"""Logging as users set it up: ``vidapi -vv`` and ``VIDAPI_LOG``, the JSON format, the
observability guide's logging block run as written; silent by default, and no secret in
any line."""

from __future__ import annotations

import json
import logging
import sys
import textwrap
from pathlib import Path

import pytest

import vidapi_async as va
from tests.cli_run import vidapi, vidapi_process
from vidapi_async._observe import configure_logging

if sys.platform == "win32":  # pragma: no cover
    pytestmark = pytest.mark.skip("POSIX only")


def test_the_logger_tree_is_silent_by_default() -> None:
    root = logging.getLogger("vidapi_async")
    assert any(isinstance(h, logging.NullHandler) for h in root.handlers)


def test_json_log_format_writes_one_object_per_line(capsys: pytest.CaptureFixture[str]) -> None:
    root = logging.getLogger("vidapi_async")
    before, level = list(root.handlers), root.level
    configure_logging(0, "json")
    try:
        logging.getLogger("vidapi_async.worker").warning('job "%s" lost', "k1")
        try:
            raise va.ServerError("boom", status=500)
        except va.ServerError:
            logging.getLogger("vidapi_async.batch").exception("job failed")
    finally:
        for handler in root.handlers[len(before) :]:
            root.removeHandler(handler)
        root.setLevel(level)
    lines = capsys.readouterr().err.splitlines()
    first, second = (json.loads(line) for line in lines)
    assert first["logger"] == "vidapi_async.worker"
    assert first["level"] == "warning"
    assert first["message"] == 'job "k1" lost'
    assert first["time"].endswith("Z")
    assert second["error"].startswith("ServerError: boom")


async def test_cli_vv_logs_the_demo_on_stderr_without_a_secret() -> None:
    code, _, err = await vidapi_process("-vv", "demo", "--no-serve")  # demo handles signals
    assert code == 0, err
    http = [line for line in err.splitlines() if " vidapi_async.http: " in line]
    assert len(http) >= 5
    assert any(" vidapi_async.upload: " in line for line in err.splitlines())
    for line in err.splitlines():
        assert "demo-token" not in line and "demo-only-password" not in line
        assert "%2F" not in line and "%3D" not in line and "seal=" not in line


async def _me_unreachable(log_level: str) -> tuple[int, str]:
    """``vidapi api /me`` against a port nothing listens on, with ``VIDAPI_LOG``."""
    code, _, err = await vidapi(
        "--retries", "1", "--token", "tok-Secret-123", "--base-url", "http://127.0.0.1:9",
        "api", "/me", env={"VIDAPI_LOG": log_level},
    )  # fmt: skip
    assert code != 0
    assert "tok-Secret-123" not in err
    return code, err


async def test_vidapi_log_env_turns_debug_on() -> None:
    _, err = await _me_unreachable("debug")
    lines = [line for line in err.splitlines() if " vidapi_async.http: " in line]
    assert len(lines) == 1 and "GET http://127.0.0.1:9/me -> no answer" in lines[0]


async def test_an_unknown_vidapi_log_level_is_named_not_ignored() -> None:
    _, err = await _me_unreachable("verbose")
    assert "VIDAPI_LOG" in err and "'verbose'" in err and "debug, info or warning" in err, err


def test_the_docs_logging_setup_shows_the_retry_lines_and_no_token(tmp_path: Path) -> None:
    """The observability guide's logging block, run as written in a fresh process before a
    call that the emulator fails once: its retry line reaches stderr, the token never."""
    import subprocess

    from tests.integration.test_docs import doc_block

    script = tmp_path / "logs.py"
    script.write_text(
        doc_block("observe-logging")
        + textwrap.dedent(
            """
            import asyncio
            from vidapi_async.emulator import Emulator, Faults
            from vidapi_async.testing import client_for

            async def main() -> None:
                faults = Faults(error_rate=0.5, error_statuses=(503,), seed=1,
                                methods=("GET",), paths=("/video/",))
                async with Emulator(probe=False, faults=faults) as emu:
                    async with client_for(emu) as client:
                        video = await client.upload_video(
                            __file__, title="t", channel="news"
                        )
                        for _ in range(4):
                            await client.get_video(video.id)

            asyncio.run(main())
            """
        ),
        encoding="utf-8",
    )
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=True
    )
    assert "vidapi_async.retry" in out.stderr and " INFO " in out.stderr, out.stderr
    assert "demo-token" not in out.stderr
