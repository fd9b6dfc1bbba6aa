"""What every emulator handler shares: the state, the configuration, the fault injector
and the request log."""

from __future__ import annotations

import random
import time
from collections import deque
from typing import Any

import attrs
from aiohttp import web

from ._state import ALL_SCOPES, State

__all__ = ["PLATFORM", "Faults", "LoggedRequest", "Platform"]


@attrs.define
class Faults:
    """Faults the emulator injects, for tests and benchmarks. Rates are fractions (0-1)
    of the requests concerned; ``seed`` makes the draws repeatable.

    Settable at start (``Emulator(faults=Faults(...))``, ``vidapi serve --error-rate``)
    and at run time (``emu.faults.error_rate = 0.2`` or ``POST /_emulator/faults``).
    """

    error_rate: float = 0.0
    """API and upload requests answered with a status from ``error_statuses``."""
    error_statuses: tuple[int, ...] = (500, 502, 503)
    rate_limit_rate: float = 0.0
    """API and upload requests answered 429 with ``Retry-After: retry_after``."""
    retry_after: float = 1.0
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
    videos_per_day: int | None = None
    """Quota: creating more videos than this in 24 h is refused (403 quota_exceeded)."""
    methods: tuple[str, ...] | None = None
    """Inject only into requests with these methods (``None``: all)."""
    paths: tuple[str, ...] | None = None
    """Inject only into requests whose path starts with one of these (``None``: all)."""
    seed: int | None = None
    random: random.Random = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        self.random = random.Random(self.seed)  # noqa: S311 - fault draws, not secrets

    def draw(self, rate: float) -> bool:
        return rate > 0 and self.random.random() < rate

    def applies(self, method: str, path: str) -> bool:
        """Whether faults are injected into this request at all."""
        if self.methods is not None and method not in self.methods:
            return False
        return self.paths is None or path.startswith(self.paths)

    def update(self, values: dict[str, Any]) -> None:
        names = {f.name for f in attrs.fields(Faults)}
        unknown = set(values) - names
        if unknown:
            raise ValueError(f"unknown fault settings: {', '.join(sorted(unknown))}")
        for key, value in values.items():
            listed = key in ("error_statuses", "methods", "paths") and value is not None
            setattr(self, key, tuple(value) if listed else value)
        if "seed" in values:
            self.random = random.Random(self.seed)  # noqa: S311

    def as_dict(self) -> dict[str, Any]:
        return attrs.asdict(self, filter=lambda a, _: a.name != "random")


@attrs.frozen
class LoggedRequest:
    """A request as it arrived, for tests to assert on. Authorization is masked."""

    host: str
    """``"api"`` or ``"upload"``."""
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body_size: int | None
    at: float


@attrs.define
class Platform:
    state: State
    files_dir: str
    faults: Faults
    token_lifetime: float = 36000.0
    probe: bool = True
    """Read codecs, dimension, duration and bitrate with ffprobe (when installed)."""
    clients: dict[str, str] = attrs.Factory(lambda: {"demo-client": "demo-secret"})
    """OAuth clients: client_id -> client_secret."""
    users: dict[str, str] = attrs.Factory(lambda: {"demo": "demo-password"})
    """Accounts for the password grant: username -> password."""
    static_tokens: dict[str, tuple[str, ...]] = attrs.Factory(lambda: {"demo-token": ALL_SCOPES})
    """Tokens that exist from the start, never expire, and survive a reset."""
    api_base: str = ""
    upload_base: str = ""
    log: deque[LoggedRequest] = attrs.Factory(lambda: deque(maxlen=10000))
    counters: dict[str, int] = attrs.Factory(dict)
    progress: dict[str, int] = attrs.Factory(dict)
    """Bytes received so far by uploads in flight (kept in memory, not in SQLite)."""

    def user_id(self, username: str) -> str:
        return "x" + "".join(c for c in username.lower() if c.isalnum())[:10] + "u"

    def install_static_tokens(self) -> None:
        for token, scopes in self.static_tokens.items():
            self.state.put(
                "token",
                token,
                {
                    "id": token,
                    "owner": self.user_id("demo"),
                    "scopes": sorted(scopes),
                    "expires_at": time.time() + 10 * 365 * 86400,
                },
            )

    def reset(self) -> None:
        """Forget every object, the log and counters; no faults. Static tokens stay."""
        self.state.reset()
        self.install_static_tokens()
        self.log.clear()
        self.counters.clear()
        self.progress.clear()
        self.faults.update({f: v for f, v in Faults().as_dict().items() if f != "seed"})

    def record(self, host: str, request: web.Request) -> None:
        headers = dict(request.headers)
        if "Authorization" in headers:
            scheme = headers["Authorization"].split(" ", 1)[0]
            headers["Authorization"] = f"{scheme} ***"
        self.log.append(
            LoggedRequest(
                host=host,
                method=request.method,
                path=request.path,
                query=dict(request.query),
                headers=headers,
                body_size=request.content_length,
                at=time.time(),
            )
        )

    def bump(self, name: str) -> None:
        self.counters[name] = self.counters.get(name, 0) + 1


PLATFORM = web.AppKey("platform", Platform)
