"""The unit lane: in process, no server, no child process (``python -m pytest
tests/unit`` runs in seconds). A test here that binds or connects a socket or starts a
process fails, naming what it did: such a test belongs in ``tests/integration``."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Callable
from typing import Any, NoReturn

import pytest


def _refused(what: str) -> Callable[..., NoReturn]:
    def refuse(*_: Any, **__: Any) -> NoReturn:
        raise AssertionError(f"a unit test may not {what}: it belongs in tests/integration")

    return refuse


@pytest.fixture(autouse=True)
def _in_process_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket.socket, "bind", _refused("bind a socket"))
    monkeypatch.setattr(socket.socket, "connect", _refused("connect a socket"))
    monkeypatch.setattr(socket.socket, "connect_ex", _refused("connect a socket"))
    monkeypatch.setattr(subprocess.Popen, "__init__", _refused("start a process"))
