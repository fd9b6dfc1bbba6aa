"""``Timeouts.api_read``, the bound on a silent server, on the client's own connections.

The client's connector keeps it with one lazily re-armed timer per connection
(``_aio/_compat.py``) instead of aiohttp's timer per read: these tests hold that the bound
is the same. Real sockets on 127.0.0.1; a server scripted per test: silent, trickling, or
answering at once. No timing is asserted beyond "it ends" (``wait_for`` with a generous
bound fails a test whose timeout never comes).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import aiohttp
import pytest

import vidapi_async as va

VIDEO = json.dumps({"id": "x1", "title": "t"}).encode()
HEAD = (
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
    f"Content-Length: {len(VIDEO)}\r\nConnection: keep-alive\r\n\r\n"
).encode()

Script = Callable[[asyncio.StreamWriter, asyncio.Event], Awaitable[None]]
"""How the server answers one request (``release``: set when the test ends)."""


class Server:
    def __init__(self, script: Script) -> None:
        self.script = script
        self.connections = 0
        self.requests = 0
        self.release = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            while True:
                try:
                    await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                self.requests += 1
                await self.script(writer, self.release)
                if self.release.is_set():
                    return
        except ConnectionError:
            return
        finally:
            self._tasks.discard(task)
            writer.transport.abort()


@asynccontextmanager
async def serving(script: Script) -> AsyncIterator[tuple[Server, str]]:
    srv = Server(script)
    server = await asyncio.start_server(srv.serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield srv, f"http://127.0.0.1:{port}"
    finally:
        srv.release.set()
        server.close()
        await server.wait_closed()
        for _ in range(100):  # the scripts end once released
            if not srv._tasks:
                break
            await asyncio.sleep(0.01)
        assert not srv._tasks


async def at_once(writer: asyncio.StreamWriter, release: asyncio.Event) -> None:
    writer.write(HEAD + VIDEO)
    await writer.drain()


async def silent(writer: asyncio.StreamWriter, release: asyncio.Event) -> None:
    await release.wait()


async def head_then_silent(writer: asyncio.StreamWriter, release: asyncio.Event) -> None:
    writer.write(HEAD + VIDEO[:3])
    await writer.drain()
    await release.wait()


def trickle(pause: float, pieces: int, then_silent: bool = False) -> Script:
    """The head, then the body a byte at a time every ``pause`` seconds (``pieces``
    bytes), then the rest at once, or nothing more (``then_silent``)."""

    async def script(writer: asyncio.StreamWriter, release: asyncio.Event) -> None:
        writer.write(HEAD)
        await writer.drain()
        for i in range(pieces):
            await asyncio.sleep(pause)
            writer.write(VIDEO[i : i + 1])
            await writer.drain()
        if then_silent:
            await release.wait()
            return
        writer.write(VIDEO[pieces:])
        await writer.drain()

    return script


def client(url: str, api_read: float) -> va.Client:
    return va.Client(
        "t",
        base_url=url,
        retry=va.NO_RETRY,
        timeouts=va.Timeouts(api_read=api_read, api_total=None),
    )


@pytest.mark.parametrize(
    "script",
    [silent, head_then_silent, trickle(0.1, 3, then_silent=True)],
    ids=["no-answer", "head-then-silence", "trickle-then-silence"],
)
async def test_a_silent_server_times_out_with_the_typed_error(script: Script) -> None:
    async with serving(script) as (srv, url), client(url, api_read=0.4) as c:
        with pytest.raises(va.RequestTimeoutError) as info:
            await asyncio.wait_for(c.get_video("x1"), 20)
    assert srv.requests == 1
    assert info.value.__cause__ is None and info.value.__context__ is None


async def test_a_slow_but_steady_answer_does_not_time_out() -> None:
    # a byte every quarter of api_read, for about twice api_read in all
    async with serving(trickle(0.25, 8)) as (_srv, url), client(url, api_read=1.0) as c:
        video = await asyncio.wait_for(c.get_video("x1"), 30)
    assert video.id == "x1"


async def test_a_shorter_api_read_on_a_kept_connection_is_kept() -> None:
    """A connection used with a long api_read, then reused with a short one: the short
    bound holds (the connection's timer must not sleep until the long one's end)."""
    answers = [at_once, silent]

    async def script(writer: asyncio.StreamWriter, release: asyncio.Event) -> None:
        await answers.pop(0)(writer, release)

    async with serving(script) as (srv, url), client(url, api_read=3600.0) as c:
        assert (await c.get_video("x1")).id == "x1"
        c.timeouts = va.Timeouts(api_read=0.3, api_total=None)
        with pytest.raises(va.RequestTimeoutError):
            await asyncio.wait_for(c.get_video("x1"), 20)
    assert srv.connections == 1 and srv.requests == 2


async def test_kept_alive_connections_are_reused_across_many_calls() -> None:
    async with serving(at_once) as (srv, url), client(url, api_read=0.5) as c:
        for _ in range(3):
            videos = await asyncio.gather(*(c.get_video("x1") for _ in range(40)))
            assert {v.id for v in videos} == {"x1"}
            await asyncio.sleep(0.6)  # past api_read while idle: no timeout on a kept one
        assert (await c.get_video("x1")).id == "x1"
    assert srv.requests == 121
    assert srv.connections <= 40


async def test_a_callers_session_keeps_aiohttps_own_timer() -> None:
    """The lazy timer is installed on the client's own connector only."""
    from aiohttp import client_proto

    async with serving(at_once) as (_srv, url), aiohttp.ClientSession() as session:
        c = va.Client("t", base_url=url, session=session)
        assert (await c.get_video("x1")).id == "x1"
        await c.close()
        factory = session.connector._factory  # type: ignore[union-attr]
        assert factory.func is client_proto.ResponseHandler
