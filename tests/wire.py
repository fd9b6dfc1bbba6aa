"""A scripted HTTP/1.1 server on raw asyncio streams, for wire-truth tests.

It shares no code with the client or the emulator (no aiohttp, no yarl): it records each
request exactly as the bytes arrived (the raw request target included) and answers what
the test scripts, written the way hostile or slow servers write: in segments with
pauses, trickled, shorter than the declared Content-Length, or cut off mid-body.
Optionally over TLS (a certificate made with the ``openssl`` command).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import ssl
import subprocess
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Seen:
    """One request as it arrived."""

    method: str
    target: str
    """The request target byte for byte (path and query, escapes untouched)."""
    headers: dict[str, str]
    """Header names lowercased; a repeated header keeps its last value."""
    body: bytes
    conn: int = 0
    """Which connection it came on: 1 for the server's first, and so on."""

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]

    @property
    def raw_query(self) -> str:
        return self.target.partition("?")[2]


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    segment: int | None = None
    """Write the body this many bytes at a time, pausing ``pause`` seconds between."""
    pause: float = 0.0
    content_length: int | None = None
    """Declare this length instead of the body's own (a short body when larger)."""
    cut_after: int | None = None
    """Abort the connection after this many body bytes."""
    raw: bytes | None = None
    """Write exactly these bytes instead (status line and all), then close."""
    close: bool = False
    """Say ``Connection: close`` and close after the reply."""

    @classmethod
    def json(cls, data: Any, status: int = 200, **kw: Any) -> Reply:
        headers = {"Content-Type": "application/json", **kw.pop("headers", {})}
        return cls(status, json.dumps(data).encode(), headers, **kw)


Handler = Callable[[Seen], Awaitable[Reply] | Reply]


class WireServer:
    """``async with WireServer(handler) as srv``: ``srv.url``, ``srv.seen``."""

    def __init__(
        self,
        handler: Handler,
        *,
        tls: ssl.SSLContext | None = None,
        host: str = "127.0.0.1",
        hang_up_before_body: Callable[[int], bool] | None = None,
    ) -> None:
        self.handler = handler
        self.hang_up_before_body = hang_up_before_body
        """Called with each request's number (from 1) once its head is read: ``True``
        aborts the connection there, its body unread (the request is not in ``seen``)."""
        self.heads = 0
        self.host = host
        """A loopback address (any of 127.0.0.0/8 on Linux)."""
        self.seen: list[Seen] = []
        self._tls = tls
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.connections = 0
        """Connections accepted so far."""

    @property
    def url(self) -> str:
        assert self._server is not None
        port = self._server.sockets[0].getsockname()[1]
        return f"{'https' if self._tls else 'http'}://{self.host}:{port}"

    async def __aenter__(self) -> WireServer:
        self._server = await asyncio.start_server(self._serve, self.host, 0, ssl=self._tls)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for w in list(self._writers):
            w.transport.abort()
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        self.connections += 1
        conn = self.connections
        try:
            while True:
                seen = await _read_request(reader, self._hang_up)
                if seen is None:
                    return
                seen.conn = conn
                self.seen.append(seen)
                reply = self.handler(seen)
                if not isinstance(reply, Reply):
                    reply = await reply
                if not await _write_reply(writer, reply):
                    return
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            return
        finally:
            self._writers.discard(writer)
            writer.transport.abort()

    def _hang_up(self) -> bool:
        self.heads += 1
        return self.hang_up_before_body is not None and self.hang_up_before_body(self.heads)


async def _read_request(
    reader: asyncio.StreamReader, hang_up: Callable[[], bool] = lambda: False
) -> Seen | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    if hang_up():
        return None  # the caller aborts the connection: its body stays unread
    lines = head.decode("latin-1").split("\r\n")
    method, target, _version = lines[0].split(" ", 2)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    body = await reader.readexactly(length) if length else b""
    return Seen(method, target, headers, body)


async def _write_reply(writer: asyncio.StreamWriter, reply: Reply) -> bool:
    """Write the reply as scripted; whether the connection may carry another request."""
    if reply.raw is not None:
        writer.write(reply.raw)
        await writer.drain()
        writer.transport.abort()
        return False
    declared = len(reply.body) if reply.content_length is None else reply.content_length
    keep = reply.content_length is None and reply.cut_after is None and not reply.close
    head = [f"HTTP/1.1 {reply.status} X"]
    head += [f"{k}: {v}" for k, v in reply.headers.items()]
    head += [f"Content-Length: {declared}", f"Connection: {'keep-alive' if keep else 'close'}"]
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
    body = reply.body if reply.cut_after is None else reply.body[: reply.cut_after]
    step = reply.segment or max(1, len(body))
    for start in range(0, len(body), step):
        writer.write(body[start : start + step])
        await writer.drain()
        if reply.pause and start + step < len(body):
            await asyncio.sleep(reply.pause)
    await writer.drain()
    if not keep:
        if reply.cut_after is not None:
            writer.transport.abort()
        else:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()
    return keep


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate and key for 127.0.0.1, made with the openssl command."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    openssl = shutil.which("openssl")
    assert openssl is not None, "the openssl command is needed for TLS tests"
    subprocess.run(
        [
            openssl,
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key
