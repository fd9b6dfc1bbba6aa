"""Raw HTTP/1 exchanges for the endpoint tests: bytes written on a socket, the answer
read up to the server's close (no HTTP client, no code shared with the servers), and an
``aiohttp.web`` handler served on a free port."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from aiohttp import web

SAFETY = 20.0  # a hung exchange fails after this; never what a test measures


async def exchange(port: int, data: bytes) -> bytes:
    """Send ``data``, read until the server closes."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(data)
        await writer.drain()
        return await asyncio.wait_for(reader.read(), SAFETY)
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


@contextlib.asynccontextmanager
async def serving(handler: Any, path: str = "/hooks") -> AsyncIterator[int]:
    """``handler`` taking POSTs at ``path`` on 127.0.0.1; yields the port."""
    app = web.Application()
    app.router.add_post(path, handler)
    # After an early answer (a 408 to a body that stopped short), aiohttp keeps reading
    # what the peer may still send for lingering_time (10 s) before it closes; the
    # exchanges here read up to the close, so that wait would be the test's length.
    runner = web.AppRunner(app, lingering_time=0.2)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield runner.addresses[0][1]
    finally:
        await runner.cleanup()
