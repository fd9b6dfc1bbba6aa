"""A local emulator of the video platform, for offline work and tests.

Two hosts, as on the real platform: the API (``emu.base_url``; also serves the embed
page, the JS SDK and the videos' pages) and the upload server (``emu.upload_base``),
each on its own port, over http or (``tls=True``, or your own certificate) https.

A video's ``url`` is its page, ``<base_url>/page/video/<id>`` (the platform's
``/video/<id>`` page lives on its web host; here ``/video/<id>`` is the API's). The
video metadata (``description``, ``tags``, ``language``, ``private``, ``explicit``,
``publish_date``, ``expiry_date``, ``geoblocking``, ``thumbnail_url``, ...) is written,
checked and returned with the platform's types: tags and geoblocking as JSON lists,
times as integer UNIX seconds, ``duration`` in seconds (0 when the file could not be
probed).

In-process::

    from vidapi_async.testing import client_for

    async with Emulator() as emu:
        async with client_for(emu) as client:
            video = await client.upload_video("movie.mp4", title="t", channel="news")

Standalone: ``vidapi serve --port 8400 --data-dir ./emu`` (state survives restarts).

The emulator is a second implementation of the platform: nothing here imports the
client package, so it can catch the client's mistakes. Control endpoints on the API
host need the header ``X-Emulator-Control: <emu.control_secret>``: ``POST
/_emulator/reset``, ``GET``/``POST /_emulator/faults`` (JSON of ``Faults``),
``GET /_emulator/requests`` (the request log, secrets masked) and ``GET
/_emulator/stats``.
"""

from __future__ import annotations

import asyncio
import hmac
import os
import secrets
import ssl
import tempfile
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from aiohttp import web

from ._api import routes as api_routes
from ._backend import ALL_SCOPES, Backend
from ._failure import ApiError
from ._formdata import Malformed
from ._library_api import routes as library_routes
from ._platform import (
    MAX_HEADER_BYTES,
    PLATFORM,
    Faults,
    LoggedRequest,
    Platform,
    RequestLog,
    quota_faults,
)
from ._player import routes as player_routes
from ._state import State
from ._tls import make_self_signed, server_context
from ._upload import UploadFailure
from ._upload import routes as upload_routes
from ._v2 import routes as v2_routes
from ._v2 import v2_error_response
from ._v2_library import routes as v2_library_routes
from ._v2_live import routes as v2_live_routes
from ._webhooks import Deliveries
from ._wire import error_response as _legacy_error_response

__all__ = ["ALL_SCOPES", "DEMO_TOKEN", "OTHER_TOKEN", "Emulator", "Faults", "LoggedRequest"]

DEMO_TOKEN = "demo-token"  # noqa: S105 - public by design
"""A token of the user ``demo`` that the emulator accepts from the start, with every
scope, that never expires."""
OTHER_TOKEN = "other-token"  # noqa: S105 - public by design
"""The same for the second user, ``other``: for tests of who may touch what."""
CONTROL_HEADER = "X-Emulator-Control"

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

_UNFAULTED = ("/_emulator/", "/embed/", "/page/", "/js/", "/files/")
_HTTP_ERRORS = {404: "not_found", 405: "method_not_allowed", 413: "request_too_large"}


def _first_segments(*tables: web.RouteTableDef) -> frozenset[str]:
    return frozenset(
        "/" + route.path.removeprefix("/v2").lstrip("/").split("/", 1)[0]
        for table in tables
        for route in table
        if isinstance(route, web.RouteDef)
    )


# API v2's paths the legacy API has nothing under (not /me, which both have)
_V2_FIRST_SEGMENTS = _first_segments(v2_routes, v2_library_routes, v2_live_routes) - (
    _first_segments(api_routes, library_routes, player_routes)
)
_HTTP_MESSAGES = {404: "no such endpoint", 405: "this method is not allowed here"}


def _v2_only(path: str) -> bool:
    """Whether ``path``, not found on the legacy root, is one of API v2's (its first
    segment is one of v2's routes' own)."""
    return "/" + path.lstrip("/").split("/", 1)[0] in _V2_FIRST_SEGMENTS


def _middleware(platform: Platform, host: str) -> Any:
    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        # API v2's paths answer refusals in its own error shape.
        v2 = host == "api" and request.path.startswith("/v2/")
        error_response = v2_error_response if v2 else _legacy_error_response
        size = sum(len(k) + len(v) + 4 for k, v in request.raw_headers)
        if size > MAX_HEADER_BYTES:
            platform.record(host, request, headers_refused=size)
            return _fault(
                host,
                431,
                f"Request headers of {size} bytes: at most {MAX_HEADER_BYTES}.",
                "invalid_request",
                {"Connection": "close"},
                v2,
            )
        platform.record(host, request)
        faults = platform.faults
        faulted = not request.path.startswith(_UNFAULTED) and faults.applies(
            request.method, request.path
        )
        if faulted:
            if faults.latency > 0:
                await asyncio.sleep(faults.latency)
            if faults.draw(faults.rate_limit_rate):
                platform.bump("faults_429")
                return _fault(
                    host,
                    429,
                    "Too many requests.",
                    "rate_limit_exceeded",
                    {"Retry-After": f"{faults.retry_after:g}"},
                    v2,
                )
            if faults.draw(faults.error_rate):
                status = faults.random.choice(faults.error_statuses)
                platform.bump(f"faults_{status}")
                return _fault(host, status, "Injected server error.", "server_error", {}, v2)
        try:
            response = await handler(request)
        except ApiError as err:
            response = error_response(err)
        except UploadFailure as failure:
            response = failure.response()
        except Malformed as exc:
            response = error_response(ApiError(400, "invalid_parameter", str(exc)))
        except web.HTTPException as exc:
            if exc.status < 400:
                raise
            # Unknown routes and methods answer in the platform's format, never text.
            kind = _HTTP_ERRORS.get(exc.status, "invalid_request")
            headers = {"Allow": exc.headers["Allow"]} if "Allow" in exc.headers else {}
            # the client names the request; the answer says what is wrong with it
            message = _HTTP_MESSAGES.get(exc.status, exc.reason)
            if exc.status == 404 and host == "api" and not v2 and _v2_only(request.path):
                message += (
                    f": API v2 is served under /v2 ({platform.backend.api_base}/v2), "
                    "this is the legacy API's root"
                )
            response = _fault(host, exc.status, message, kind, headers, v2)
        if host == "api" and faulted and faults.draw(faults.drop_response_rate):
            platform.bump("faults_dropped_response")
            if request.transport is not None:
                request.transport.abort()  # the answer below goes nowhere
        if faults.segment_bytes and not request.path.startswith("/_emulator/"):
            return await _in_segments(request, response, faults)
        return response

    return middleware


async def _in_segments(
    request: web.Request, response: web.StreamResponse, faults: Faults
) -> web.StreamResponse:
    """Send a buffered answer in pieces with pauses, its Content-Length exact."""
    if not isinstance(response, web.Response) or response.prepared:
        return response  # streamed already (files)
    body = response.body
    if not isinstance(body, bytes) or faults.segment_bytes is None:
        return response
    out = web.StreamResponse(status=response.status, reason=response.reason)
    out.headers.update(response.headers)
    out.content_length = len(body)
    await out.prepare(request)
    step = max(1, faults.segment_bytes)
    for start in range(0, len(body), step):
        if start:
            await asyncio.sleep(faults.segment_delay)
        await out.write(body[start : start + step])
    await out.write_eof()
    return out


def _fault(
    host: str,
    status: int,
    message: str,
    error_type: str,
    headers: Mapping[str, str],
    v2: bool = False,
) -> web.Response:
    if host == "upload":
        return UploadFailure(status, message, headers=headers).response()
    render = v2_error_response if v2 else _legacy_error_response
    return render(ApiError(status, error_type, message, headers=headers))


control = web.RouteTableDef()
CONTROL_SECRET = web.AppKey("control_secret", str)


def _controller(request: web.Request) -> Platform:
    given = request.headers.get(CONTROL_HEADER, "")
    if not hmac.compare_digest(given.encode(), request.app[CONTROL_SECRET].encode()):
        raise ApiError(
            403,
            "access_forbidden",
            f"the control endpoints need the header {CONTROL_HEADER} with the secret "
            "the emulator printed at start",
        )
    return request.app[PLATFORM]


@control.post("/_emulator/reset")
async def reset(request: web.Request) -> web.Response:
    _controller(request).reset()
    return web.json_response({"reset": True})


@control.get("/_emulator/faults")
async def get_faults(request: web.Request) -> web.Response:
    return web.json_response(_controller(request).faults.as_dict())


@control.post("/_emulator/faults")
async def set_faults(request: web.Request) -> web.Response:
    faults = _controller(request).faults
    try:
        faults.update(await request.json())
    except ValueError as exc:  # JSON that does not parse, or a bad value: nothing changed
        raise ApiError(400, "invalid_parameter", str(exc)[:300]) from None
    return web.json_response(faults.as_dict())


@control.get("/_emulator/requests")
async def get_requests(request: web.Request) -> web.Response:
    log = _controller(request).log
    return web.json_response(
        [
            {
                "host": r.host,
                "method": r.method,
                "path": r.path,
                "query": r.query,
                "headers": r.headers,
                "body_size": r.body_size,
            }
            for r in log
        ]
    )


@control.get("/_emulator/stats")
async def get_stats(request: web.Request) -> web.Response:
    platform = _controller(request)
    return web.json_response(
        {
            "videos": platform.state.count("video"),
            "subtitles": platform.state.count("subtitle"),
            "uploads": platform.state.count("upload"),
            **platform.counters,
        }
    )


class Emulator:
    """The platform on 127.0.0.1. Ports default to free ones; ``data_dir`` keeps state
    (SQLite) and files across restarts, otherwise both live in a temporary directory
    removed on close. ``probe=False`` skips ffprobe (about 0.1 s per upload).

    Users: ``demo``/``demo-password`` (static token ``demo-token``) and
    ``other``/``other-password`` (``other-token``), OAuth client
    ``demo-client``/``demo-secret``. ``tokens`` replaces demo's static tokens
    (token -> scopes). API v2's private API keys: ``demo-api-key``/``demo-api-secret``
    (every scope, ``live.manage`` among them) and the others of ``_v2.API_KEYS``;
    ``api_keys`` adds keys or replaces one of the same name: key -> (secret, username,
    the v2 scopes it may be granted), e.g. a key whose plan has no live streaming
    (a token asked with ``live.manage`` is then refused with ``invalid_scope``).

    A new video reads ``status: processing`` (with ``encoding_progress``) for
    ``encoding_delay`` seconds, then ``ready``.

    Upload seals hold escaped reserved characters (``%2F``, ``%3D``, often ``%2B``) and
    are checked as they arrive: a client that re-encodes its upload address is refused
    (403), as the platform's "used exactly as returned" allows. ``escaped_seals=False``
    hands out plain hex seals, for clients that re-encode (the official SDK's chunked
    mode sends ``%2F`` as ``/``).

    ``tls=True`` serves both hosts over https with a self-signed certificate for
    127.0.0.1 (needs the ``tls`` extra); ``tls_cert``/``tls_key`` use your own. Clients
    then trust ``emu.ca_file`` (or ``emu.ssl_context()``).

    ``control_secret`` guards ``/_emulator/*`` (random per start when not given).
    ``body_timeout``: seconds an upload body may stall (a Content-Length larger than
    the body) before the connection is closed. ``header_timeout``: seconds a connection
    may stay without a request (headers unfinished, or idle between requests) before it
    is closed. A request's headers may hold 64 KiB (431 beyond); the request log keeps
    the newest requests within ``log_bytes`` of headers.

    Webhooks: an account's ``webhook_url`` (``POST /me``) gets an event when one of its
    videos is created, becomes ready, fails encoding or is deleted; an attempt without a
    2xx answer is repeated (``webhook_attempts`` in all, waits doubling from
    ``webhook_retry_delay``); ``webhook_deliveries`` logs every attempt.

    ``quota="N/PERIOD"`` (``"15/24h"``, ``"3/4s"``: units s, m, h, d) limits each
    account to N creates in any PERIOD (a rolling window, by the token's account):
    more are refused with 403 ``quota_exceeded`` and a ``Retry-After``. It sets the
    faults ``videos_per_day`` and ``quota_period``.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        upload_port: int = 0,
        data_dir: str | os.PathLike[str] | None = None,
        faults: Faults | None = None,
        token_lifetime: float = 36000.0,
        tokens: Mapping[str, tuple[str, ...]] | None = None,
        api_keys: Mapping[str, tuple[str, str, Iterable[str]]] | None = None,
        public_host: str | None = None,
        probe: bool = True,
        escaped_seals: bool = True,
        encoding_delay: float = 0.2,
        tls: bool = False,
        tls_cert: str | os.PathLike[str] | None = None,
        tls_key: str | os.PathLike[str] | None = None,
        control_secret: str | None = None,
        body_timeout: float = 30.0,
        header_timeout: float = 30.0,
        log_bytes: int = 16 * 1024 * 1024,
        webhook_attempts: int = 5,
        webhook_retry_delay: float = 0.2,
        quota: str | None = None,
    ) -> None:
        if (tls_cert is None) != (tls_key is None):
            raise ValueError("give both tls_cert and tls_key, or neither")
        self._host = host
        self._public_host = public_host or host
        self._probe = probe
        self._escaped_seals = escaped_seals
        self._encoding_delay = encoding_delay
        self._ports = (port, upload_port)
        self._data_dir = os.fspath(data_dir) if data_dir is not None else None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self.faults = faults or Faults()
        """The faults injected; change them while it runs (``emu.faults.error_rate``)."""
        if quota is not None:
            self.faults.update(quota_faults(quota))
        self._token_lifetime = token_lifetime
        self._api_keys = {
            key: (secret, user, tuple(scopes))
            for key, (secret, user, scopes) in (api_keys or {}).items()
        }
        self._tokens: dict[str, tuple[str, ...]] = (
            dict(tokens) if tokens is not None else {DEMO_TOKEN: ALL_SCOPES}
        )
        self._tls = tls or tls_cert is not None
        self._tls_files = (
            (os.fspath(tls_cert), os.fspath(tls_key))
            if tls_cert is not None and tls_key is not None
            else None
        )
        self.control_secret = control_secret or secrets.token_urlsafe(18)
        """The value of the ``X-Emulator-Control`` header that ``/_emulator/*`` needs."""
        self._body_timeout = body_timeout
        self._header_timeout = header_timeout
        self._log_bytes = log_bytes
        self._webhook_attempts = webhook_attempts
        self._webhook_retry_delay = webhook_retry_delay
        self._deliveries: Deliveries | None = None
        self._runners: list[web.AppRunner] = []
        self.platform: Platform | None = None
        """The running platform (handlers' shared state), ``None`` until started."""

    async def __aenter__(self) -> Emulator:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Start both servers. One that fails halfway (a port taken, a task cancelled)
        closes what it had opened: its folder, a TLS key in it, the first server."""
        try:
            await self._start()
        except BaseException:
            await self.close()
            raise

    async def _start(self) -> None:
        if self._data_dir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="vidapi-emulator-")
            root, db = self._tmp.name, None
        else:
            root = self._data_dir
            db = os.path.join(root, "state.sqlite")
        files = os.path.join(root, "files")
        os.makedirs(files, exist_ok=True)
        context = None
        if self._tls:
            if self._tls_files is None:
                self._tls_files = make_self_signed(root, self._public_host)
            context = server_context(*self._tls_files)
        static = {token: ("demo", scopes) for token, scopes in self._tokens.items()}
        static.setdefault(OTHER_TOKEN, ("other", ALL_SCOPES))
        backend = Backend(
            State(db),
            token_lifetime=self._token_lifetime,
            encoding_delay=self._encoding_delay,
            escaped_seals=self._escaped_seals,
            static_tokens=static,
            api_keys=dict(self._api_keys),
            videos_per_day=lambda: self.faults.videos_per_day,
            quota_period=lambda: self.faults.quota_period,
        )
        backend.install_static_tokens()
        self._deliveries = Deliveries(
            backend, attempts=self._webhook_attempts, retry_delay=self._webhook_retry_delay
        )
        backend.on_event = self._deliveries.emit
        platform = Platform(
            backend=backend,
            files_dir=files,
            faults=self.faults,
            probe=self._probe,
            body_timeout=self._body_timeout,
            log=RequestLog(self._log_bytes),
        )
        self.platform = platform
        api = web.Application(middlewares=[_middleware(platform, "api")], client_max_size=1 << 20)
        api[PLATFORM] = platform
        api[CONTROL_SECRET] = self.control_secret
        api.add_routes(api_routes)
        api.add_routes(player_routes)
        api.add_routes(library_routes)
        api.add_routes(v2_routes)
        api.add_routes(v2_library_routes)
        api.add_routes(v2_live_routes)
        api.add_routes(control)
        upload = web.Application(
            middlewares=[_middleware(platform, "upload")], client_max_size=1 << 40
        )
        upload[PLATFORM] = platform
        upload.add_routes(upload_routes)
        bases = []
        scheme = "https" if context else "http"
        for app, port in zip((api, upload), self._ports, strict=True):
            runner = web.AppRunner(
                app,
                access_log=None,
                handler_cancellation=True,
                keepalive_timeout=self._header_timeout,  # from the connection's start
            )
            await runner.setup()
            self._runners.append(runner)
            site = web.TCPSite(runner, self._host, port, backlog=1024, ssl_context=context)
            await site.start()
            actual = runner.addresses[0][1]
            bases.append(f"{scheme}://{self._public_host}:{actual}")
        backend.api_base, backend.upload_base = bases

    async def close(self) -> None:
        """Stop serving and drop a temporary data folder (``async with`` does it)."""
        if self._deliveries is not None:
            await self._deliveries.close()
            self._deliveries = None
        for runner in reversed(self._runners):
            await runner.cleanup()
        self._runners.clear()
        if self.platform is not None:
            self.platform.state.close()
            self.platform = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def _p(self) -> Platform:
        if self.platform is None:
            raise RuntimeError("the emulator is not running: use 'async with Emulator()'")
        return self.platform

    @property
    def base_url(self) -> str:
        """The API's base URL (pass it to ``Client(base_url=...)``)."""
        return self._p().backend.api_base

    @property
    def v2_base_url(self) -> str:
        """API v2's root on the same host and backend (``{base_url}/v2``); its token
        endpoint is ``{v2_base_url}/token`` (client credentials with the API keys of
        ``emulator._v2.API_KEYS``, e.g. ``demo-api-key``/``demo-api-secret``)."""
        return f"{self._p().backend.api_base}/v2"

    @property
    def upload_base(self) -> str:
        """The upload server's base URL (upload addresses point there)."""
        return self._p().backend.upload_base

    @property
    def embed_url(self) -> str:
        """The embed host, for ``vidapi_async.embed`` functions' ``embed_url``."""
        return self._p().backend.api_base

    @property
    def sdk_url(self) -> str:
        """The JS SDK script, for ``embed.sdk_html(sdk_url=...)``."""
        return f"{self._p().backend.api_base}/js/all.js"

    @property
    def token(self) -> str:
        """A ready token of the user ``demo`` with every scope."""
        return next(iter(self._tokens))

    @property
    def ca_file(self) -> str | None:
        """With TLS, the certificate file clients trust (``None`` over plain http)."""
        return self._tls_files[0] if self._tls and self._tls_files else None

    def ssl_context(self) -> ssl.SSLContext | None:
        """With TLS, a client-side context that trusts this emulator (else ``None``)."""
        ca = self.ca_file
        return None if ca is None else ssl.create_default_context(cafile=ca)

    @property
    def state(self) -> State:
        """The stored objects (videos, files, tokens, ...), for tests to inspect."""
        return self._p().backend.store

    @property
    def backend(self) -> Backend:
        """The platform's rules and state, for tests that set up or inspect objects."""
        return self._p().backend

    @property
    def requests(self) -> list[LoggedRequest]:
        """Every request received, oldest first (Authorization and seals masked)."""
        return list(self._p().log)

    def videos(self) -> list[dict[str, Any]]:
        """Every video stored, as the emulator keeps it."""
        return list(self._p().state.all("video"))

    @property
    def webhook_deliveries(self) -> list[dict[str, Any]]:
        """Every webhook delivery attempt (the last 1000), oldest first: ``event``,
        ``type``, ``video_id``, ``url``, ``attempt``, ``status`` or ``error``, ``at``."""
        return [] if self._deliveries is None else list(self._deliveries.log)

    def fail_encoding(self, video_id: str) -> None:
        """Make the video's encoding fail: once ``encoding_delay`` has passed its status
        reads ``encoding_error`` (for tests of code that waits for videos)."""
        store = self._p().backend.store
        video = store.get("video", video_id)
        if video is None:
            raise KeyError(video_id)
        store.put("video", video_id, {**video, "encoding_fails": True})

    def add_profile(self, profile_id: str, *, user: str = "demo", name: str = "") -> str:
        """Give ``user`` (``"demo"`` or ``"other"``) another API v2 profile besides its
        own (whose id is the user's): ``GET /v2/me`` then lists both, videos are created
        under it, and a client without ``profile_id`` is refused as one of a key that
        reaches several. ``profile_id``, returned. ``KeyError`` for an unknown user."""
        backend = self._p().backend
        owner = backend.accounts[user].id
        backend.store.put("profile", profile_id, {"id": profile_id, "owner": owner, "name": name})
        return profile_id

    def reset(self) -> None:
        """Forget all objects and the request log; faults back to none but the quota
        it was started with (``quota=``, ``faults``' ``videos_per_day``/``quota_period``)."""
        self._p().reset()
