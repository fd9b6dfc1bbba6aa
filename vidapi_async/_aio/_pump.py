"""Upload requests sent off the event loop: a blocking socket per request, in a worker
thread of the client's own pool (never the default executor that the application and
aiohttp's resolver share).

Why: over TLS, asyncio encrypts on the loop thread (about 1 CPU-s per GiB there), so
every concurrent upload adds loop lag; ``sendfile(2)`` on the loop reads the disk on the
loop thread (a cold page cache stalls it). Here the thread reads the file into one
reused buffer (``readinto``), and ``ssl`` encrypts and sends it with the GIL released;
plain TCP uses ``socket.sendfile``. The loop only starts the request, receives progress
(``call_soon_threadsafe``, so callbacks run on the loop) and takes the answer.

The request is written by hand: the target byte for byte as the server returned it,
an exact Content-Length, ``Connection: keep-alive``: a finished upload's connection is
kept for the next upload to the same host (``IdleConnections``; not through a proxy,
where it says ``close``). The answer is read to its end (by
Content-Length, chunked framing, or the connection closing), capped, and whole within
``answer_within`` seconds of the last byte sent. Cancelling the awaiting task shuts the
socket down, which wakes the thread at once; the task waits for the thread to finish,
so nothing is left running.

A small file on plain HTTP is not sent here: its bytes are read in one of the pump's
``READERS`` threads (``read_whole``, ``in_thread``) and the loop sends them (``_whole``),
sharing the kept
connections (``IdleConnections``) and the request's framing (``request_framer``).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import re
import select
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future
from typing import TypeVar

import attrs

from .. import _errors as e
from .. import _protocol as wire
from .._config import ProgressCallback
from .._limits import Bandwidth
from .._protocol import Proxy, url_for_humans
from .._transfer.digest import HashSink
from .._transfer.sources import Stream
from ._response import RawResponse
from ._threads import ThreadPool

__all__ = ["Connection", "FileRegion", "UploadPump"]

T = TypeVar("T")

MAX_ANSWER_BYTES = 16 * 1024 * 1024
MAX_HEAD_BYTES = 64 * 1024
COPY_PIECE = 128 * 1024
"""The most ``_copy`` reads and sends at a time (cache-sized; see ``_copy``)."""
READERS = 4
"""Threads that read small files whole for the loop (``in_thread``, ``_whole``): a few,
not one per upload; sixteen threads taking turns at the GIL beside the loop cost a batch
of small files a tenth of its rate against a server that costs CPU (issue 43)."""


@attrs.frozen(kw_only=True)
class FileRegion:
    """``length`` bytes of ``path`` from ``offset``, between ``head`` and ``tail``.
    ``file_size`` is the whole file's size when the upload was planned: the file must
    still have it."""

    path: str
    file_size: int
    offset: int = 0
    length: int = 0
    head: bytes = b""
    tail: bytes = b""
    stream: Stream | None = None
    """A source other than a file (``path`` is then its name): read through, once per
    attempt, ``length`` bytes exactly."""
    digest: HashSink | None = None
    """Fed with the file bytes as they are sent (restarted per attempt); with it the
    bytes go through the buffer, not ``sendfile``, so they are read once."""

    @property
    def size(self) -> int:
        return len(self.head) + self.length + len(self.tail)


class Connection:
    """A socket kept between the sequential requests of one sender (a chunked upload's
    worker), so that each range does not pay a new TCP and TLS handshake. Used by one
    request at a time; ``close`` when done."""

    def __init__(self) -> None:
        self._key: tuple[str, str, int] | None = None
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()

    def take(self, key: tuple[str, str, int]) -> socket.socket | None:
        with self._lock:
            sock, self._sock = self._sock, None
            if sock is not None and (self._key != key or _holds_bytes(sock)):
                sock.close()  # a fresh connection is opened instead
                sock = None
            return sock

    def put(self, key: tuple[str, str, int], sock: socket.socket, idle_for: float) -> None:
        """``idle_for`` is for connections kept between uploads (a chunked upload's next
        range follows at once); a server's hint of a second or less is not kept here
        either (``_Job._exchange``)."""
        with self._lock:
            old, self._sock, self._key = self._sock, sock, key
        if old is not None:
            old.close()

    def close(self) -> None:
        with self._lock:
            sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()


IDLE_FOR = 15.0
"""Seconds a finished upload's connection is kept for the next upload to its host."""

_KEEP_ALIVE_TIMEOUT = re.compile(r"(?:^|[,;\s])timeout\s*=\s*(\d{1,9})(?!\d)", re.IGNORECASE)
"""A server's ``Keep-Alive: timeout=N``; more than 9 digits is no hint (the default)."""


def idle_for(headers: Mapping[str, str]) -> float:
    """How long a connection may wait for the next upload: ``IDLE_FOR``, or up to a
    second before the server says it closes one (``Keep-Alive: timeout=N``): a request
    sent whole on a connection the server closes meanwhile could not be sent again."""
    hint = next((v for k, v in headers.items() if k.lower() == "keep-alive"), "")
    said = _KEEP_ALIVE_TIMEOUT.search(hint)
    return IDLE_FOR if said is None else min(IDLE_FOR, int(said.group(1)) - 1.0)


class IdleConnections:
    """The connections of finished uploads, kept for the next upload to the same origin
    (a batch's uploads go one after another to one upload host: no TCP and TLS
    handshake per file). At most ``keep`` in all, each for at most ``IDLE_FOR`` seconds;
    one the server has closed (or that holds unread bytes) is never handed out, and one
    it drops while the next request goes is replaced at once (``_Job.run``)."""

    def __init__(self, keep: int) -> None:
        self._idle: list[tuple[float, tuple[str, str, int], socket.socket]] = []
        """(until when it may be used, origin, socket), oldest first."""
        self._keep = keep
        self._lock = threading.Lock()
        self._closed = False

    def take(self, key: tuple[str, str, int]) -> socket.socket | None:
        while True:
            with self._lock:
                stale = self._expire(time.monotonic())
                found = next(
                    (i for i in range(len(self._idle) - 1, -1, -1) if self._idle[i][1] == key), None
                )
                sock = None if found is None else self._idle.pop(found)[2]
            for old in stale:
                old.close()
            if sock is None or not _holds_bytes(sock):
                return sock
            sock.close()

    def put(self, key: tuple[str, str, int], sock: socket.socket, idle_for: float) -> None:
        with self._lock:
            if self._closed:
                stale = [sock]
            else:
                self._idle.append((time.monotonic() + idle_for, key, sock))
                stale = self._expire(time.monotonic())
        for old in stale:
            old.close()

    def _expire(self, now: float) -> list[socket.socket]:
        """Under the lock: take out what is too old, and the oldest beyond ``keep``."""
        fresh = [entry for entry in self._idle if now < entry[0]]
        over = max(0, len(fresh) - self._keep)
        gone = [entry[2] for entry in self._idle if now >= entry[0]]
        gone += [entry[2] for entry in fresh[:over]]
        self._idle = fresh[over:]
        return gone

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for _, _, sock in idle:
            sock.close()


class _Stale(Exception):
    """A kept connection failed while the request went, before any byte of the answer:
    the server had dropped it (its keep-alive timeout) and cannot have acted on a request
    it did not read whole; the request goes again on a new connection."""


class _Aborted(Exception):
    """The loop asked the thread to stop (cancelled, the client closed, or the progress
    callback raised); ``error_type`` names why, for the request's span."""

    def __init__(self, error_type: str) -> None:
        super().__init__(error_type)
        self.error_type = error_type


class _Job:
    """One request, run in a worker thread; ``abort`` may be called from the loop."""

    def __init__(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        region: FileRegion,
        *,
        context: Callable[[], ssl.SSLContext] | None,
        read_size: int,
        connect_timeout: float | None,
        idle_timeout: float | None,
        answer_within: float | None,
        report: Callable[[int], None] | None,
        sendfile: bool,
        barrier: Callable[[threading.Event], None] | None = None,
        connection: Connection | IdleConnections | None = None,
        buffers: BufferPool | None = None,
        proxy: Proxy | None = None,
        bandwidth: Bandwidth | None = None,
    ) -> None:
        self.method, self.url, self.headers, self.region = method, url, headers, region
        self.use_sendfile = sendfile
        self.barrier = barrier
        self.connection = connection
        self.buffers = buffers or BufferPool(keep=0)
        self.proxy = proxy
        self.bandwidth = bandwidth
        self.context = context
        self.read_size = read_size
        if bandwidth is not None:  # small pieces: the pace stays even
            self.read_size = min(read_size, bandwidth.piece)
        self.connect_timeout = connect_timeout
        self.idle_timeout = idle_timeout
        self.answer_within = answer_within
        self.report = report
        self._sock: socket.socket | None = None
        self._aborted = threading.Event()
        self._why = "CancelledError"
        self._lock = threading.Lock()

    # --- called from the loop ----------------------------------------------------------

    def abort(self, why: str = "CancelledError") -> None:
        """Stop the request; ``why`` (an error's class name) is its span's error.type."""
        self._why = why
        self._aborted.set()
        stop = getattr(self.region.stream, "abort", None)
        if stop is not None:  # a thread waiting for the loop's next chunk
            stop()
        with self._lock:
            sock = self._sock
        if sock is not None:
            with contextlib.suppress(OSError):  # wakes a thread blocked in send or recv
                sock.shutdown(socket.SHUT_RDWR)

    # --- the thread ----------------------------------------------------------------------

    def run(self) -> RawResponse:
        scheme, host, port, target = split_url(self.url)
        shown = url_for_humans(self.url)
        once = self.region.stream is not None  # a body that cannot be sent twice
        kept = None
        if self.connection is not None and not (
            once and isinstance(self.connection, IdleConnections)
        ):  # (a chunked upload's own connection carries its ranges, streamed or not)
            kept = self.connection.take((scheme, host, port))
        if kept is not None:
            with contextlib.suppress(_Stale):  # dropped while the request went: anew
                return self._exchange(kept, scheme, host, port, target, shown, again=not once)
        sock = self._connect(scheme, host, port, shown)
        return self._exchange(sock, scheme, host, port, target, shown, again=False)

    def _exchange(
        self,
        sock: socket.socket,
        scheme: str,
        host: str,
        port: int,
        target: str,
        shown: str,
        *,
        again: bool,
    ) -> RawResponse:
        """The request on ``sock`` and its whole answer. ``again``: a kept connection
        that fails before the request is sent whole and before any byte of the answer
        raises ``_Stale``. Once the whole request went out the server may have acted on
        it (stored the upload): a failure then is the caller's, as on a new connection."""
        keep = False
        sent = False
        idle = 0.0
        try:
            with self._lock:
                self._sock = sock
            if self._aborted.is_set():
                raise _Aborted(self._why)
            sock.settimeout(self.idle_timeout)
            try:
                framer = self._send(sock, host, port, target)
                sent = True
                answer, reusable = self._receive(sock, framer)
            except (_Aborted, _TooLarge):
                raise
            except wire.UnsendableRequest as exc:
                raise e.InvalidRequestError(f"{self.method} {shown}: {exc}") from None
            except TimeoutError:
                raise e.RequestTimeoutError("timed out", method=self.method, url=shown) from None
            except (OSError, _Broken) as exc:
                if self._aborted.is_set():
                    raise _Aborted(self._why) from None
                if again and not sent:  # (no answer can have begun before it)
                    raise _Stale from None
                raise e.ConnectionLostError(
                    f"connection failed: {exc.__class__.__name__}{failure_detail(exc)}",
                    method=self.method,
                    url=shown,
                ) from None
            idle = idle_for(answer.headers)
            keep = reusable and self.connection is not None and idle > 0
            return answer
        finally:
            with self._lock:
                self._sock = None
            if keep and self.connection is not None and not self._aborted.is_set():
                self.connection.put((scheme, host, port), sock, idle)
            else:
                sock.close()

    def _connect(self, scheme: str, host: str, port: int, shown: str) -> socket.socket:
        via = self.proxy
        address = (host, port) if via is None else (via.host, via.port)
        try:
            raw = socket.create_connection(address, timeout=self.connect_timeout)
        except TimeoutError:
            raise e.RequestTimeoutError(
                "timed out connecting", method=self.method, url=shown
            ) from None
        except OSError as exc:
            raise e.ConnectError(
                f"cannot connect: {exc.__class__.__name__}{failure_detail(exc)}",
                method=self.method,
                url=shown,
            ) from None
        try:
            raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if scheme != "https":
                return raw
            if via is not None:
                self._tunnel(raw, host, port, via, shown)
            assert self.context is not None
            return self.context().wrap_socket(raw, server_hostname=host)
        except e.VidapiError:
            raw.close()
            raise
        except (ssl.SSLError, OSError) as exc:
            raw.close()
            raise e.ConnectError(
                f"TLS handshake failed: {exc.__class__.__name__}{failure_detail(exc)}",
                method=self.method,
                url=shown,
            ) from None

    def _tunnel(self, raw: socket.socket, host: str, port: int, via: Proxy, shown: str) -> None:
        """``CONNECT host:port`` through the proxy, all of it within ``connect_timeout``:
        after its 2xx, the socket is a pipe to the upload server, and TLS runs end to end
        through it. A 407 is an authentication error (the proxy's credentials)."""
        authority = _authority(host, port)  # host:port whatever the port (RFC 9110 9.3.6)
        headers = [("Host", authority)]
        if via.authorization is not None:
            headers.append(("Proxy-Authorization", via.authorization))
        framer = wire.AnswerFramer("CONNECT", authority, headers, cap=MAX_HEAD_BYTES)
        raw.sendall(framer.request_head())
        framer.body_sent(0)
        timeout = self.connect_timeout
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while (answer := framer.feed(_recv(raw, deadline, None))) is None:
                pass
        except TimeoutError:
            raise e.RequestTimeoutError(
                "timed out connecting through the proxy", method=self.method, url=shown
            ) from None
        except (_Broken, OSError) as exc:
            raise e.ConnectError(
                f"the proxy's answer to CONNECT is broken: {exc.__class__.__name__}",
                method=self.method,
                url=shown,
            ) from None
        if answer.status == 407:
            raise e.AuthenticationError(
                "the proxy wants credentials it was not given or refused them (HTTP 407); "
                "give them in the proxy address (http://user:password@host:port)",
                status=407,
            )
        if not 200 <= answer.status < 300 or not framer.tunnel_clean:
            raise e.ConnectError(
                f"the proxy refused to connect to the upload server (status {answer.status})",
                method=self.method,
                url=shown,
            )

    def _send(self, sock: socket.socket, host: str, port: int, target: str) -> wire.AnswerFramer:
        """The request: its head framed by h11, its body sent here (h11 counts it)."""
        region = self.region
        framer = request_framer(
            self.method,
            host,
            port,
            target,
            self.headers,
            region.size,
            keep_alive=self.connection is not None,
            scheme="https" if isinstance(sock, ssl.SSLSocket) else "http",
            proxy=None if isinstance(sock, ssl.SSLSocket) else self.proxy,
        )
        head = framer.request_head()
        if region.digest is not None:
            region.digest.restart()
        if region.stream is not None:
            region.stream.rewind()  # before the first byte: a one-pass source says so here
            sock.sendall(head + region.head)
            self._copy_stream(sock, region.stream)
            self._wait_for_progress()
            sock.sendall(region.tail)
            framer.body_sent(region.size)
            return framer
        sock.sendall(head + region.head)
        if region.length:
            with open(region.path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size != region.file_size:
                    raise file_changed(region, f"the file is now {size} bytes")
                through_buffer = region.digest is not None or not self.use_sendfile
                if isinstance(sock, ssl.SSLSocket) or through_buffer:
                    self._copy(sock, f)
                else:
                    self._sendfile(sock, f)
                self._wait_for_progress()
                now = os.fstat(f.fileno()).st_size
                if now != region.file_size:  # checked before the last bytes go out
                    how = "grew" if now > region.file_size else "shrank"
                    raise file_changed(region, f"the file {how} to {now} bytes while it was sent")
        else:
            self._wait_for_progress()
        sock.sendall(region.tail)
        framer.body_sent(region.size)
        return framer

    def _wait_for_progress(self) -> None:
        """Before the last bytes: wait until the loop has run every progress callback
        posted so far, so that a callback's error stops the body before it is whole."""
        if self.barrier is None:
            return
        reached = threading.Event()
        self.barrier(reached)
        while not reached.wait(0.05):
            if self._aborted.is_set():
                break
        if self._aborted.is_set():
            raise _Aborted(self._why)

    def _copy(self, sock: socket.socket, f: io.BufferedReader) -> None:
        """Read into one reused buffer and send it (TLS encrypts in ``sendall``).

        The buffer is at most ``COPY_PIECE`` bytes, whatever ``read_size``: each piece
        is read by the kernel into the buffer and then encrypted from it, and a piece
        that fits in the core's L2 cache is still there when ``SSL_write`` reads it (a
        1 MiB buffer costed 1.2-1.5x curl's CPU per GiB, 128 KiB 0.9-1.0x: see
        benchmarks/README.md, issue #21). Progress is still reported once per
        ``read_size`` bytes (and at the end), so the loop is woken no more often."""
        region = self.region
        f.seek(region.offset)
        sent = 0
        step = self.read_size
        report_at = min(step, region.length)
        with self.buffers.lend(min(step, COPY_PIECE)) as view:
            while sent < region.length:
                want = min(len(view), report_at - sent)  # never past a report
                got = f.readinto(view[:want])
                if not got:
                    raise file_changed(
                        region, f"the file shrank: it ended after {region.offset + sent} bytes"
                    )
                self._pace(got)
                sock.sendall(view[:got])
                if region.digest is not None:
                    # After the send: hashing overlaps with the receiver taking the bytes.
                    region.digest.update(view[:got])
                sent += got
                if sent >= report_at:
                    report_at = min(sent + step, region.length)
                    self._progress(sent)
                elif self._aborted.is_set():
                    raise _Aborted(self._why)

    def _pace(self, n: int) -> None:
        if self.bandwidth is not None:
            self.bandwidth.take(n, self._aborted)

    def _copy_stream(self, sock: socket.socket, stream: Stream) -> None:
        """Exactly ``length`` bytes from a stream. Fewer: the body is abandoned. More: the
        extra byte is found by reading ahead before the body's last bytes (the multipart
        tail) go out, so the server never completes a body that is not the source."""
        region = self.region
        sent = 0
        with self.buffers.lend(self.read_size) as view:
            while sent < region.length:
                got = stream.readinto(view[: min(len(view), region.length - sent)])
                if not got:
                    raise file_changed(region, f"the source ended after {sent} bytes")
                self._pace(got)
                sock.sendall(view[:got])
                if region.digest is not None:
                    # After the send: hashing overlaps with the receiver taking the bytes.
                    region.digest.update(view[:got])
                sent += got
                self._progress(sent)
            if stream.readinto(view[:1]):
                raise file_changed(region, f"the source has more than {region.length} bytes")

    def _sendfile(self, sock: socket.socket, f: io.BufferedReader) -> None:
        """The kernel copies file to socket, ``read_size`` bytes per step (progress)."""
        region = self.region
        sent = 0
        while sent < region.length:
            want = min(self.read_size, region.length - sent)
            self._pace(want)
            got = sock.sendfile(f, region.offset + sent, want)
            if got < want:
                raise file_changed(
                    region, f"the file shrank: it ended after {region.offset + sent + got} bytes"
                )
            sent += got
            self._progress(sent)

    def _progress(self, sent: int) -> None:
        if self._aborted.is_set():
            raise _Aborted(self._why)
        if self.report is not None:
            self.report(sent)

    def _receive(self, sock: socket.socket, framer: wire.AnswerFramer) -> tuple[RawResponse, bool]:
        """The whole answer (h11 frames it), within ``answer_within`` of the last byte
        sent; whether the connection may carry the next request."""
        deadline = None if self.answer_within is None else time.monotonic() + self.answer_within
        while True:
            data = _recv(sock, deadline, self.idle_timeout)
            if (answer := framer.feed(data)) is not None:
                break
        return RawResponse(answer.status, answer.headers, answer.body), framer.reusable


def request_framer(
    method: str,
    host: str,
    port: int,
    target: str,
    headers: Mapping[str, str],
    size: int,
    *,
    keep_alive: bool,
    scheme: str = "http",
    proxy: Proxy | None = None,
) -> wire.AnswerFramer:
    """The request's framing: Host, ``headers``, an exact Content-Length (``size``) and
    Connection. ``proxy``: a plain-HTTP request through it (the absolute form, and its
    credentials); a tunnel's request is the origin's own."""
    authority = _host_header(host, port, scheme)
    if proxy is not None:
        target = f"http://{authority}{target}"  # absolute form, to a proxy
    fields = [("Host", authority)]
    if proxy is not None and proxy.authorization:
        fields.append(("Proxy-Authorization", proxy.authorization))
    fields += headers.items()
    persist = "keep-alive" if keep_alive else "close"
    fields += [("Content-Length", str(size)), ("Connection", persist)]
    return wire.AnswerFramer(method, target, fields, cap=MAX_ANSWER_BYTES, head_cap=MAX_HEAD_BYTES)


def read_whole(region: FileRegion) -> bytes:
    """``region``'s file bytes in one read (a small region, sent from the loop: see
    ``_whole``), the digest fed with them. The file must still have its planned size:
    checked before, and by asking for one byte past the region's end when it ends the
    file (a file that grew gives it). An empty region reads nothing (a chunked upload's
    question, whose ``path`` may name no local file)."""
    if region.digest is not None:
        region.digest.restart()
    if not region.length:
        return b""
    try:
        with open(region.path, "rb", buffering=0) as f:
            size = os.fstat(f.fileno()).st_size
            if size != region.file_size:
                raise file_changed(region, f"the file is now {size} bytes")
            end = region.offset + region.length
            data = os.pread(f.fileno(), region.length + (end == region.file_size), region.offset)
    except OSError as exc:  # gone or unreadable since the upload was planned
        raise file_changed(region, f"cannot read it: {exc.__class__.__name__}") from None
    if len(data) < region.length:
        raise file_changed(
            region, f"the file shrank: it ended after {region.offset + len(data)} bytes"
        )
    if len(data) > region.length:
        raise file_changed(region, f"the file grew past {region.file_size} bytes")
    if region.digest is not None:
        region.digest.update(data)
    return data


class BufferPool:
    """Read buffers lent to requests and taken back, a few kept for the next ones: a
    new 1 MiB buffer per request (a chunked upload makes hundreds) costs an allocation
    and, with glibc's per-thread arenas, memory that is not given back; keeping one per
    thread would hold one per thread for ever."""

    def __init__(self, keep: int = 8) -> None:
        self._free: list[bytearray] = []
        self._keep = keep
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def lend(self, size: int) -> Iterator[memoryview]:
        with self._lock:
            buffer = self._free.pop() if self._free else None
        if buffer is None or len(buffer) != size:
            buffer = bytearray(size)
        try:
            yield memoryview(buffer)
        finally:
            with self._lock:
                if len(self._free) < self._keep:
                    self._free.append(buffer)


_Broken = wire.BrokenAnswer
_TooLarge = wire.AnswerTooLarge


def _recv(sock: socket.socket, deadline: float | None, idle: float | None) -> bytes:
    """The next bytes from a blocking socket (``b""``: closed), waiting at most
    ``idle`` and never past ``deadline`` (``TimeoutError``)."""
    timeout = idle
    if deadline is not None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        timeout = left if timeout is None else min(timeout, left)
    sock.settimeout(timeout)
    return sock.recv(256 * 1024)


def _holds_bytes(sock: socket.socket) -> bool:
    """Whether a kept connection has something unread (bytes nobody asked for, or the
    server's close): it cannot carry a new request."""
    if isinstance(sock, ssl.SSLSocket) and sock.pending():
        return True
    # poll, not select: a socket numbered 1024 or more (a process with many files open)
    # is past select's limit.
    poller = select.poll()
    try:
        poller.register(sock, select.POLLIN)
        return bool(poller.poll(0))
    except (OSError, ValueError):
        return True


class UploadPump:
    """Sends upload requests in threads of its own pool. Owned by a ``Transport``."""

    def __init__(self, *, context: Callable[[], ssl.SSLContext], max_threads: int) -> None:
        self._make_context = context
        self._context: ssl.SSLContext | None = None
        self._context_lock = threading.Lock()
        self._threads = ThreadPool("vidapi-upload", max_threads)
        self._readers = ThreadPool("vidapi-read", READERS)
        self._buffers = BufferPool()
        self._closed = False
        self._jobs: set[_Job] = set()
        self.idle = IdleConnections(keep=max_threads)
        """Finished uploads' connections, for the next upload to the same origin (the
        pump's threads and the loop's small uploads, ``_whole``, share them)."""
        self.loop_slots = asyncio.Semaphore(max_threads)
        """The loop's small uploads talking to a server at once (``_whole``): no more
        than the pump's threads, the bound its own uploads keep."""
        self.on_loop: set[socket.socket] = set()
        """The sockets of small uploads under way on the loop (``_whole``): shut down
        by ``close``."""

    def context(self) -> ssl.SSLContext:
        """The TLS trust for uploads, made by the first HTTPS upload (in its thread):
        loading the system's CA certificates costs tens of milliseconds of CPU, which a
        batch of plain-HTTP uploads never pays."""
        with self._context_lock:
            if self._context is None:
                self._context = self._make_context()
            return self._context

    def close(self) -> None:
        """Stop the pool: requests still running (their tasks not awaited) are aborted,
        and their threads end at once since their sockets are shut down."""
        self._closed = True
        for job in list(self._jobs):
            job.abort("ClientClosedError")
        for sock in list(self.on_loop):
            with contextlib.suppress(OSError):  # wakes the loop's wait on it
                sock.shutdown(socket.SHUT_RDWR)
        self._threads.close()
        self._readers.close()
        self.idle.close()

    async def send(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        region: FileRegion,
        *,
        read_size: int,
        connect_timeout: float | None,
        idle_timeout: float | None,
        answer_within: float | None,
        progress: ProgressCallback | None = None,
        sendfile: bool = True,
        connection: Connection | None = None,
        proxy: Proxy | None = None,
        bandwidth: Bandwidth | None = None,
        wrap: Callable[[Callable[[], RawResponse]], Callable[[], RawResponse]] | None = None,
    ) -> RawResponse:
        """Send one request whose body is ``region``; the whole answer. ``wrap`` (a
        span, the caller's context) wraps what the thread runs."""
        if self._closed:
            raise e.ClientClosedError("this Client is closed; create a new one")
        loop = asyncio.get_running_loop()
        feed = None if progress is None else _Progress(loop, progress, region.length)
        job = _Job(
            method,
            url,
            headers,
            region,
            context=self.context,
            read_size=read_size,
            connect_timeout=connect_timeout,
            idle_timeout=idle_timeout,
            answer_within=answer_within,
            report=None if feed is None else feed.report,
            sendfile=sendfile,
            barrier=None if feed is None else feed.barrier,
            # Without a connection of its own, an upload takes a kept one (not through
            # a proxy: a kept socket is bound to the proxy's view of one origin).
            connection=connection or (self.idle if proxy is None else None),
            buffers=self._buffers,
            proxy=proxy,
            bandwidth=bandwidth,
        )
        if feed is not None:
            feed.job = job
        try:
            answer = await self._run(job, job.run if wrap is None else wrap(job.run), loop)
        except _Aborted:
            if feed is not None and feed.failures:
                raise feed.failures[0] from None
            raise e.ClientClosedError("the Client was closed while this upload ran") from None
        except _TooLarge:
            raise e.UnexpectedResponseError(
                f"{method} {url_for_humans(url)}: response larger than {MAX_ANSWER_BYTES} bytes",
                status=None,
            ) from None
        if feed is not None:
            # Progress posted before the answer may still be queued: let it run first.
            await asyncio.sleep(0)
            if feed.failures:
                raise feed.failures[0]
        return answer

    @property
    def closed(self) -> bool:
        return self._closed

    async def in_thread(self, fn: Callable[[], T]) -> T:
        """``fn()`` in one of the pump's ``READERS`` threads, in one trip there and back
        (as ``_run``). For short work (a small file read whole): a cancel does not wait
        for it."""
        if self._closed:
            raise e.ClientClosedError("this Client is closed; create a new one")
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[T] = loop.create_future()

        def settle(done: Future[T]) -> None:  # on the loop
            if waiter.done():
                return
            failure = done.exception()
            if failure is None:
                waiter.set_result(done.result())
            else:
                waiter.set_exception(failure)

        def post(done: Future[T]) -> None:  # in the thread, as it ends
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                loop.call_soon_threadsafe(settle, done)

        self._readers.submit(fn).add_done_callback(post)
        return await waiter

    async def _run(
        self, job: _Job, run: Callable[[], RawResponse], loop: asyncio.AbstractEventLoop
    ) -> RawResponse:
        """``run`` (``job``'s, maybe wrapped) in a thread of the pool, and its answer.
        The thread's end comes back in one hop: it posts ``settle`` to the loop, which
        wakes this task (``wrap_future`` under ``shield`` took three turns of a loop
        that 16 pipelines keep busy, each behind every callback queued meanwhile). A
        cancel aborts the job and waits for its thread, which ends promptly."""
        waiter: asyncio.Future[None] = loop.create_future()
        ended: list[asyncio.Future[None]] = []  # waiting for the thread after a cancel
        outcome: list[Future[RawResponse]] = []

        def settle(done: Future[RawResponse]) -> None:  # on the loop
            self._jobs.discard(job)
            outcome.append(done)
            for future in (waiter, *ended):
                if not future.done():
                    future.set_result(None)

        def post(done: Future[RawResponse]) -> None:  # in the thread, as it ends
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                loop.call_soon_threadsafe(settle, done)

        running = self._threads.submit(run)
        self._jobs.add(job)
        running.add_done_callback(post)  # (at once, here, if the thread is done already)
        try:
            await waiter
            return outcome[0].result()
        except asyncio.CancelledError:
            if not outcome:
                job.abort()
                ended.append(loop.create_future())
                await ended[0]  # the thread ends promptly: its socket is shut
            # (its failure, if any, is the cancellation's echo: not raised)
            raise


class _Progress:
    """The caller's ``progress(sent, total)``, fed from the upload thread: each count
    posted to the loop (``report``), a ``barrier`` posted after them; an error the
    callback raises stops the transfer (the job aborted) and is the upload's."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, progress: ProgressCallback, total: int
    ) -> None:
        self._loop = loop
        self._progress = progress
        self._total = total
        self.failures: list[BaseException] = []
        self.job: _Job | None = None

    def deliver(self, sent: int) -> None:  # on the loop
        if self.failures:
            return
        try:
            self._progress(sent, self._total)
        except Exception as exc:  # the caller's own error: stop the transfer
            self.failures.append(exc)
            if self.job is not None:
                self.job.abort(type(exc).__name__)

    def report(self, sent: int) -> None:  # in the thread
        self._loop.call_soon_threadsafe(self.deliver, sent)

    def barrier(self, reached: threading.Event) -> None:  # in the thread
        self._loop.call_soon_threadsafe(reached.set)  # runs after every deliver posted


def split_url(url: str) -> tuple[str, str, int, str]:
    """``(scheme, host, port, target)``; the target is the url's own text after the
    authority (path and query, escapes untouched), the fragment left out."""
    scheme, rest = url.split("://", 1)
    # The authority ends at the first "/", "?" or "#" (RFC 3986 3.2), as ``urlsplit``
    # (the url's checks, its shown form) reads it: "http://a#@b/" names host a.
    end = min((i for i in map(rest.find, "/?#") if i >= 0), default=len(rest))
    authority, tail = rest[:end], rest[end:].split("#", 1)[0]
    authority = authority.rpartition("@")[2]  # credentials never travel from here
    target = tail if tail.startswith("/") else "/" + tail  # "https://host?x" has no path
    host, port = authority, None
    if authority.startswith("["):
        host, _, after = authority[1:].partition("]")
        port = after[1:] if after.startswith(":") else None
    elif ":" in authority:
        host, port = authority.rsplit(":", 1)
    default = 443 if scheme.lower() == "https" else 80
    return scheme.lower(), host, int(port) if port else default, target


def _host_header(host: str, port: int, scheme: str) -> str:
    """The Host header: the port left out when it is the scheme's own."""
    shown = f"[{host}]" if ":" in host else host
    return shown if port == (443 if scheme == "https" else 80) else f"{shown}:{port}"


def _authority(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def file_changed(region: FileRegion, message: str) -> e.FileChangedError:
    return e.FileChangedError(region.path, region.file_size, message)


def failure_detail(exc: BaseException) -> str:
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f": {exc.verify_message}"
    if isinstance(exc, OSError) and exc.strerror:
        return f": {exc.strerror}"
    return ""
