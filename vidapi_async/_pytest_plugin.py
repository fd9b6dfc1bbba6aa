"""The pytest plugin users get by installing vidapi-async: the emulator and a ready
client as fixtures. Loaded by its ``pytest11`` entry point only (nothing imports it), so
that the library and ``vidapi_async.testing`` import without pytest.

The fixtures are async: they need pytest-asyncio, and an async test must be marked as
one unless the project sets ``asyncio_mode = "auto"``::

    import pytest

    @pytest.mark.asyncio  # not needed with asyncio_mode = "auto"
    async def test_my_uploader(vidapi_client, vidapi_emulator, tmp_path):
        path = tmp_path / "clip.mp4"
        path.write_bytes(b"...")
        video = await vidapi_client.upload_video(path, title="t", channel="news")
        assert [v["id"] for v in vidapi_emulator.videos()] == [video.id]

- ``vidapi_emulator``: a running ``Emulator``, fresh per test;
  its ``faults``, ``requests`` and ``videos()`` let a test inject failures and inspect
  what arrived.
- ``vidapi_client``: a ``Client`` pointed at it with a token that has
  every scope (``vidapi_async.testing.client_for``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from ._client import Client
from .emulator import Emulator
from .testing import client_for

__all__ = ["vidapi_client", "vidapi_emulator"]

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
