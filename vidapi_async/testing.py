"""A pytest plugin for users: the emulator and a ready client as fixtures.

Registered by entry point (``pytest11``), so installing vidapi-async makes these
fixtures available in any test suite that has pytest-asyncio::

    async def test_my_uploader(vidapi_client, tmp_path):
        video = await vidapi_client.upload_video(path, title="t", channel="news")

- ``vidapi_emulator``: a running :class:`~vidapi_async.emulator.Emulator`, fresh per test;
  its ``faults``, ``requests`` and ``videos()`` let a test inject failures and inspect
  what arrived.
- ``vidapi_client``: a :class:`~vidapi_async.Client` pointed at it with a token that has
  every scope.

Outside pytest, ``client_for(emulator, **client_options)`` builds that client (it trusts
the emulator's certificate when it serves https).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from ._client import Client
from .emulator import Emulator

__all__ = ["client_for", "vidapi_client", "vidapi_emulator"]


def client_for(emulator: Emulator, **options: Any) -> Client:
    """A ``Client`` for a running emulator: its base URL, the demo token (every scope)
    unless ``access_token=`` or ``auth=`` is given, and trust in its certificate."""
    if "auth" not in options:
        options.setdefault("access_token", emulator.token)
    if options.get("session") is None:
        options.setdefault("ssl", emulator.ssl_context())
    return Client(base_url=emulator.base_url, **options)


try:
    import pytest_asyncio
except ImportError:  # pragma: no cover - only without pytest-asyncio
    pytest_asyncio = None  # type: ignore[assignment]

if pytest_asyncio is not None:

    @pytest_asyncio.fixture
    async def vidapi_emulator() -> AsyncIterator[Emulator]:
        """A running emulator of the platform on 127.0.0.1."""
        async with Emulator() as emulator:
            yield emulator

    @pytest_asyncio.fixture
    async def vidapi_client(vidapi_emulator: Emulator) -> AsyncIterator[Client]:
        """A Client for ``vidapi_emulator`` with every scope."""
        async with client_for(vidapi_emulator) as client:
            yield client

else:  # pragma: no cover

    @pytest.fixture
    def vidapi_emulator() -> None:
        pytest.skip("the vidapi fixtures need pytest-asyncio: pip install pytest-asyncio")

    @pytest.fixture
    def vidapi_client() -> None:
        pytest.skip("the vidapi fixtures need pytest-asyncio: pip install pytest-asyncio")
