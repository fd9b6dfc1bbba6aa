"""The unit lane's own rule (tests/unit/conftest.py): what would need a server or a
child process is refused here, so a test that does either cannot hide in this lane."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys

import pytest


def test_a_socket_cannot_be_bound_or_connected_in_the_unit_lane() -> None:
    with socket.socket() as sock:
        with pytest.raises(AssertionError, match="bind a socket"):
            sock.bind(("127.0.0.1", 0))
        with pytest.raises(AssertionError, match="connect a socket"):
            sock.connect(("127.0.0.1", 9))


def test_a_process_cannot_be_started_in_the_unit_lane() -> None:
    with pytest.raises(AssertionError, match="start a process"):
        subprocess.run([sys.executable, "-c", "pass"], check=False)


async def test_an_event_loop_still_runs_in_the_unit_lane() -> None:
    assert await asyncio.sleep(0, "ran") == "ran"
