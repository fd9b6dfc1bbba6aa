"""The metrics kept for a Prometheus endpoint, and the endpoint itself.

No dependency: a small registry (counters, up-down counters, histograms with fixed
buckets) fed by ``_observe.Observer`` while ``REGISTRY.on``, rendered in the Prometheus
text exposition format (0.0.4) by a small HTTP/1 server on the running event loop, bound
to 127.0.0.1 by default: one answer per connection, a deadline for each, a bound on how
many are open (a thread per connection was held by any client that kept talking slowly).
"""

from __future__ import annotations

import asyncio
import re
import socket
import threading
from collections.abc import Iterable, Mapping
from typing import Final

from ._validate import positive_int, positive_number

__all__ = ["REGISTRY", "MetricsServer", "Registry"]

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
}
DEADLINE: Final = 10.0
"""Seconds an endpoint's client has from connecting to its answer (Prometheus's own
scrape timeout by default)."""
MAX_CONNECTIONS: Final = 32
"""Connections an endpoint keeps open at once."""
MAX_HEAD: Final = 8192
"""The largest request head read (a scrape's is a few hundred bytes)."""
BACKLOG: Final = 128
SECONDS_BUCKETS: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)
BYTES_BUCKETS: Final = tuple(float(4**n) for n in range(4, 18))

Labels = tuple[tuple[str, str], ...]

JOB_OUTCOMES: Final = ("done", "failed", "skipped", "lost", "requeued")
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

    def start(self) -> None:
        with self._lock:
            if self._users == 0:  # a new endpoint starts from zero, as a new process does
                self.generation += 1
                self._sums.clear()
                self._hist.clear()
                self._sums[("vidapi.jobs.in_flight", ())] = 0.0  # 0 from the start
                for name, (kind, *_) in KINDS.items():
                    for labels in AT_START.get(name, ((),)) if kind == "counter" else ():
                        self._sums[(name, labels)] = 0.0  # every counter too (issue 28)
            self._users += 1
            self.on = True

    def stop(self) -> None:
        with self._lock:
            self._users -= 1
            self.on = self._users > 0

    @staticmethod
    def _labels(labels: Mapping[str, object]) -> Labels:
        return tuple(sorted((k, str(v)) for k, v in labels.items()))

    def add(self, name: str, value: float, labels: Mapping[str, object]) -> None:
        key = (name, self._labels(labels))
        with self._lock:
            self._sums[key] = self._sums.get(key, 0.0) + value

    def observe(self, name: str, value: float, labels: Mapping[str, object]) -> None:
        bounds = buckets(name)
        key = (name, self._labels(labels))
        with self._lock:
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
    return repr(float(value)) if value != int(value) else str(int(value))


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _fmt(labels: Iterable[tuple[str, str]], **more: str) -> str:
    pairs = [(k.replace(".", "_"), v) for k, v in labels] + list(more.items())
    if not pairs:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in pairs) + "}"


REGISTRY: Final = Registry()


class MetricsServer:
    """``/metrics`` in the Prometheus text format on ``host:port`` (port 0: any free
    one; ``port`` says which), served on the event loop running when it is made, until
    ``close`` (or ``aclose``, which also waits for its connections to be gone).

    The port is bound at once (a busy one raises ``OSError`` before anything else) and
    the process's counts start then. Each connection gets one answer, then is closed;
    a request not answered within ``deadline`` seconds from its connection is dropped,
    and at most ``max_connections`` are open: past it, the oldest still waiting for its
    request (else the oldest) is dropped, so idle or slow clients never keep a scrape
    out. Made and closed on the loop's thread."""

    def __init__(
        self,
        port: int,
        host: str = "127.0.0.1",
        *,
        deadline: float = DEADLINE,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        self._loop = asyncio.get_running_loop()
        self.deadline = positive_number(deadline, "deadline")
        self.max_connections = positive_int(max_connections, "max_connections")
        self._sock = socket.create_server((host, port), backlog=BACKLOG)
        self.port: int = self._sock.getsockname()[1]
        self._open: dict[_Connection, None] = {}
        """The connections counted against the bound, oldest first."""
        self._alive: set[_Connection] = set()
        """Every connection not yet gone (a dropped one included, until it is)."""
        self._gone: asyncio.Future[None] | None = None
        self._server: asyncio.Server | None = None
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

    @property
    def connections(self) -> int:
        """How many connections are open (at most ``max_connections``)."""
        return len(self._open)

    def _admit(self, conn: _Connection) -> None:
        self._alive.add(conn)
        self._open[conn] = None
        if self.closed:
            conn.drop()
        while len(self._open) > self.max_connections:
            # the oldest still waiting for its request, else the oldest being answered
            victim = next((c for c in self._open if not c.answered), next(iter(self._open)))
            victim.drop()

    def _forget(self, conn: _Connection, gone: bool) -> None:
        self._open.pop(conn, None)
        if gone:
            self._alive.discard(conn)
            if not self._alive and self._gone is not None and not self._gone.done():
                self._gone.set_result(None)

    def close(self) -> None:
        """Stop serving at once: the port is closed, every connection dropped."""
        if self.closed:
            return
        self.closed = True
        self._starting.cancel()
        if self._server is not None:
            self._server.close()
        self._sock.close()
        for conn in list(self._open):
            conn.drop()
        REGISTRY.stop()

    async def aclose(self) -> None:
        """``close``, then wait until every connection is gone."""
        self.close()
        await asyncio.wait([self._starting])
        if self._alive:
            if self._gone is None:
                self._gone = self._loop.create_future()
            await asyncio.shield(self._gone)

    async def __aenter__(self) -> MetricsServer:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class _Connection(asyncio.Protocol):
    """One client: its request's head read up to the blank line, one answer, closed."""

    def __init__(self, server: MetricsServer) -> None:
        self._server = server
        self._transport: asyncio.Transport | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._head = bytearray()
        self.answered = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        self._timer = self._server._loop.call_later(self._server.deadline, self.drop)
        self._server._admit(self)

    def data_received(self, data: bytes) -> None:
        if self.answered:
            return  # what follows the request is read and dropped until the client closes
        self._head += data
        end = _END_OF_HEAD.search(self._head)
        if (len(self._head) if end is None else end.start()) > MAX_HEAD:
            self._answer(431, b"request head too large\n")
        elif end is not None:
            self._answer(*_answer_to(bytes(self._head[: end.start()])))

    def eof_received(self) -> bool:
        return False  # the transport closes: the client said all it will

    def connection_lost(self, exc: Exception | None) -> None:
        # a scraper that hung up (Prometheus closes a scrape that timed out) ends here:
        # no traceback on stderr
        if self._timer is not None:
            self._timer.cancel()
        self._server._forget(self, gone=True)

    def drop(self) -> None:
        """Close at once (the deadline, the bound, the endpoint closing)."""
        self._server._forget(self, gone=False)
        if self._transport is not None:
            self._transport.abort()

    def _answer(self, status: int, body: bytes, head_only: bool = False) -> None:
        assert self._transport is not None
        self.answered = True
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
        # could cut the answer); the deadline drops one that never does.
        if self._transport.can_write_eof():
            self._transport.write_eof()
        else:  # pragma: no cover - TLS or a platform without half-close
            self._transport.close()


_END_OF_HEAD: Final = re.compile(rb"\r?\n\r?\n")
_REQUEST_LINE: Final = re.compile(rb"([A-Z]+) (\S+) HTTP/1\.[0-9]")
_REASONS: Final = {
    200: "OK",
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    431: "Request Header Fields Too Large",
}


def _answer_to(head: bytes) -> tuple[int, bytes, bool]:
    """The status and body a request's head gets, and whether the body is left out."""
    line = _REQUEST_LINE.fullmatch(head.split(b"\n", 1)[0].rstrip(b"\r"))
    if line is None:
        return 400, b"not an HTTP/1 request\n", False
    method, target = line.groups()
    if method not in (b"GET", b"HEAD"):
        return 405, b"GET or HEAD only\n", False
    if target.split(b"?", 1)[0] != b"/metrics":
        return 404, b"only /metrics here\n", False
    return 200, REGISTRY.render().encode(), method == b"HEAD"
