"""A small upload sent from the event loop: its file read whole in one trip to one of
the pump's reader threads, then the request sent and its answer read on the loop (issue
43).

Why: a batch of small files spent 1.8x the lean client's CPU time a pipeline with every
upload in the pump (``_pump``): sixteen threads each doing a whole HTTP exchange under
the GIL beside a busy loop, every system call a chance to wait for the GIL on the way
back. Here the thread only reads the file (as a lean client's ``to_thread`` does) and
the loop does the rest, on a non-blocking socket, with no copy of the body in Python
(``sendmsg`` of the head, the file's bytes and the tail).

Only for what the loop can do cheaply and the pump's promises still hold: plain HTTP
(over TLS the loop would encrypt), no proxy, no bandwidth cap, a file (not a one-pass
stream) of at most ``WHOLE_BODY`` bytes and no more than the upload's ``read_size``
(the pump would report progress once for it too), a request of its own (not a chunked
upload's kept ``Connection``). The same promises as the pump's, each tested on this
path (``tests/integration/test_upload_whole.py``): the target byte for byte, an exact
Content-Length, the answer framed by the same strict reader and capped, whole within
``answer_within`` of the last byte sent and never idle past ``idle_timeout``; the
connection kept for the next upload to the origin (the pump's ``IdleConnections``,
shared) as the server's ``Keep-Alive`` allows, and one it dropped before the request
went whole replaced at once; a progress callback run before the body's last bytes, so
that its error stops the body before it is whole; a cancel closes the socket.

Two differences in degree, both from the body's size: a kept connection the server drops
just as the request goes is replaced at once only if the send itself fails, and a small
body usually fits the socket's buffer whole, so the drop shows as the answer's failure
(``ConnectionLostError``: the request may have been read); the pump's threads fare the
same with a small body. And ``idle_timeout`` bounds each ``_send`` as a whole (the pump's,
each blocking send): at most ``WHOLE_BODY`` bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from .. import _errors as e
from .. import _protocol as wire
from .._protocol import url_for_humans
from ._pump import (
    MAX_ANSWER_BYTES,
    FileRegion,
    UploadPump,
    failure_detail,
    idle_for,
    read_whole,
    request_framer,
    split_url,
)
from ._response import RawResponse

__all__ = ["WHOLE_BODY", "send_whole"]

WHOLE_BODY = 256 * 1024
"""The largest file region sent from the loop; 16 uploads at once hold 4 MiB."""

_RECEIVE = 256 * 1024


class _Stale(Exception):
    """A kept connection failed before the request went whole and before any byte of
    the answer: the server dropped it (its keep-alive timeout) and cannot have acted on
    a request it did not read whole; it goes again on a new connection."""


class _Callback(Exception):
    """The progress callback raised ``error``."""

    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error


async def send_whole(
    pump: UploadPump,
    method: str,
    url: str,
    headers: Mapping[str, str],
    region: FileRegion,
    *,
    connect_timeout: float | None,
    idle_timeout: float | None,
    answer_within: float | None,
    progress: Callable[[int, int], None] | None = None,
) -> RawResponse:
    """Send one request whose body is ``region`` (small, on plain HTTP, no proxy); the
    whole answer."""
    scheme, host, port, target = split_url(url)
    shown = url_for_humans(url)
    key = (scheme, host, port)
    try:
        framer = request_framer(method, host, port, target, headers, region.size, keep_alive=True)
    except wire.UnsendableRequest as exc:
        raise e.InvalidRequestError(f"{method} {shown}: {exc}") from None
    data = await pump.in_thread(lambda: read_whole(region))
    if pump.closed:  # closed while the file was read: nothing goes out
        raise e.ClientClosedError("the Client was closed while this upload ran")
    exchange = _Exchange(pump, method, shown, region, data, idle_timeout, answer_within, progress)
    async with pump.loop_slots:  # no more at once than the pump's threads
        kept = pump.idle.take(key)
        if kept is not None:
            with contextlib.suppress(_Stale):  # dropped while the request went: anew
                return await exchange.run(kept, key, framer, again=True)
            framer = request_framer(
                method, host, port, target, headers, region.size, keep_alive=True
            )
        sock = await _connect(host, port, connect_timeout, method, shown)
        return await exchange.run(sock, key, framer, again=False)


@attrs.define
class _Exchange:
    """One request on the loop, on a kept or a new connection."""

    pump: UploadPump
    method: str
    shown: str
    region: FileRegion
    data: bytes
    idle_timeout: float | None
    answer_within: float | None
    progress: Callable[[int, int], None] | None

    async def run(
        self,
        sock: socket.socket,
        key: tuple[str, str, int],
        framer: wire.AnswerFramer,
        *,
        again: bool,
    ) -> RawResponse:
        """The request on ``sock`` and its whole answer; ``again``: a kept connection,
        which raises ``_Stale`` if it fails before the request went whole and before any
        byte of the answer."""
        pump = self.pump
        loop = asyncio.get_running_loop()
        keep = False
        sent = False
        idle = 0.0
        pump.on_loop.add(sock)
        try:
            if pump.closed:  # closed while the connection was made: nothing goes out
                raise e.ClientClosedError("the Client was closed while this upload ran")
            sock.setblocking(False)
            region = self.region
            try:
                async with asyncio.timeout(None) as limit:
                    parts = [framer.request_head() + region.head, self.data, region.tail]
                    if self.progress is not None and region.length:
                        # The callback before the tail: its error stops the body short.
                        await self._send(loop, sock, parts[:2], limit)
                        try:
                            self.progress(region.length, region.length)
                        except Exception as exc:  # the caller's own: raised as it is
                            raise _Callback(exc) from None
                        parts = parts[2:]
                    await self._send(loop, sock, parts, limit)
                    framer.body_sent(region.size)
                    sent = True
                    answer = await self._receive(loop, sock, framer, limit)
            except _Callback as stop:
                raise stop.error from None
            except TimeoutError:
                raise e.RequestTimeoutError(
                    "timed out", method=self.method, url=self.shown
                ) from None
            except wire.AnswerTooLarge:
                raise e.UnexpectedResponseError(
                    f"{self.method} {self.shown}: response larger than {MAX_ANSWER_BYTES} bytes",
                    status=None,
                ) from None
            except (OSError, wire.BrokenAnswer) as exc:
                if pump.closed:
                    raise e.ClientClosedError(
                        "the Client was closed while this upload ran"
                    ) from None
                if again and not sent:  # (no answer can have begun before it)
                    raise _Stale from None
                raise e.ConnectionLostError(
                    f"connection failed: {exc.__class__.__name__}{failure_detail(exc)}",
                    method=self.method,
                    url=self.shown,
                ) from None
            idle = idle_for(answer.headers)
            keep = framer.reusable and idle > 0
            return RawResponse(answer.status, answer.headers, answer.body)
        finally:
            pump.on_loop.discard(sock)
            if keep and not pump.closed:
                pump.idle.put(key, sock, idle)
            else:
                sock.close()

    async def _send(
        self,
        loop: asyncio.AbstractEventLoop,
        sock: socket.socket,
        parts: list[bytes],
        limit: asyncio.Timeout,
    ) -> None:
        """``parts`` in one ``sendmsg`` when the socket takes them (the usual case), the
        rest as the socket drains, within ``idle_timeout``."""
        if self.idle_timeout is not None:
            limit.reschedule(loop.time() + self.idle_timeout)
        try:
            done = sock.sendmsg(parts)
        except (BlockingIOError, InterruptedError):
            done = 0
        for part in parts:
            if done >= len(part):
                done -= len(part)
                continue
            await loop.sock_sendall(sock, memoryview(part)[done:])
            done = 0

    async def _receive(
        self,
        loop: asyncio.AbstractEventLoop,
        sock: socket.socket,
        framer: wire.AnswerFramer,
        limit: asyncio.Timeout,
    ) -> wire.Answer:
        """The whole answer, within ``answer_within`` of the last byte sent, no wait for
        the next bytes longer than ``idle_timeout``."""
        deadline = None if self.answer_within is None else loop.time() + self.answer_within
        while True:
            when = deadline
            if self.idle_timeout is not None:
                idle = loop.time() + self.idle_timeout
                when = idle if when is None else min(when, idle)
            limit.reschedule(when)
            data = await loop.sock_recv(sock, _RECEIVE)
            if (answer := framer.feed(data)) is not None:
                return answer


async def _connect(
    host: str, port: int, timeout: float | None, method: str, shown: str
) -> socket.socket:
    """A new non-blocking TCP connection, made on the loop within ``timeout``: each of
    the host's addresses in turn (an address literal is not looked up)."""
    loop = asyncio.get_running_loop()
    failure: OSError | None = None
    try:
        async with asyncio.timeout(timeout):
            for family, kind, proto, _, address in await _addresses(loop, host, port):
                sock = socket.socket(family, kind, proto)
                try:
                    sock.setblocking(False)
                    await loop.sock_connect(sock, address)
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    return sock
                except OSError as exc:
                    sock.close()
                    # asyncio's words name the address; the system's, as the pump's
                    failure = OSError(exc.errno, os.strerror(exc.errno)) if exc.errno else exc
                except BaseException:
                    sock.close()
                    raise
    except TimeoutError:
        raise e.RequestTimeoutError("timed out connecting", method=method, url=shown) from None
    except OSError as exc:  # the name not found
        failure = exc
    detail = "" if failure is None else f"{failure.__class__.__name__}{failure_detail(failure)}"
    raise e.ConnectError(f"cannot connect: {detail}", method=method, url=shown)


async def _addresses(
    loop: asyncio.AbstractEventLoop, host: str, port: int
) -> list[tuple[int, int, int, str, Any]]:
    """Where ``host`` is: itself when it is an address (no look-up), else its names'."""
    for family in (socket.AF_INET, socket.AF_INET6):
        with contextlib.suppress(OSError):
            socket.inet_pton(family, host)
            address = (host, port) if family == socket.AF_INET else (host, port, 0, 0)
            return [(family, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", address)]
    found = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [(int(f), int(k), p, name, address) for f, k, p, name, address in found]
