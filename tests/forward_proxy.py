"""A tiny forwarding HTTP proxy on 127.0.0.1, for tests of what goes through a proxy.

It shares no code with the client (raw asyncio streams, no aiohttp, no yarl): it takes
CONNECT tunnels and absolute-URI requests (``GET http://host:port/path``), records each
request's target as it arrived, and connects where its own table says a host is
(``hosts``: a name, or an address, to the ``(ip, port)`` it stands for), so that names
the machine cannot resolve (``*.invalid``) and public addresses can play servers on
loopback. A host not in the table is connected to as it is named. Each absolute-URI
request is forwarded with ``Connection: close`` (one request per connection).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field


@dataclass
class ForwardProxy:
    url: str
    hosts: dict[str, tuple[str, int]]
    targets: list[str] = field(default_factory=list)
    """Each request's target as it arrived (``host:port`` for a CONNECT)."""


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy ``reader`` to ``writer`` until its end, then close ``writer``."""
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


def _where(proxy: ForwardProxy, host: str, port: int) -> tuple[str, int]:
    return proxy.hosts.get(host.strip("[]"), (host, port))


async def _handle(
    proxy: ForwardProxy,
    tasks: set[asyncio.Task[None]],
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
) -> None:
    try:
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    except (asyncio.IncompleteReadError, ConnectionError):
        writer.close()
        return
    lines = head.split("\r\n")
    method, target, version = lines[0].split(" ", 2)
    proxy.targets.append(target)
    if method == "CONNECT":
        host, port = target.rsplit(":", 1)
        up_reader, up_writer = await asyncio.open_connection(*_where(proxy, host, int(port)))
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
    else:
        scheme, _, rest = target.partition("://")
        authority, slash, path = rest.partition("/")
        host, _, port_text = authority.rpartition(":") if ":" in authority else (authority, "", "")
        port = int(port_text) if port_text else (443 if scheme == "https" else 80)
        up_reader, up_writer = await asyncio.open_connection(*_where(proxy, host, port))
        kept = [
            line
            for line in lines[1:]
            if line and not line.lower().startswith(("connection:", "proxy-", "keep-alive"))
        ]
        request = [f"{method} {slash}{path} {version}", *kept, "Connection: close", "", ""]
        up_writer.write("\r\n".join(request).encode("latin-1"))
    await splice(tasks, reader, writer, up_reader, up_writer)


async def splice(
    tasks: set[asyncio.Task[None]],
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    up_reader: asyncio.StreamReader,
    up_writer: asyncio.StreamWriter,
) -> None:
    """Both ways between a client and its upstream until each side ends (the two copies
    kept in ``tasks``, for ``serving`` to cancel)."""
    both = [
        asyncio.ensure_future(pipe(reader, up_writer)),
        asyncio.ensure_future(pipe(up_reader, writer)),
    ]
    tasks.update(both)
    await asyncio.gather(*both)


Handle = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@contextlib.asynccontextmanager
async def serving(handle: Handle, tasks: set[asyncio.Task[None]]) -> AsyncIterator[str]:
    """``handle`` serving connections on 127.0.0.1: its ``http://`` address; at the end
    the server closed and ``tasks`` cancelled."""
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    finally:
        server.close()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.wait_closed()


@contextlib.asynccontextmanager
async def forward_proxy(hosts: dict[str, tuple[str, int]]) -> AsyncIterator[ForwardProxy]:
    """``async with forward_proxy({"feed.invalid": ("127.0.0.1", 8080)}) as proxy``:
    ``proxy.url`` (``http://127.0.0.1:PORT``), ``proxy.targets``."""
    tasks: set[asyncio.Task[None]] = set()
    proxy = ForwardProxy("", dict(hosts))

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _handle(proxy, tasks, reader, writer)

    async with serving(handle, tasks) as proxy.url:
        yield proxy
