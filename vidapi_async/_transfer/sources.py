"""Upload sources other than a path: bytes, a binary file object, an async iterable of
bytes. Each becomes a ``Stream`` that the upload pump reads from its worker thread
(``readinto``, blocking there, never on the loop); a stream whose size is not known, or
that must go chunked, is first spooled to a temporary file.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import io
import ipaddress
import os
import select
import stat
import tempfile
import threading
from collections.abc import AsyncIterable, AsyncIterator, Iterable
from typing import IO, Any, Final, Protocol, TypeAlias

import attrs

from .._errors import InvalidArgumentError, NotRewindableError, SourceError
from .files import LocalFile

UploadSource: TypeAlias = (
    "str | os.PathLike[str] | bytes | bytearray | memoryview | IO[bytes] | AsyncIterable[bytes]"
)
"""What ``upload_file`` takes: a path, bytes, a binary file object, or async chunks."""

__all__ = [
    "DEFAULT_NAME",
    "MAX_SOURCE_SIZE",
    "UNKNOWN_ORIGIN",
    "AsyncIterStream",
    "BytesStream",
    "FileObjectStream",
    "Opened",
    "SourcePolicy",
    "Stream",
    "UploadSource",
    "open_source",
    "spool",
    "spool_async",
]

DEFAULT_NAME = "upload"
"""The file name the server sees for a source that has none."""

SPOOL_PIECE = 1024 * 1024
WAKE_EVERY = 0.1
"""Seconds a read of a pipe waits before looking whether the upload was cancelled."""
MAX_SOURCE_SIZE: Final = 64 * 1024**3
"""The default cap on a url source: the platform's ceiling per video (64 GB)."""

Network: TypeAlias = ipaddress.IPv4Network | ipaddress.IPv6Network
Address: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address


_MAPPED: Final = ipaddress.IPv6Network("::ffff:0:0/96")


def _unmapped(net: Network) -> Network:
    """An IPv4-mapped IPv6 network (``::ffff:127.0.0.0/104``) as its IPv4 network: a
    connected address is judged as IPv4 (``address``), so the mapped form would match
    nothing."""
    if isinstance(net, ipaddress.IPv6Network) and net.prefixlen >= 96 and net.subnet_of(_MAPPED):
        first = ipaddress.IPv4Address(int(net.network_address) & 0xFFFFFFFF)
        return ipaddress.IPv4Network((first, net.prefixlen - 96))
    return net


def _networks(value: Iterable[str]) -> tuple[Network, ...]:
    if isinstance(value, str):
        raise InvalidArgumentError("networks", "expected a sequence of CIDR strings, not one")
    try:
        return tuple(_unmapped(ipaddress.ip_network(v, strict=False)) for v in value)
    except (TypeError, ValueError) as exc:
        raise InvalidArgumentError("networks", f"expected CIDR strings: {exc}") from None


def _optional_networks(value: Iterable[str] | None) -> tuple[Network, ...] | None:
    return None if value is None else _networks(value)


UNKNOWN_ORIGIN: Final = "unknown"
"""``SourcePolicy.origin`` (and ``UploadJob.origin``) for a feed whose address is not
known here (fetched through a proxy from a name: the proxy resolves it, whatever it
resolves to here): judged as a public one, so the rule fails closed."""


def _origin(value: str | None) -> str | None:
    if value is None or value == UNKNOWN_ORIGIN:
        return value
    try:
        if not isinstance(value, str):
            raise ValueError
        return str(address(value))
    except ValueError:
        raise InvalidArgumentError("origin", f"expected an IP address, got {value!r}") from None


def address(text: str) -> Address:
    """An IP address as a socket reports it (an IPv6 zone dropped, an IPv4-mapped IPv6
    address as the IPv4 one)."""
    ip = ipaddress.ip_address(text.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


_THIS_HOST_V4: Final = ipaddress.ip_network("0.0.0.0/8")
_LOOPBACK_V4: Final = ipaddress.IPv4Address("127.0.0.1")
_LOOPBACK_V6: Final = ipaddress.IPv6Address("::1")


def reaches(ip: Address) -> tuple[Address, ...]:
    """The address and, for an unspecified one (``0.0.0.0/8``, ``::``, their IPv4-mapped
    forms), the loopback address a connection to it actually reaches: a policy judges
    both, so ``0.0.0.0`` cannot stand in for ``127.0.0.1``."""
    if isinstance(ip, ipaddress.IPv4Address) and ip in _THIS_HOST_V4:
        return ip, _LOOPBACK_V4
    if isinstance(ip, ipaddress.IPv6Address) and ip.is_unspecified:
        return ip, _LOOPBACK_V6
    return (ip,)


_NOT_PUBLIC_V6: Final = (
    ipaddress.IPv6Network("fec0::/10"),  # site-local (deprecated, still routed in sites)
    ipaddress.IPv6Network("64:ff9b:1::/48"),  # NAT64 for local use (RFC 8215)
)
_V4_INSIDE: Final = (
    ipaddress.IPv6Network("64:ff9b::/96"),  # NAT64 (RFC 6052): the IPv4 address last
    ipaddress.IPv6Network("::/96"),  # IPv4-compatible (deprecated)
)


def _inside(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address a NAT64, 6to4 or IPv4-compatible address leads to."""
    if any(ip in net for net in _V4_INSIDE):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip.sixtofour


def is_public(ip: Address) -> bool:
    """Not loopback, link-local, private, unspecified or otherwise reserved; an IPv6
    address not site-local, and one that leads to an IPv4 address (NAT64, 6to4,
    IPv4-compatible) judged by that one."""
    if isinstance(ip, ipaddress.IPv6Address):
        if any(ip in net for net in _NOT_PUBLIC_V6):
            return False
        inside = _inside(ip)
        if inside is not None:
            return is_public(inside)
    return ip.is_global and not ip.is_multicast


_ORIGIN_RULE: Final = "SourcePolicy.origin; SourcePolicy.allow_private is False"


@attrs.frozen
class SourcePolicy:
    """Where ``upload_from_url`` may fetch from, checked on the address each request of a
    source is actually connected to (the first one and every redirect's, so a name that
    resolves elsewhere the second time cannot slip past).

    ``deny`` and ``allow`` are networks (CIDR strings such as ``"10.0.0.0/8"``); an
    address in ``deny`` is refused, and with ``allow`` only addresses in it are fetched
    (``deny`` wins). A redirect may not lead from a public address to a loopback,
    link-local, private or unspecified one unless ``allow_private``, nor ever from https
    to http. With ``origin`` (the address a feed naming the sources was fetched from),
    each source's first request is judged as a redirect from there: a feed fetched from
    a public address cannot name an internal one. An ``origin`` of ``"unknown"`` (a feed
    fetched through a proxy from a name, not an IP address) is judged as a public one.

    Through a proxy the proxy connects: a source's name is resolved here and judged on
    what it resolves to here. A name that does not resolve here cannot be judged: it
    is refused under ``allow`` or ``deny``, and while the ``origin`` rule holds (a
    public or unknown ``origin``, ``allow_private`` False), and when a redirect from a
    public address (or a name) led to it (``allow_private`` False); otherwise the proxy
    tries it.
    """

    deny: tuple[Network, ...] = attrs.field(default=(), converter=_networks)
    """Networks never fetched from (CIDR strings, read as networks)."""
    allow: tuple[Network, ...] = attrs.field(default=(), converter=_networks)
    """When given, the only networks fetched from (``deny`` still wins)."""
    allow_private: bool = False
    """Whether a redirect (or a feed from a public ``origin``) may lead to a private
    address."""
    internal: tuple[Network, ...] | None = attrs.field(default=None, converter=_optional_networks)
    """The networks that count as internal (not public) for the rules on redirects and
    ``origin``. ``None`` (the default): loopback, private, link-local, unspecified and
    the other reserved ranges (what is not globally routable). Given, exactly these (a
    lab whose public hosts sit in reserved ranges; a test bed on loopback)."""
    origin: str | None = attrs.field(default=None, converter=_origin)
    """The address of the document that named the sources (a feed's, ``vidapi batch
    URL`` sets it): a source's first request is judged as a redirect from it;
    ``"unknown"``: fetched through a proxy from a name (not an IP address), judged as a
    public address."""

    def is_public(self, ip: Address) -> bool:
        """Whether ``ip`` counts as public here (see ``internal``)."""
        if self.internal is None:
            return is_public(ip)
        return not any(ip in net for net in self.internal)

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.allow_private, bool):
            raise InvalidArgumentError("allow_private", "expected True or False")

    def refusal(self, connected: str, previous: str | None = None) -> str | None:
        """Why a source connected to ``connected`` must not be read (``None``: it may),
        ``previous`` being the address of the request that redirected there."""
        try:
            ips = reaches(address(connected))
        except ValueError:
            return f"{connected!r} is not an IP address"
        for ip in ips:
            why = self._refusal(ip, previous)
            if why:
                return why if ip == ips[0] else f"{ips[0]} reaches {ip}: {why}"
        return None

    def _refusal(self, ip: Address, previous: str | None) -> str | None:
        for net in self.deny:
            if ip in net:
                return f"{ip} is in the denied network {net} (SourcePolicy.deny)"
        if self.allow and not any(ip in net for net in self.allow):
            return f"{ip} is in no allowed network (SourcePolicy.allow)"
        if self.allow_private or self.is_public(ip):
            return None
        if previous is not None:
            try:
                was_public = self.is_public(address(previous))
            except ValueError:
                was_public = True
            if was_public:
                return (
                    f"a redirect from a public address led to {ip}, which is not public "
                    "(SourcePolicy.allow_private is False)"
                )
        elif self.origin_binds():
            return f"{self._feed()} named {ip}, which is not public ({_ORIGIN_RULE})"
        return None

    def origin_binds(self) -> bool:
        """Whether the ``origin`` rule holds: an origin public or unknown, and
        ``allow_private`` False."""
        if self.allow_private or self.origin is None:
            return False
        return self.origin == UNKNOWN_ORIGIN or self.is_public(address(self.origin))

    def _feed(self) -> str:
        if self.origin == UNKNOWN_ORIGIN:
            return "a feed fetched through a proxy from an address not known here (judged public)"
        return f"a feed fetched from the public address {self.origin}"

    def unresolved_refusal(self, host: str, previous: str | None = None) -> str | None:
        """Why a source whose name ``host`` does not resolve here (a proxy would
        connect it) is refused: its address cannot be judged, so under ``allow`` or
        ``deny``, while the ``origin`` rule holds, or when a public address (or a name:
        ``previous``, the hop that redirected here) redirected to it, it is (fail
        closed); ``None``: the proxy may try it."""
        cannot = (
            f"{host} cannot be resolved here, so the address the proxy would reach "
            "cannot be checked"
        )
        if self.allow or self.deny:
            rule = "SourcePolicy.allow" if self.allow else "SourcePolicy.deny"
            return f"{cannot} ({rule})"
        if self.origin_binds():
            return f"{self._feed()} named {host}: {cannot} ({_ORIGIN_RULE})"
        if previous is not None and not self.allow_private:
            try:
                was_public = self.is_public(address(previous))
            except ValueError:
                was_public = True  # a name, judged public (as the redirect rule does)
            if was_public:
                return (
                    f"a redirect from a public address led to {host}: {cannot} "
                    "(SourcePolicy.allow_private is False)"
                )
        return None

    @staticmethod
    def redirect_refusal(old_scheme: str, new_scheme: str) -> str | None:
        """Why a redirect between these schemes is refused (``None``: it is not)."""
        if new_scheme not in ("http", "https"):
            return f"a redirect to a {new_scheme or 'relative'}: address"
        if old_scheme == "https" and new_scheme == "http":
            return "a redirect from https to http"
        return None


class Stream(Protocol):
    """What the pump reads a source through (in its thread)."""

    name: str

    def rewind(self) -> None:
        """Back to the first byte, for a new attempt; ``NotRewindableError`` if the
        source is one-pass and bytes were taken already."""

    def readinto(self, view: memoryview) -> int:
        """Up to ``len(view)`` bytes; 0 at the end."""

    def abort(self) -> None:
        """From any thread: a read waiting now, or any later one, raises
        ``ConnectionAbortedError`` (the upload was cancelled)."""


def _failed(name: str, exc: OSError) -> SourceError:
    return SourceError(
        f"{name}: reading the source failed ({exc.__class__.__name__}: {exc.strerror or exc})",
        status=None,
    )


class BytesStream:
    def __init__(self, data: bytes | bytearray | memoryview, name: str) -> None:
        self._data = memoryview(data).cast("B")
        self._pos = 0
        self.name = name

    def rewind(self) -> None:
        self._pos = 0

    def abort(self) -> None:
        pass  # never waits

    def readinto(self, view: memoryview) -> int:
        n = min(len(view), len(self._data) - self._pos)
        view[:n] = self._data[self._pos : self._pos + n]
        self._pos += n
        return n


class FileObjectStream:
    """A binary file object: seekable ones are re-read from where they stood at first;
    others are one-pass."""

    def __init__(self, fileobj: Any, name: str, start: int | None) -> None:
        self._f = fileobj
        self._start = start  # None: not seekable
        self._taken = 0
        self._stopped = threading.Event()
        self._fd = _waitable_fd(fileobj)
        self.name = name

    def abort(self) -> None:
        self._stopped.set()

    def rewind(self) -> None:
        if self._start is not None:
            self._f.seek(self._start)
        elif self._taken:
            raise NotRewindableError(
                f"{self.name}: the source was read once ({self._taken} bytes) and cannot "
                "be read again, so the failed upload cannot be retried"
            )

    def _read(self, view: memoryview, one: bool) -> int | None:
        reader = getattr(self._f, "readinto1" if one else "readinto", None)
        if reader is None and one:
            reader = getattr(self._f, "readinto", None)
        if reader is not None:
            got: int | None = reader(view)
            return got
        data = self._f.read(len(view))
        if data is None:
            return None
        view[: len(data)] = data
        return len(data)

    def _read_waiting(self, view: memoryview, fd: int) -> int:
        """A pipe, socket or terminal: read without blocking, waiting for data in
        short steps, so that a writer that stopped cannot hold a cancelled upload."""
        blocking = os.get_blocking(fd)
        os.set_blocking(fd, False)
        # poll, not select: a descriptor numbered 1024 or more is past select's limit
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        try:
            while True:
                if self._stopped.is_set():
                    raise ConnectionAbortedError("the upload was cancelled")
                try:
                    got = self._read(view, one=True)
                except BlockingIOError:
                    got = None
                if got is not None:
                    return got
                poller.poll(WAKE_EVERY * 1000)
        finally:
            os.set_blocking(fd, blocking)

    def readinto(self, view: memoryview) -> int:
        if self._stopped.is_set():
            raise ConnectionAbortedError("the upload was cancelled")
        try:
            if self._fd is not None:
                got: int | None = self._read_waiting(view, self._fd)
            else:
                got = self._read(view, one=False)
        except (ConnectionAbortedError, BlockingIOError):
            raise
        except OSError as exc:
            raise _failed(self.name, exc) from exc
        if got is None:  # a non-blocking raw stream with nothing yet
            raise InvalidArgumentError("source", "a non-blocking file object is not readable")
        if not isinstance(got, int):
            raise InvalidArgumentError("source", "read() must return bytes")
        self._taken += got
        return got


class AsyncIterStream:
    """An async iterable of bytes, drawn on the loop while the pump's thread waits."""

    def __init__(
        self, chunks: AsyncIterable[bytes], name: str, loop: asyncio.AbstractEventLoop
    ) -> None:
        self._iter: AsyncIterator[bytes] = aiter(chunks)
        self._loop = loop
        self._left = memoryview(b"")
        self._taken = 0
        self._done = False
        self._pending: concurrent.futures.Future[bytes] | None = None
        self._stopped = False
        self._lock = threading.Lock()
        self.name = name

    def abort(self) -> None:
        """From the loop: stop waiting for the next chunk (the upload is cancelled),
        and never ask for another (an abort between two chunks is not missed)."""
        with self._lock:
            self._stopped = True
            pending = self._pending
        if pending is not None:
            pending.cancel()

    def rewind(self) -> None:
        if self._taken:
            raise NotRewindableError(
                f"{self.name}: the async iterable was consumed ({self._taken} bytes) and "
                "cannot be read again, so the failed upload cannot be retried"
            )

    async def _next(self) -> bytes:
        return await anext(self._iter)

    def readinto(self, view: memoryview) -> int:
        while not self._left and not self._done:
            with self._lock:
                if self._stopped:
                    raise ConnectionAbortedError("the upload was cancelled")
                self._pending = pending = asyncio.run_coroutine_threadsafe(self._next(), self._loop)
            try:
                chunk = pending.result()
            except StopAsyncIteration:
                self._done = True
                break
            except concurrent.futures.CancelledError:
                raise ConnectionAbortedError("the upload was cancelled") from None
            except OSError as exc:
                raise _failed(self.name, exc) from exc
            finally:
                self._pending = None
            if not isinstance(chunk, bytes | bytearray | memoryview):
                raise InvalidArgumentError(
                    "source", f"an async iterable of bytes yielded {type(chunk).__name__}"
                )
            self._left = memoryview(chunk).cast("B")
        n = min(len(view), len(self._left))
        view[:n] = self._left[:n]
        self._left = self._left[n:]
        self._taken += n
        return n


def spool(stream: Stream, folder: str | None = None) -> tuple[str, int]:
    """Copy a stream to a new temporary file (blocking: call in a thread); its path and
    size. Memory: one piece. The caller deletes the file."""
    fd, path = tempfile.mkstemp(prefix="vidapi-spool-", dir=folder)
    size = 0
    try:
        with os.fdopen(fd, "wb") as out:
            buffer = memoryview(bytearray(SPOOL_PIECE))
            while got := stream.readinto(buffer):
                out.write(buffer[:got])
                size += got
    except BaseException:
        os.unlink(path)
        raise
    return path, size


async def spool_async(stream: Stream, folder: str | None = None) -> tuple[str, int]:
    """``spool`` in a thread; cancelled, the stream is aborted and the thread waited for
    (the temporary file is then removed)."""
    copying = asyncio.ensure_future(asyncio.to_thread(spool, stream, folder))
    try:
        return await asyncio.shield(copying)
    except asyncio.CancelledError:
        stream.abort()
        with contextlib.suppress(BaseException):
            await copying
        raise


def _waitable_fd(fileobj: Any) -> int | None:
    """The descriptor of a pipe, socket or terminal (reads there can wait for ever);
    ``None`` for a regular file or an object without one."""
    try:
        fd = fileobj.fileno()
        mode = os.fstat(fd).st_mode
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None
    if not isinstance(fd, int):
        return None
    waits = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)
    return fd if waits else None


def size_of(fileobj: Any) -> tuple[int | None, int | None]:
    """``(start, size from start)`` of a seekable file object, ``(None, None)``
    otherwise (blocking: call in a thread)."""
    try:
        if not fileobj.seekable():
            return None, None
        start = fileobj.tell()
        end = fileobj.seek(0, io.SEEK_END)
        fileobj.seek(start)
    except (AttributeError, OSError, ValueError):
        return None, None
    return start, end - start


@attrs.frozen
class Opened:
    """A source ready to send: a ``stream`` of ``size`` bytes, or (its size was not
    known) ``spooled``, a temporary file holding it that the caller deletes."""

    name: str
    size: int
    stream: Stream | None = None
    spooled: LocalFile | None = None


async def open_source(source: object, size: int | None, loop: asyncio.AbstractEventLoop) -> Opened:
    """A stream of known size, or (size unknown) the source spooled to a temporary file
    that the caller deletes. Nothing here blocks the loop."""
    if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 1):
        raise InvalidArgumentError(
            "size", f"expected a whole number of bytes above 0, got {size!r}"
        )
    stream: Stream
    if isinstance(source, bytes | bytearray | memoryview):
        data = memoryview(source).cast("B")
        if not len(data):
            raise InvalidArgumentError("source", "is empty: nothing to upload")
        if size is not None and size != len(data):
            raise InvalidArgumentError("size", f"the bytes given are {len(data)}, not {size}")
        return Opened(DEFAULT_NAME, len(data), stream=BytesStream(data, DEFAULT_NAME))
    if hasattr(source, "read"):
        if isinstance(source, io.TextIOBase):
            raise InvalidArgumentError("source", "a text file: open it in binary mode ('rb')")
        name = getattr(source, "name", None)
        name = os.path.basename(name) if isinstance(name, str) and name else DEFAULT_NAME
        start, known = await asyncio.to_thread(size_of, source)
        stream = FileObjectStream(source, name, start)
        if size is None:
            size = known
    elif hasattr(source, "__aiter__"):
        stream = AsyncIterStream(source, DEFAULT_NAME, loop)
    else:
        raise InvalidArgumentError(
            "source",
            f"expected a path, bytes, a binary file object or an async iterable of bytes, "
            f"got {type(source).__name__}",
        )
    if size is not None:
        if size == 0:
            raise InvalidArgumentError("source", "is empty: nothing to upload")
        return Opened(stream.name, size, stream=stream)
    path, spooled = await spool_async(stream)
    if not spooled:
        await asyncio.to_thread(os.unlink, path)
        raise InvalidArgumentError("source", "is empty: nothing to upload")
    return Opened(stream.name, spooled, spooled=LocalFile(path, spooled))
