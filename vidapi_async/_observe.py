"""What the client tells the outside: the logger tree, OpenTelemetry spans and metrics.

Loggers (``logging.NullHandler`` on the root of the tree): ``vidapi_async`` and its
children ``.http`` (a DEBUG line per request), ``.retry``, ``.upload``, ``.batch``,
``.worker`` and ``.auth``. No line carries a token, seal, password or credential.

Spans and metrics go through the OpenTelemetry API (the ``otel`` extra) when it is
installed: the global providers, or those given to ``Client``. Whether anything records
is decided once per client (``Observer``); with no API installed, or with the API's
no-op providers, every hook is one attribute test. The metrics are also kept in a small
registry of our own (``_metrics``) while a Prometheus endpoint is being served.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import json
import logging
import time
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, Concatenate, Final, ParamSpec, TypeVar
from urllib.parse import parse_qsl, quote, urlsplit

from . import _metrics

__all__ = [
    "ATTEMPT",
    "JsonFormatter",
    "Observer",
    "configure_logging",
    "operation",
    "redacted_url",
]

ROOT: Final = logging.getLogger("vidapi_async")
ROOT.addHandler(logging.NullHandler())
http_log: Final = logging.getLogger("vidapi_async.http")
retry_log: Final = logging.getLogger("vidapi_async.retry")
upload_log: Final = logging.getLogger("vidapi_async.upload")
batch_log: Final = logging.getLogger("vidapi_async.batch")
worker_log: Final = logging.getLogger("vidapi_async.worker")
auth_log: Final = logging.getLogger("vidapi_async.auth")

SCOPE: Final = "vidapi_async"
"""The instrumentation scope name of the tracer and the meter."""

ATTEMPT: contextvars.ContextVar[int] = contextvars.ContextVar("vidapi_attempt", default=1)
"""The attempt of the request being sent (set by ``retrying`` from the second on)."""
ACTIVE: contextvars.ContextVar[Observer | None] = contextvars.ContextVar(
    "vidapi_observer", default=None
)
"""The observer of the operation running (set only when it records something)."""
IN_JOB: contextvars.ContextVar[tuple[Observer, Any] | None] = contextvars.ContextVar(
    "vidapi_in_job", default=None
)
"""A batch job's observer and span, while the job runs: the job is the operation, and the
client methods the job itself calls (its span current) open no span of their own. A
call made with another span current (a task a progress callback starts), or by another
client, is an operation of its own."""

T = TypeVar("T")
S = TypeVar("S")
P = ParamSpec("P")

try:  # the ``otel`` extra
    from opentelemetry import context as otel_context
    from opentelemetry import metrics as otel_metrics
    from opentelemetry import propagate as otel_propagate
    from opentelemetry import trace as otel_trace
except ImportError:  # pragma: no cover - exercised by the benchmark without the extra
    otel_context = None  # type: ignore[assignment]
    otel_trace = None  # type: ignore[assignment]
    otel_metrics = None  # type: ignore[assignment]
    otel_propagate = None  # type: ignore[assignment]


class _Current:
    """``span`` current in the block, then ended: what ``start_as_current_span`` does,
    without its two generator context managers (a third of a span's cost). ``record``:
    an exception (``Exception``, as the API's ``use_span``) is recorded as an event, is
    the span's ``error.type`` and sets the ERROR status with its description (an
    operation's span); otherwise any exception, cancellation included, is the span's
    ``error.type`` (a request's span)."""

    __slots__ = ("_record", "_token", "span")

    def __init__(self, span: Any, record: bool) -> None:
        self.span = span
        self._record = record

    def __enter__(self) -> Any:
        self._token = otel_context.attach(otel_trace.set_span_in_context(self.span))
        return self.span

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        span = self.span
        try:
            otel_context.detach(self._token)
            if exc is None:
                return
            if not self._record:
                Observer.failed(span, exc)
            elif isinstance(exc, Exception) and span.is_recording():
                span.record_exception(exc)
                span.set_attribute("error.type", type(exc).__name__)
                span.set_status(
                    otel_trace.Status(otel_trace.StatusCode.ERROR, f"{type(exc).__name__}: {exc}")
                )
        finally:
            span.end()


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("vidapi-async")
    except metadata.PackageNotFoundError:  # pragma: no cover
        return "0+unknown"


def _recording_tracer(provider: Any) -> Any:
    """A tracer of ``provider`` (or the global one), or ``None`` when it cannot record."""
    if otel_trace is None:
        return None
    if provider is None:
        provider = otel_trace.get_tracer_provider()
        # The API's default (a proxy until an SDK is set) and its explicit no-op record
        # nothing: checked here, once, rather than per call.
        if type(provider).__name__ in ("ProxyTracerProvider", "NoOpTracerProvider"):
            return None
    if type(provider).__name__ == "NoOpTracerProvider":
        return None
    return provider.get_tracer(SCOPE, _version())


def _recording_meter(provider: Any) -> Any:
    if otel_metrics is None:
        return None
    if provider is None:
        provider = otel_metrics.get_meter_provider()
        if type(provider).__name__ in ("_ProxyMeterProvider", "NoOpMeterProvider"):
            return None
    if type(provider).__name__ == "NoOpMeterProvider":
        return None
    return provider.get_meter(SCOPE, _version())


_INSTRUMENT: Final = {"gauge": "up_down_counter"}
"""The OpenTelemetry instrument of a Prometheus type, where their names differ."""


class Observer:
    """A client's tracer and instruments, decided once. ``tracer`` is ``None`` when no
    span would record; ``metering`` is false when no metric would be kept."""

    def __init__(self, tracer_provider: Any = None, meter_provider: Any = None) -> None:
        self.tracer = _recording_tracer(tracer_provider)
        self.meter = meter = _recording_meter(meter_provider)
        self._instruments: dict[str, Any] = {}
        if meter is not None:  # a Prometheus gauge is an up-down counter here
            for name, (kind, _, unit, text) in _metrics.KINDS.items():
                create = getattr(meter, f"create_{_INSTRUMENT.get(kind, kind)}")
                more = {}
                if kind == "histogram":  # the SDK's default buckets are for milliseconds
                    more["explicit_bucket_boundaries_advisory"] = _metrics.buckets(name)
                self._instruments[name] = create(name, unit=unit, description=text, **more)
        self._labels: dict[tuple[str, str, int, int | None], dict[str, Any]] = {}
        """The attributes of ``request_done``'s records, one dict per method, server and
        status (never changed once made: the SDK keys its series on them)."""

    @property
    def active(self) -> bool:
        """Whether anything at all is recorded (spans, metrics or the endpoint)."""
        return self.tracer is not None or self.meter is not None or _metrics.REGISTRY.on

    # --- spans ----------------------------------------------------------------------

    def http_span(self, method: str, url: str, body_size: int | None, **more: Any) -> _Current:
        """A CLIENT span for one request, current in the block (only call with
        ``self.tracer`` set). Its attributes (``more`` too) are given at its start, as the
        HTTP conventions ask of those a sampler may read; an exception leaving the block
        is its ``error.type`` and ERROR status."""
        attributes = _request_attributes(method, url, body_size)
        if more:
            attributes.update(more)
        span = self.tracer.start_span(
            method, kind=otel_trace.SpanKind.CLIENT, attributes=attributes
        )
        return _Current(span, record=False)

    def span(self, name: str) -> _Current:
        """An INTERNAL span current in the block (exceptions recorded, ERROR status), as
        ``start_as_current_span`` makes it (only call with ``self.tracer`` set)."""
        return _Current(self.tracer.start_span(name), record=True)

    @staticmethod
    def failed(span: Any, exc: BaseException) -> None:
        """A request's span that ended in ``exc``: its class is the ``error.type`` (or
        the ``error_type`` it names: an upload stopped by the loop, named by why)."""
        span.set_attribute("error.type", getattr(exc, "error_type", None) or type(exc).__name__)
        span.set_status(otel_trace.StatusCode.ERROR)

    @staticmethod
    def answered(span: Any, status: int) -> None:
        """The answer's status on a request's span (an error status is its error.type)."""
        if status >= 400:  # a client span's 4xx and 5xx are errors (the conventions)
            span.set_attributes({"http.response.status_code": status, "error.type": str(status)})
            span.set_status(otel_trace.StatusCode.ERROR)
        else:
            span.set_attribute("http.response.status_code", status)

    def inject(self, headers: dict[str, str]) -> None:
        """``traceparent`` of the current span into ``headers`` (API calls only)."""
        if otel_propagate is not None:
            otel_propagate.inject(headers)

    # --- metrics --------------------------------------------------------------------

    def request_done(
        self, method: str, url: str, status: int | None, seconds: float, size: int | None
    ) -> None:
        _, host, port = url_facts(url)
        if port is None:  # the scheme's own: API calls and uploads are told apart by it
            port = 443 if url.startswith("https:") else 80
        attributes = self._labels.get((method, host, port, status))
        if attributes is None:
            attributes = {"http.request.method": method}
            if host:
                attributes["server.address"] = host
                attributes["server.port"] = port
            if status is not None:
                attributes["http.response.status_code"] = status
            if len(self._labels) < 256:
                self._labels[(method, host, port, status)] = attributes
        if self.meter is not None:
            self._instruments["http.client.request.duration"].record(seconds, attributes)
            if size is not None:
                self._instruments["http.client.request.body.size"].record(size, attributes)
        if _metrics.REGISTRY.on:
            _metrics.REGISTRY.observe("http.client.request.duration", seconds, attributes)
            if size is not None:
                _metrics.REGISTRY.observe("http.client.request.body.size", size, attributes)

    def _add(self, name: str, value: float, labels: dict[str, str]) -> None:
        if self.meter is not None:
            self._instruments[name].add(value, labels or None)
        if _metrics.REGISTRY.on:
            _metrics.REGISTRY.add(name, value, labels)

    def uploaded(self, size: int) -> None:
        self._add("vidapi.upload.bytes", size, {})

    def retried(self, reason: str) -> None:
        self._add("vidapi.retries", 1, {"reason": reason})

    def quota_refused(self) -> None:
        self._add("vidapi.quota.refusals", 1, {})

    def job_started(self) -> int | None:
        """A job in flight; the Prometheus registry's generation that counted it, if one
        did (its end is taken off there only in that generation: an endpoint started
        meanwhile counts from its start, never below zero)."""
        counted = _metrics.REGISTRY.generation if _metrics.REGISTRY.on else None
        self._add("vidapi.jobs.in_flight", 1, {})
        return counted

    def job_finished(self, outcome: str | None, seconds: float, counted: int | None = None) -> None:
        """A job's end: out of flight; counted and timed by ``outcome`` unless ``None``
        (a job cancelled with its batch). ``counted``: what ``job_started`` said."""
        if self.meter is not None:
            self._instruments["vidapi.jobs.in_flight"].add(-1)
        if counted is not None and counted == _metrics.REGISTRY.generation:
            _metrics.REGISTRY.add("vidapi.jobs.in_flight", -1, {})
        if outcome is None:
            return
        self._add("vidapi.jobs", 1, {"outcome": outcome})
        if self.meter is not None:
            self._instruments["vidapi.job.duration"].record(seconds, {"outcome": outcome})
        if _metrics.REGISTRY.on:
            _metrics.REGISTRY.observe("vidapi.job.duration", seconds, {"outcome": outcome})

    @contextlib.contextmanager
    def job_span(self) -> Iterator[None]:
        """``vidapi job``, labelled with its key by ``label_job`` once it is known."""
        token = ACTIVE.set(self)
        try:
            if self.tracer is None:
                yield
            else:
                with self.span("vidapi job") as span:
                    in_job = IN_JOB.set((self, span))
                    try:
                        yield
                    finally:
                        IN_JOB.reset(in_job)
        finally:
            ACTIVE.reset(token)

    def job_failed(self, error: BaseException | None) -> None:
        """The job's span (current) marked failed, with its error's class."""
        if self.tracer is not None:
            span = otel_trace.get_current_span()
            if error is not None:
                span.set_attribute("error.type", type(error).__name__)
            span.set_status(otel_trace.StatusCode.ERROR)

    def label_job(self, key: str, size: int | None = None) -> None:
        """The job's key (a digest or the caller's key, never a url) on its span, and
        its file's size when it has one."""
        if self.tracer is not None:
            span = otel_trace.get_current_span()
            span.set_attribute(JOB_KEY, key)
            if size is not None:
                span.set_attribute(SOURCE_SIZE, size)

    def label_video(self, video_id: str | None) -> None:
        """The job's video id, once known, on its span (current)."""
        if self.tracer is not None and video_id is not None:
            otel_trace.get_current_span().set_attribute(VIDEO_ID, video_id)


JOB_KEY: Final = "vidapi.job.key"
"""A batch job's key, on its ``vidapi job`` span."""
VIDEO_ID: Final = "vidapi.video.id"
"""The video an operation (or a batch job) works on, once known."""
SOURCE_SIZE: Final = "vidapi.source.size"
"""The bytes of the file (or source of known size) an upload sends."""


def describe(requester: Any, name: str, value: str | int | None) -> None:
    """``name = value`` on the span of the operation running, sent through ``requester``
    (a client's ``_requester.Requester``): what identifies the work (``VIDEO_ID``,
    ``SOURCE_SIZE``), never a title or a secret. In a batch job, whose calls open no span
    of their own, it is the job's span. Nothing when the client records no traces, or
    ``value`` is ``None``."""
    if value is None:
        return
    observer: Observer = requester.transport.observer
    if observer.tracer is not None:
        otel_trace.get_current_span().set_attribute(name, value)


PLAIN_QUERY: Final = frozenset(
    {"fields", "page", "limit", "sort", "search", "tags", "channel", "owners", "flags"}
)
"""Query parameters of the API that never hold a secret; any other value is redacted."""


def _request_attributes(method: str, url: str, body_size: int | None) -> dict[str, Any]:
    """OpenTelemetry's HTTP client attributes of a request about to be sent."""
    full, host, port = url_facts(url)
    attributes: dict[str, Any] = {
        "http.request.method": method,
        "url.full": full,
        "server.address": host,
    }
    if port is not None:
        attributes["server.port"] = port
    if body_size is not None:
        attributes["http.request.body.size"] = body_size
    attempt = ATTEMPT.get()
    if attempt > 1:
        attributes["http.request.resend_count"] = attempt - 1
    return attributes


def redacted_url(url: str) -> str:
    """``url`` with any ``user:password@`` as ``REDACTED:REDACTED@`` and every query value
    (seals, signatures, tokens) but the API's plain parameters (``PLAIN_QUERY``) replaced by
    ``REDACTED``, as OpenTelemetry's ``url.full`` asks."""
    return url_facts(url)[0]


@functools.lru_cache(maxsize=256)
def url_facts(url: str) -> tuple[str, str, int | None]:
    """``url.full`` (``redacted_url``), ``server.address`` and ``server.port`` of ``url``;
    the parts that repeat from request to request (server, query) are parsed once, and a
    url asked again (its span, then its metrics) is not parsed again."""
    scheme, _, rest = url.partition("://")
    rest = rest.partition("#")[0]
    cut = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
    netloc, tail = rest[:cut], rest[cut:]
    path, asked, query = tail.partition("?")
    origin, host, port = _server(scheme, netloc)
    full = origin + path + ("?" + _redacted_query(query) if asked else "")
    return full, host, port


@functools.lru_cache(maxsize=64)
def _server(scheme: str, netloc: str) -> tuple[str, str, int | None]:
    parts = urlsplit(f"{scheme}://{netloc}")
    at = "@" in netloc
    origin = f"{scheme}://{'REDACTED:REDACTED@' if at else ''}{netloc.rpartition('@')[2]}"
    try:
        port = parts.port
    except ValueError:
        port = None
    return origin, parts.hostname or "", port


@functools.lru_cache(maxsize=256)
def _redacted_query(query: str) -> str:
    parts = []
    for part in query.split("&"):
        if not part:
            continue
        [(name, value)] = parse_qsl(part, keep_blank_values=True) or [("", "")]
        if name in PLAIN_QUERY:
            parts.append(f"{name}={quote(value)}")
        else:  # a bare key may itself be the secret (``?TOKEN``): its name goes too
            parts.append(f"{name}=REDACTED" if "=" in part else "REDACTED")
    return "&".join(parts)


def operation(
    name: str,
) -> Callable[
    [Callable[Concatenate[S, P], Coroutine[Any, Any, T]]],
    Callable[Concatenate[S, P], Coroutine[Any, Any, T]],
]:
    """A method of a client's namespace (each holds the client's ``_requester``) traced as
    ``vidapi <name>`` when its client records. The method keeps its signature for type
    checkers and editors (``ParamSpec``): a wrong keyword or type is caught statically."""
    span_name = f"vidapi {name}"

    def decorate(
        method: Callable[Concatenate[S, P], Coroutine[Any, Any, T]],
    ) -> Callable[Concatenate[S, P], Coroutine[Any, Any, T]]:
        @functools.wraps(method)
        async def traced(self: S, /, *args: P.args, **kwargs: P.kwargs) -> T:
            # Each namespace of the client holds the client's requester.
            observer: Observer = self._requester.transport.observer  # type: ignore[attr-defined]
            if observer.tracer is None or _in_own_job(observer):
                if observer.meter is None and not _metrics.REGISTRY.on:
                    return await method(self, *args, **kwargs)
                token = ACTIVE.set(observer)
                try:
                    return await method(self, *args, **kwargs)
                finally:
                    ACTIVE.reset(token)
            token = ACTIVE.set(observer)
            try:
                with observer.span(span_name):
                    return await method(self, *args, **kwargs)
            finally:
                ACTIVE.reset(token)

        return traced

    return decorate


def outside_job(call: Callable[..., T], *args: Any) -> T:
    """``call(*args)``, the caller's own callback, run as the caller's code: a client call
    it starts is an operation of its own, not folded into the job that reported."""
    token = IN_JOB.set(None)
    try:
        return call(*args)
    finally:
        IN_JOB.reset(token)


def _in_own_job(observer: Observer) -> bool:
    """Called by a batch job of ``observer``'s, its span current (``IN_JOB``)."""
    job = IN_JOB.get()
    return job is not None and job[0] is observer and otel_trace.get_current_span() is job[1]


def retried(reason: str) -> None:
    """Count a retry with the observer of the operation running, if any."""
    observer = ACTIVE.get()
    if observer is not None:
        observer.retried(reason)


def monotonic() -> float:
    return time.perf_counter()


# --- log output for the CLI ---------------------------------------------------------


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ``time`` (UTC, ISO 8601 with milliseconds and ``Z``),
    ``level`` (lower case), ``logger``, ``message``; with an exception attached, also
    ``error`` (its class and message) and ``traceback`` (the text Python would print).
    A message of several lines stays one line (JSON escapes its newlines)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            line["error"] = f"{type(exc).__name__}: {exc}"
            line["traceback"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


JsonFormatter.converter = time.gmtime

DB_LOGGERS: Final = ("psycopg", "psycopg_pool")
"""Loggers of the PostgreSQL driver and its pool: shown by the CLI at debug only."""
LEVELS: Final = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING}


def _not_ours(record: logging.LogRecord) -> bool:
    """A record of another library's logger: ours and the database driver's have
    handlers of their own (the driver's shown at debug only)."""
    return not any(
        record.name == name or record.name.startswith(name + ".")
        for name in (ROOT.name, *DB_LOGGERS)
    )


def configure_logging(verbosity: int, fmt: str = "text", env: str | None = None) -> None:
    """The CLI's log output on stderr: warnings only (as Python shows them without any
    configuration), ``-v`` INFO, ``-vv`` (or ``VIDAPI_LOG=debug``) DEBUG with the time,
    level and logger of each line; ``fmt`` ``"json"`` writes one JSON object per line
    (INFO unless more is asked), Python's warnings included (``py.warnings``), so that
    nothing else reaches stderr as text."""
    level: int | None = None
    if env:
        level = LEVELS.get(env.strip().lower())
    if verbosity >= 2:
        level = logging.DEBUG
    elif verbosity == 1 and (level is None or level > logging.INFO):
        level = logging.INFO
    handler = logging.StreamHandler()
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
        level = logging.INFO if level is None else level
    elif level is None or level >= logging.WARNING:
        handler.setFormatter(logging.Formatter("%(message)s"))  # the lines as before
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    # psycopg's pool warns at each reconnect attempt while PostgreSQL is away (server
    # text included); our Outage says so once: theirs only at debug, else dropped (a
    # NullHandler keeps Python's last-resort handler from printing them)
    debug = level is not None and level <= logging.DEBUG
    quiet = logging.NullHandler()
    pairs: list[tuple[logging.Logger, logging.Handler | None]] = [(ROOT, handler)]
    pairs += [(logging.getLogger(name), handler if debug else quiet) for name in DB_LOGGERS]
    # JSON: nothing else reaches stderr as text. Other libraries' warnings and errors
    # (the queue's, asyncio's), which Python's last-resort handler would print as text,
    # and Python's warnings (``py.warnings``) are lines like ours, through the root logger
    logging.captureWarnings(fmt == "json")
    others = None
    if fmt == "json":
        others = logging.StreamHandler()
        others.setFormatter(JsonFormatter())
        others.addFilter(_not_ours)
    pairs.append((logging.getLogger(), others))
    for logger, own in pairs:
        for old in [h for h in logger.handlers if getattr(h, "vidapi_cli", False)]:
            logger.removeHandler(old)  # main() run again in one process: one handler
        if own is not None:
            own.vidapi_cli = True  # type: ignore[attr-defined]
            logger.addHandler(own)
    ROOT.setLevel(logging.WARNING if level is None else level)
    if env and env.strip().lower() not in LEVELS:
        ROOT.warning("VIDAPI_LOG=%r is not a level: debug, info or warning (ignored)", env)
