"""What every emulator handler shares: the backend (state and rules), the fault
injector, the request log and the counters."""

from __future__ import annotations

import math
import random
import re
import time
from collections import deque
from collections.abc import Iterator
from typing import Any

import attrs
from aiohttp import web

from ._backend import Backend
from ._state import State

__all__ = ["PLATFORM", "Faults", "LoggedRequest", "Platform", "quota_faults"]

_RATES = ("error_rate", "rate_limit_rate", "reset_rate", "drop_response_rate")
_SECONDS = {
    "retry_after": 86400.0,
    "latency": 60.0,
    "segment_delay": 10.0,
    "quota_period": 366 * 86400.0,
}


@attrs.define
class Faults:
    """Faults the emulator injects, for tests and benchmarks. Rates are fractions (0-1)
    of the requests concerned; ``seed`` makes the draws repeatable.

    Settable at start (``Emulator(faults=Faults(...))``, ``vidapi serve --error-rate``)
    and at run time (``emu.faults.error_rate = 0.2`` or ``POST /_emulator/faults``,
    where every value is checked first and a bad one changes nothing).
    """

    error_rate: float = 0.0
    """API and upload requests answered with a status from ``error_statuses``."""
    error_statuses: tuple[int, ...] = (500, 502, 503)
    """The statuses ``error_rate`` answers with, drawn at random."""
    rate_limit_rate: float = 0.0
    """API and upload requests answered 429 with ``Retry-After: retry_after``."""
    retry_after: float = 1.0
    """Seconds the 429s of ``rate_limit_rate`` ask to wait."""
    latency: float = 0.0
    """Seconds added before every API and upload answer (a WAN is ~0.02)."""
    reset_rate: float = 0.0
    """Upload bodies cut off half way by closing the connection."""
    drop_response_rate: float = 0.0
    """API requests that are carried out but whose answer is lost (the connection is
    closed instead): the "did my create happen?" case."""
    segment_bytes: int | None = None
    """Write every answer body in pieces of this many bytes, pausing ``segment_delay``
    seconds between them: a client that takes the first piece for the whole answer
    fails (what a real network does to large answers)."""
    segment_delay: float = 0.0
    """Seconds between the pieces of ``segment_bytes``."""
    videos_per_day: int | None = None
    """Quota: an account creating more videos than this in ``quota_period`` seconds (a
    rolling window, each account its own) is refused (403 quota_exceeded, with a
    ``Retry-After`` saying when the window's oldest video leaves it)."""
    quota_period: float = 86400.0
    """The quota's window, in seconds (24 h; short for tests and demos: ``quota="3/4s"``)."""
    methods: tuple[str, ...] | None = None
    """Inject only into requests with these methods (``None``: all)."""
    paths: tuple[str, ...] | None = None
    """Inject only into requests whose path starts with one of these (``None``: all)."""
    seed: int | None = None
    """Seeds the draws: the same faults, request for request (``None``: random)."""
    random: random.Random = attrs.field(init=False, repr=False, eq=False)
    """The source of the draws (made from ``seed``)."""

    def __attrs_post_init__(self) -> None:
        self.random = random.Random(self.seed)  # noqa: S311 - fault draws, not secrets

    def draw(self, rate: float) -> bool:
        """Whether a fault of ``rate`` strikes this time."""
        return rate > 0 and self.random.random() < rate

    def applies(self, method: str, path: str) -> bool:
        """Whether faults are injected into this request at all."""
        if self.methods is not None and method not in self.methods:
            return False
        return self.paths is None or path.startswith(self.paths)

    def update(self, values: object) -> None:
        """Set several faults at once: all are checked first (``ValueError`` naming the
        bad one), then set together."""
        if not isinstance(values, dict):
            raise ValueError("expected a JSON object of fault settings")
        names = {f.name for f in attrs.fields(Faults)} - {"random"}
        unknown = set(values) - names
        if unknown:
            raise ValueError(f"unknown fault settings: {', '.join(sorted(map(str, unknown)))}")
        checked = {key: _checked(key, value) for key, value in values.items()}
        for key, value in checked.items():
            setattr(self, key, value)
        if "seed" in checked:
            self.random = random.Random(self.seed)  # noqa: S311

    def as_dict(self) -> dict[str, Any]:
        """The settings as JSON-ready values (``GET /_emulator/faults``)."""
        return attrs.asdict(self, filter=lambda a, _: a.name != "random")


_QUOTA = re.compile(r"\s*(\d+)\s*/\s*(\d*\.?\d+)\s*(s|m|h|d)\s*")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def quota_faults(quota: str) -> dict[str, Any]:
    """The faults of a quota written ``N/PERIOD`` (``15/24h``, ``3/4s``; units s, m, h,
    d): ``videos_per_day`` and ``quota_period``; ``ValueError`` saying the form else."""
    match = _QUOTA.fullmatch(quota)
    if match is None or int(match[1]) < 1 or float(match[2]) <= 0:
        raise ValueError(f"quota {quota!r}: expected VIDEOS/PERIOD such as 15/24h or 3/4s")
    values = {"videos_per_day": int(match[1]), "quota_period": float(match[2]) * _UNIT[match[3]]}
    return {key: _checked(key, value) for key, value in values.items()}


def _number(key: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{key} must be a number")
    return float(value)


def _checked(key: str, value: object) -> Any:
    """A fault setting's value, or ``ValueError`` saying what it must be."""
    if key in _RATES:
        rate = _number(key, value)
        if not 0 <= rate <= 1:
            raise ValueError(f"{key} must be a fraction from 0 to 1")
        return rate
    if key in _SECONDS:
        seconds = _number(key, value)
        if key == "quota_period" and seconds <= 0:
            raise ValueError("quota_period must be above 0 seconds")
        if not 0 <= seconds <= _SECONDS[key]:
            raise ValueError(f"{key} must be 0 to {_SECONDS[key]:g} seconds")
        return seconds
    if key in ("segment_bytes", "videos_per_day", "seed"):
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < (key != "seed"):
            raise ValueError(f"{key} must be a whole number{' above 0' if key != 'seed' else ''}")
        return value
    if key == "error_statuses":
        if not isinstance(value, list | tuple) or not value:
            raise ValueError("error_statuses must be a list of statuses")
        if not all(
            isinstance(s, int) and not isinstance(s, bool) and 400 <= s <= 599 for s in value
        ):
            raise ValueError("error_statuses must be HTTP statuses from 400 to 599")
        return tuple(value)
    # methods, paths
    if value is None:
        return None
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{key} must be a list of strings or null")
    return tuple(value)


@attrs.frozen
class LoggedRequest:
    """A request as it arrived, for tests to assert on. Authorization, the control
    secret and upload seals are masked."""

    host: str
    """``"api"`` or ``"upload"``."""
    method: str
    """The request's method."""
    path: str
    """Its path, percent-escapes decoded."""
    query: dict[str, str]
    """Its query parameters (seals masked)."""
    headers: dict[str, str]
    """Its headers (credentials masked)."""
    body_size: int | None
    """The body's size in bytes, when it had one."""
    at: float
    """When it arrived (``time.time()``)."""


_MASKED_HEADERS = frozenset({"authorization", "x-emulator-control"})

MAX_HEADER_BYTES = 64 * 1024
"""A request's headers may hold this much (names, values, separators); 431 beyond."""


class RequestLog:
    """The newest requests whose headers fit in ``max_bytes`` (and at most
    ``max_entries``): a server left running cannot be grown without end by its log."""

    def __init__(self, max_bytes: int = 16 * 1024 * 1024, max_entries: int = 10000) -> None:
        self._entries: deque[tuple[LoggedRequest, int]] = deque()
        self._bytes = 0
        self.max_bytes = max_bytes
        self.max_entries = max_entries

    def append(self, entry: LoggedRequest) -> None:
        size = 64 + sum(len(k) + len(v) for k, v in entry.headers.items())
        size += sum(len(k) + len(v) for k, v in entry.query.items()) + len(entry.path)
        self._entries.append((entry, size))
        self._bytes += size
        while self._entries and (
            self._bytes > self.max_bytes or len(self._entries) > self.max_entries
        ):
            self._bytes -= self._entries.popleft()[1]

    def clear(self) -> None:
        self._entries.clear()
        self._bytes = 0

    def __iter__(self) -> Iterator[LoggedRequest]:
        return (entry for entry, _ in list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)


@attrs.define
class Platform:
    backend: Backend
    files_dir: str
    faults: Faults
    probe: bool = True
    """Read codecs, dimension, duration and bitrate with ffprobe (when installed)."""
    body_timeout: float = 30.0
    """Seconds an upload body may stall before the connection is closed."""
    log: RequestLog = attrs.Factory(RequestLog)
    counters: dict[str, int] = attrs.Factory(dict)
    progress: dict[str, int] = attrs.Factory(dict)
    """Bytes received so far by uploads in flight (kept in memory, not in SQLite)."""
    busy: set[str] = attrs.Factory(set)
    """Uploads a single-shot request is writing now: a second one at once gets 409."""
    quota: dict[str, Any] = attrs.field(init=False)
    """The quota the platform was started with (``videos_per_day``, ``quota_period``:
    ``Emulator(quota=)``, ``vidapi serve --quota``), which a reset keeps."""

    def __attrs_post_init__(self) -> None:
        self.quota = {
            "videos_per_day": self.faults.videos_per_day,
            "quota_period": self.faults.quota_period,
        }

    @property
    def state(self) -> State:
        return self.backend.store

    def reset(self) -> None:
        """Forget every object, the log and counters; no faults but the quota it was
        started with. Static tokens stay."""
        self.backend.reset()
        self.log.clear()
        self.counters.clear()
        self.progress.clear()
        cleared = {f: v for f, v in Faults().as_dict().items() if f != "seed"}
        self.faults.update({**cleared, **self.quota})

    def record(self, host: str, request: web.Request, headers_refused: int = 0) -> None:
        headers = dict(request.headers)
        if headers_refused:  # refused (431): not kept
            headers = {"X-Emulator-Refused": f"{headers_refused} bytes of headers"}
        for name, value in headers.items():
            if name.lower() in _MASKED_HEADERS:  # header names: any case
                scheme = value.split(" ", 1)[0] if name.lower() == "authorization" else ""
                headers[name] = f"{scheme} ***".strip()
        query = {k: ("***" if k == "seal" else v) for k, v in request.query.items()}
        self.log.append(
            LoggedRequest(
                host=host,
                method=request.method,
                path=request.path,
                query=query,
                headers=headers,
                body_size=request.content_length,
                at=time.time(),
            )
        )

    def bump(self, name: str) -> None:
        self.counters[name] = self.counters.get(name, 0) + 1


PLATFORM = web.AppKey("platform", Platform)
