"""The metrics kept for a Prometheus endpoint, and the endpoint itself.

No dependency: a small registry (counters, up-down counters, histograms with fixed
buckets) fed by ``_observe.Observer`` while ``REGISTRY.on``, rendered in the Prometheus
text exposition format (0.0.4) by a small HTTP/1 server on the running event loop, bound
to 127.0.0.1 by default: one answer per connection, a deadline for each, a bound on how
many are open (a thread per connection was held by any client that kept talking slowly).
The text is made off the loop, one render at a time, and holds at most ``MAX_SERIES``
label sets per metric (the server names hosts: their count is not ours to bound).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import re
import socket
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import Final

from ._validate import positive_int, positive_number

__all__ = ["REGISTRY", "MetricsServer", "Registry", "claim"]

KINDS: Final = {
    # name: (Prometheus type, Prometheus unit suffix, OpenTelemetry unit, description);
    # the one list of the client's metrics: ``_observe`` makes its instruments from it.
    "http.client.request.duration": ("histogram", "seconds", "s", "HTTP request time"),
    "http.client.request.body.size": ("histogram", "bytes", "By", "HTTP request body sizes"),
    "vidapi.upload.bytes": ("counter", "bytes", "By", "bytes of files uploaded"),
    "vidapi.retries": ("counter", "", "{retry}", "requests tried again, by reason"),
    "vidapi.jobs": ("counter", "", "{job}", "batch jobs finished, by outcome"),
    "vidapi.job.duration": ("histogram", "seconds", "s", "time a batch job took"),
    "vidapi.quota.refusals": ("counter", "", "{refusal}", "the platform's quota refusals"),
    "vidapi.jobs.in_flight": ("gauge", "", "{job}", "batch jobs running"),
    "vidapi.queue.jobs": ("gauge", "", "{job}", "a shared queue's jobs, by state"),
    "vidapi.quota.used": ("gauge", "", "{video}", "places used in each account's quota window"),
    "vidapi.quota.next_free": (
        "gauge",
        "seconds",
        "s",
        "seconds until each account's quota window frees a place",
    ),
    "vidapi.quota.finish_estimate": (
        "gauge",
        "seconds",
        "s",
        "estimated seconds until each paced account's jobs are done",
    ),
}
DEADLINE: Final = 10.0
"""Seconds an endpoint's client has from connecting to its answer (Prometheus's own
scrape timeout by default)."""
MAX_CONNECTIONS: Final = 32
"""Connections an endpoint keeps open at once."""
LINGER = 1.0
"""Seconds an answered connection stays open once its whole answer left (for its client
to read it and close first); then it is closed. Past the bound it goes first."""
MAX_SERIES: Final = 500
"""Label sets kept per metric; a metric's later new ones are counted under one label
set whose every value is ``other`` (the label values a server hands out, such as its
upload hosts, are not ours to bound)."""
OTHER: Final = "other"
MAX_HEAD: Final = 8192
"""The largest request head read (a scrape's is a few hundred bytes)."""
BACKLOG: Final = 128
SECONDS_BUCKETS: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)
BYTES_BUCKETS: Final = tuple(float(4**n) for n in range(4, 18))

Labels = tuple[tuple[str, str], ...]

JOB_OUTCOMES: Final = (
    "done", "failed", "skipped", "updated", "adopted", "lost", "requeued",
)  # fmt: skip
"""``vidapi.jobs``' outcomes: a ``JobStatus``, or a shared queue's job given back."""
AT_START: Final[Mapping[str, tuple[Labels, ...]]] = {
    "vidapi.jobs": tuple((("outcome", outcome),) for outcome in JOB_OUTCOMES),
}
"""The label sets a counter shows at 0 from the start: each one known in advance (as
Prometheus advises); a counter not here shows one sample without labels (its labels,
if any, are not known in advance: a retry's reason is a status or an error's class)."""


class Registry:
    """Values by metric and label set; ``on`` while at least one endpoint serves them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self.on = False
        self.generation = 0
        """Counts up each time a first endpoint starts the values from zero."""
        self._sums: dict[tuple[str, Labels], float] = {}
        self._hist: dict[tuple[str, Labels], list[float]] = {}
        self._series: dict[str, int] = {}
        """How many label sets each metric has."""

    def start(self) -> None:
        with self._lock:
            if self._users == 0:  # a new endpoint starts from zero, as a new process does
                self.generation += 1
                self._sums.clear()
                self._hist.clear()
                self._series.clear()
                self._sums[self._key("vidapi.jobs.in_flight", ())] = 0.0  # 0 from the start
                for name, (kind, *_) in KINDS.items():
                    for labels in AT_START.get(name, ((),)) if kind == "counter" else ():
                        self._sums[self._key(name, labels)] = 0.0  # every counter (issue 28)
            self._users += 1
            self.on = True

    def stop(self) -> None:
        with self._lock:
            self._users -= 1
            self.on = self._users > 0

    @staticmethod
    def _labels(labels: Mapping[str, object]) -> Labels:
        return tuple(sorted((_text(k), _text(v)) for k, v in labels.items()))

    def _key(self, name: str, labels: Labels) -> tuple[str, Labels]:
        """``(name, labels)``, or its ``other`` label set past ``MAX_SERIES``. Under the
        lock."""
        key = (name, labels)
        if key in self._sums or key in self._hist:
            return key
        if self._series.get(name, 0) >= MAX_SERIES:
            key = (name, tuple((k, OTHER) for k, _ in labels))
            if key in self._sums or key in self._hist:
                return key
        self._series[name] = self._series.get(name, 0) + 1
        return key

    def add(self, name: str, value: float, labels: Mapping[str, object]) -> None:
        found = self._labels(labels)
        with self._lock:
            key = self._key(name, found)
            self._sums[key] = self._sums.get(key, 0.0) + value

    def set(self, name: str, value: float, labels: Mapping[str, object]) -> None:
        """A gauge's value now (not added to the last)."""
        key = (name, self._labels(labels))
        with self._lock:
            self._sums[key] = value

    def observe(self, name: str, value: float, labels: Mapping[str, object]) -> None:
        bounds = buckets(name)
        found = self._labels(labels)
        with self._lock:
            key = self._key(name, found)
            counts = self._hist.setdefault(key, [0.0] * (len(bounds) + 2))
            for i, bound in enumerate(bounds):
                if value <= bound:
                    counts[i] += 1
            counts[-2] += value
            counts[-1] += 1

    def render(self) -> str:
        """The Prometheus text format of every value kept."""
        with self._lock:
            sums = dict(self._sums)
            hist = {k: list(v) for k, v in self._hist.items()}
        lines: list[str] = []
        for name, (kind, unit, _, help_text) in KINDS.items():
            base = name.replace(".", "_")
            if unit and not base.endswith(f"_{unit}"):
                base += f"_{unit}"
            if kind == "histogram":
                rows = [(labels, v) for (n, labels), v in hist.items() if n == name]
                lines += [f"# HELP {base} {help_text}", f"# TYPE {base} histogram"]
                for labels, counts in sorted(rows):
                    for bound, count in zip(buckets(name), counts, strict=False):
                        lines.append(f"{base}_bucket{_fmt(labels, le=_num(bound))} {_num(count)}")
                    lines.append(f"{base}_bucket{_fmt(labels, le='+Inf')} {_num(counts[-1])}")
                    lines.append(f"{base}_sum{_fmt(labels)} {_num(counts[-2])}")
                    lines.append(f"{base}_count{_fmt(labels)} {_num(counts[-1])}")
                continue
            values = sorted((labels, v) for (n, labels), v in sums.items() if n == name)
            # a counter's samples, HELP and TYPE all say ``_total`` (as the Prometheus
            # client writes them): TYPE without it leaves the samples untyped to a parser
            base += "_total" if kind == "counter" else ""
            lines += [f"# HELP {base} {help_text}", f"# TYPE {base} {kind}"]
            for labels, value in values:
                lines.append(f"{base}{_fmt(labels)} {_num(value)}")
        return "\n".join(lines) + "\n"


def buckets(name: str) -> tuple[float, ...]:
    """A histogram's bucket bounds: seconds or bytes, by its unit."""
    return BYTES_BUCKETS if KINDS[name][1] == "bytes" else SECONDS_BUCKETS


def _num(value: float) -> str:
    if not math.isfinite(value):  # as Prometheus spells them
        return "NaN" if math.isnan(value) else "+Inf" if value > 0 else "-Inf"
    return repr(float(value)) if value != int(value) else str(int(value))


def _text(value: object) -> str:
    """``value`` as text that encodes as UTF-8 (a lone surrogate, from bytes that were
    not UTF-8, is written ``\\udcff``): one bad label must not break every scrape."""
    return str(value).encode("utf-8", "backslashreplace").decode("utf-8")


def rendered() -> bytes | None:
    """The text a scrape is answered with, or ``None`` (answered 500) if it cannot be
    made. Run off the loop."""
    try:
        return REGISTRY.render().encode()
    except Exception:  # a 500, not a connection dropped unanswered
        return None


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _fmt(labels: Iterable[tuple[str, str]], **more: str) -> str:
    pairs = [(k.replace(".", "_"), v) for k, v in labels] + list(more.items())
    if not pairs:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in pairs) + "}"


REGISTRY: Final = Registry()


_CLAIMED: dict[tuple[str, int], socket.socket] = {}
"""Listening sockets bound ahead by ``claim``, by address, for a ``MetricsServer``."""
_CLAIMED_LOCK: Final = threading.Lock()


def _bind(host: str, port: int) -> socket.socket:
    return socket.create_server((host, port), backlog=BACKLOG)


@contextlib.contextmanager
def claim(port: int, host: str = "127.0.0.1") -> Iterator[int]:
    """Bind ``host:port`` now (port 0: a free one) and keep it for the ``MetricsServer``
    made for that port inside the block, which serves on this very socket: nobody can
    take the port between the two. Yields the port; an unused socket is closed on
    leaving. A busy port raises ``OSError`` at once."""
    sock = _bind(host, port)
    address = (host, sock.getsockname()[1])
    with _CLAIMED_LOCK:
        _CLAIMED[address] = sock
    try:
        yield address[1]
    finally:
        with _CLAIMED_LOCK:
            left = _CLAIMED.pop(address, None)
        if left is not None:
            left.close()


def _claimed_or_bound(host: str, port: int) -> socket.socket:
    with _CLAIMED_LOCK:
        sock = _CLAIMED.pop((host, port), None) if port else None
    return _bind(host, port) if sock is None else sock


class MetricsServer:
    """``/metrics`` in the Prometheus text format on ``host:port`` (port 0: any free
    one; ``port`` says which), served on the event loop running when it is made, until
    ``close`` (or ``aclose``, which also waits for its connections to be gone).

    The port is bound at once (a busy one raises ``OSError`` before anything else;
    a port bound ahead with ``claim`` is served on its socket) and the process's counts
    start then. Each connection gets one answer, then is closed: by its client, or
    ``LINGER`` seconds after the answer left. A request not answered within
    ``deadline`` seconds from its connection is dropped, and at most
    ``max_connections`` are open: past it, an answered one is dropped first, else the
    oldest still waiting for its request, never the newest, so idle, slow or silent
    clients never keep a scrape out (the bound is enforced once the loop has read what
    the connections that came meanwhile sent: a scrape in a burst of silent connects
    has its request read first). The text is made off the loop, one render at a
    time (scrapes that come during one share the next). Made on the loop's thread;
    ``close`` from another thread is handed to it."""

    def __init__(
        self,
        port: int,
        host: str = "127.0.0.1",
        *,
        deadline: float = DEADLINE,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self.deadline = positive_number(deadline, "deadline")
        self.max_connections = positive_int(max_connections, "max_connections")
        self._sock = _claimed_or_bound(host, port)
        self.port: int = self._sock.getsockname()[1]
        self._open: dict[_Connection, None] = {}
        """The connections counted against the bound, oldest first."""
        self._alive: set[_Connection] = set()
        """Every connection not yet gone (a dropped one included, until it is)."""
        self._gone: asyncio.Future[None] | None = None
        self._server: asyncio.Server | None = None
        self._rendering: asyncio.Task[None] | None = None
        self._next_text: asyncio.Future[bytes | None] | None = None
        self._shut = False
        self._trimming = False
        self.closed = False
        REGISTRY.start()
        self._starting = self._loop.create_task(self._serve(), name="vidapi-metrics")

    async def _serve(self) -> None:
        # no suspension before ``start_serving``: a ``close`` meanwhile finds either
        # no server (the socket is closed alone) or one serving (it is closed)
        self._server = await self._loop.create_server(
            lambda: _Connection(self), sock=self._sock, start_serving=False
        )
        await self._server.start_serving()
        try:  # until closed; a loop that ends (asyncio.run cancels what runs) closes it
            await self._loop.create_future()
        finally:
            self.close()

    @property
    def connections(self) -> int:
        """How many connections are open (at most ``max_connections``)."""
        return len(self._open)

    def _admit(self, conn: _Connection) -> None:
        self._alive.add(conn)
        self._open[conn] = None
        if self.closed:
            conn.drop()
        elif len(self._open) > self.max_connections and not self._trimming:
            # Trimmed once the loop has read what the connections that came meanwhile
            # sent (two turns: their readers are added on the next): a scrape, which
            # sends its request at once, is then being answered, not dropped among a
            # burst of silent connections. Until then the bound is exceeded by what
            # one turn accepts at most (``BACKLOG``).
            self._trimming = True
            self._loop.call_soon(self._loop.call_soon, self._trim)

    def _trim(self) -> None:
        self._trimming = False
        newest = next(reversed(self._open), None)
        while len(self._open) > self.max_connections and newest is not None:
            self._victim(newest).drop()

    def _victim(self, newest: _Connection) -> _Connection:
        """Who makes room for ``newest``: the oldest answered (its answer has left),
        else the oldest still waiting for its request, else the oldest being answered;
        never ``newest`` (a scrape is always the newest when it comes)."""
        others = [c for c in self._open if c is not newest]
        for state in (_SENT, _READING, _ANSWERING):
            for conn in others:
                if conn.state == state:
                    return conn
        return newest  # pragma: no cover - only with max_connections < 1

    def _forget(self, conn: _Connection, gone: bool) -> None:
        self._open.pop(conn, None)
        if gone:
            self._alive.discard(conn)
            if not self._alive and self._gone is not None and not self._gone.done():
                self._gone.set_result(None)

    def _text(self) -> asyncio.Future[bytes | None]:
        """The text of a render begun after this call (``None``: it failed). One at a
        time, off the loop: scrapes that come while one runs share the next."""
        text = self._next_text
        if text is None:
            text = self._next_text = self._loop.create_future()
            if self._rendering is None:
                self._render()
        return text

    def _render(self) -> None:
        waiting, self._next_text = self._next_text, None
        assert waiting is not None

        async def render() -> None:
            text = await asyncio.to_thread(rendered)
            if not waiting.done():
                waiting.set_result(text)

        def done(_: object) -> None:
            self._rendering = None
            if self._next_text is not None and not self.closed:
                self._render()

        self._rendering = self._loop.create_task(render(), name="vidapi-metrics-render")
        self._rendering.add_done_callback(done)

    def close(self) -> None:
        """Stop serving at once: the port is closed, every connection dropped. From
        another thread, this is handed to the loop's thread (``aclose`` on the loop
        then waits for it)."""
        if self.closed:
            return
        self.closed = True
        try:
            if threading.get_ident() == self._thread or self._loop.is_closed():
                self._shut_down()
            else:
                try:
                    self._loop.call_soon_threadsafe(self._shut_down)
                except RuntimeError:  # the loop closed meanwhile
                    self._shut_down()
        finally:
            REGISTRY.stop()

    def _shut_down(self) -> None:
        if self._shut:
            return
        self._shut = True
        try:
            if not self._loop.is_closed():
                self._starting.cancel()
                if self._server is not None:
                    self._server.close()
                if self._next_text is not None:
                    self._next_text.cancel()
            for conn in list(self._alive):
                conn.drop()
        finally:
            self._sock.close()

    async def aclose(self) -> None:
        """``close``, then wait until every connection is gone (at most ``deadline``
        seconds: each was dropped at once)."""
        self.close()
        self._shut_down()  # a close from another thread may not have run yet
        await asyncio.wait([self._starting, *filter(None, [self._rendering])])
        if self._alive:
            if self._gone is None:
                self._gone = self._loop.create_future()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._gone), self.deadline)

    async def __aenter__(self) -> MetricsServer:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


_READING, _ANSWERING, _SENT = "reading", "answering", "sent"
"""A connection's states: reading its request; its request whole, its answer being
made or written; its whole answer handed to the system."""


class _Connection(asyncio.Protocol):
    """One client: its request's head read up to the blank line, one answer, closed."""

    def __init__(self, server: MetricsServer) -> None:
        self._server = server
        self._transport: asyncio.Transport | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._head = bytearray()
        self.state = _READING

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        # told (resume_writing) when every byte written has been handed to the system
        transport.set_write_buffer_limits(high=0)
        self._timer = self._server._loop.call_later(self._server.deadline, self.drop)
        self._server._admit(self)

    def data_received(self, data: bytes) -> None:
        if self.state != _READING:
            return  # what follows the request is read and dropped until the client closes
        self._head += data
        if bytes(self._head[:1]) in (b"\r", b"\n"):  # empty lines before the request line
            del self._head[: len(self._head) - len(self._head.lstrip(b"\r\n"))]
        end = _END_OF_HEAD.search(self._head)
        if (len(self._head) if end is None else end.start()) > MAX_HEAD:
            self._answer(431, b"request head too large\n")
        elif end is not None:
            status, body, head_only = _answer_to(bytes(self._head[: end.start()]))
            if status != 200:
                self._answer(status, body)
                return
            self.state = _ANSWERING
            self._head.clear()
            self._server._text().add_done_callback(lambda text: self._scraped(text, head_only))

    def _scraped(self, text: asyncio.Future[bytes | None], head_only: bool) -> None:
        if self._transport is None or self._transport.is_closing() or text.cancelled():
            return  # dropped meanwhile
        body = text.result()
        if body is None:
            self._answer(500, b"the metrics could not be rendered\n")
        else:
            self._answer(200, body, head_only)

    def eof_received(self) -> bool:
        return False  # the transport closes: the client said all it will

    def connection_lost(self, exc: Exception | None) -> None:
        # a scraper that hung up (Prometheus closes a scrape that timed out) ends here:
        # no traceback on stderr
        if self._timer is not None:
            self._timer.cancel()
        self._server._forget(self, gone=True)

    def drop(self) -> None:
        """Close at once (the deadline, the bound, the endpoint closing, the linger)."""
        self._server._forget(self, gone=False)
        if self._transport is not None:
            with contextlib.suppress(RuntimeError):  # its loop is closed: nothing to do
                self._transport.abort()

    def resume_writing(self) -> None:
        if self.state == _ANSWERING:
            self._sent()

    def _sent(self) -> None:
        """The whole answer is with the system: the client has ``LINGER`` seconds to
        read it and close, then it is closed (the system still sends what it holds)."""
        self.state = _SENT
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._server._loop.call_later(LINGER, self.drop)

    def _answer(self, status: int, body: bytes, head_only: bool = False) -> None:
        assert self._transport is not None
        self.state = _ANSWERING
        self._head.clear()
        kind = "text/plain; version=0.0.4; charset=utf-8" if status == 200 else "text/plain"
        lines = [
            f"HTTP/1.1 {status} {_REASONS[status]}",
            f"Content-Type: {kind}",
            f"Content-Length: {len(body)}",
            "Connection: close",
        ]
        if status == 405:
            lines.append("Allow: GET, HEAD")
        self._transport.write("\r\n".join([*lines, "", ""]).encode())
        if not head_only:
            self._transport.write(body)
        # Half-closed: the client reads the answer to its end, then closes (read on
        # until then, so that unread bytes do not turn the close into a reset that
        # could cut the answer); ``LINGER`` after the answer left, or the deadline,
        # drops one that never does.
        if self._transport.can_write_eof():
            self._transport.write_eof()
        else:  # pragma: no cover - TLS or a platform without half-close
            self._transport.close()
        if self._transport.get_write_buffer_size() == 0:
            self._sent()


_END_OF_HEAD: Final = re.compile(rb"\r?\n\r?\n")
_REQUEST_LINE: Final = re.compile(rb"([A-Z]+) (\S+) HTTP/1\.[0-9]")
_ABSOLUTE_FORM: Final = re.compile(rb"https?://[^/?#]*", re.IGNORECASE)
_REASONS: Final = {
    200: "OK",
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
}


def _answer_to(head: bytes) -> tuple[int, bytes, bool]:
    """The status and body a request's head gets, and whether the body is left out; a
    scrape is ``200`` with no body (the caller renders it)."""
    line = _REQUEST_LINE.fullmatch(head.split(b"\n", 1)[0].rstrip(b"\r"))
    if line is None:
        return 400, b"not an HTTP/1 request\n", False
    method, target = line.groups()
    if method not in (b"GET", b"HEAD"):
        return 405, b"GET or HEAD only\n", False
    absolute = _ABSOLUTE_FORM.match(target)  # RFC 9112: a server accepts this form
    if absolute is not None:
        target = target[absolute.end() :] or b"/"
    if target.split(b"?", 1)[0] != b"/metrics":
        return 404, b"only /metrics here\n", False
    return 200, b"", method == b"HEAD"
