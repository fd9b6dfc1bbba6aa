"""Incoming webhook events: the payload and its signature (decided here, since the
platform documents neither), a pure parser, an event source for ``wait_until_ready``,
and an ASGI app. The ``aiohttp.web`` handler lives in ``_aio._webhook_handler`` (aiohttp stays
in ``_aio``); ``vidapi_async.webhooks`` is the public face of both.

The payload (what the bundled emulator sends), one JSON object per request::

    {"id": "3f2a...", "type": "video.format.ready", "timestamp": 1732380000,
     "data": {"video_id": "x84sh87", "owner_id": "xdemou", "status": "ready"}}

``type`` is one of the platform's event names (``video.created``, ``video.deleted``,
``video.published``, ``video.format.processing``, ``video.format.ready``,
``video.format.error``, ``video.format.deleted``, or a newer one: kept as text).
The parser also reads ``event`` for ``type`` and a top-level ``video_id``.

The signature, when the webhook was set with a ``secret``: a header
``X-Vidapi-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`` keyed by
the secret (Stripe's scheme). The timestamp bounds replays (``tolerance``, 5 minutes by
default); several ``v1=`` values may be sent while a secret is rotated.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import re
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any, Final

import attrs

from ._errors import InvalidArgumentError, WebhookError, WebhookSignatureError
from ._validate import positive_int, positive_number

__all__ = [
    "BODY_TIMEOUT",
    "EVENT_TYPES",
    "FAILED_EVENTS",
    "MAX_BODY_BYTES",
    "MAX_CONCURRENT_BODIES",
    "READY_EVENTS",
    "SIGNATURE_HEADER",
    "WebhookEvent",
    "WebhookEvents",
    "asgi_app",
    "check_secret",
    "parse_event",
    "sign",
]

SIGNATURE_HEADER: Final = "X-Vidapi-Signature"
EVENT_TYPES: Final = (
    "video.created",
    "video.deleted",
    "video.published",
    "video.format.processing",
    "video.format.ready",
    "video.format.error",
    "video.format.deleted",
)
"""The event names the platform documents (``set_webhook(events=...)``)."""
READY_EVENTS: Final = frozenset({"video.format.ready", "video.published"})
FAILED_EVENTS: Final = frozenset({"video.format.error", "video.deleted"})
MAX_BODY_BYTES: Final = 1 << 20
"""The largest event body the handlers read (an event is a few hundred bytes)."""
BODY_TIMEOUT: Final = 10.0
"""How long the handlers wait for an event's whole body, in seconds (an event is a few
hundred bytes: a body that stops short is answered 408 then, not waited for)."""
STAMP_DIGITS: Final = 12
"""The most digits a signature's ``t=`` may have (unix seconds have 10 until 2286)."""
MAX_CONCURRENT_BODIES: Final = 64
"""How many event bodies a handler reads at once (each up to ``MAX_BODY_BYTES``); a
request past it is answered 503 at once, which the platform retries later."""
TOLERANCE: Final = 300.0
"""How old a signature may be, in seconds, by default."""
_MAC: Final = re.compile(r"[0-9a-f]{64}")


def check_secret(secret: object) -> None:
    """A signing secret is a non-empty string (or ``None``: no signature checked); an
    empty one would accept what anybody signs with an empty key."""
    if secret is not None and (not isinstance(secret, str) or not secret):
        raise InvalidArgumentError(
            "secret", "expected a non-empty string (or None: signatures not checked)"
        )


@attrs.frozen
class WebhookEvent:
    """One event the platform sent. ``data`` holds the payload's ``data`` as sent."""

    type: str
    """``video.format.ready`` and the like; a newer name is kept as is."""
    video_id: str | None = None
    """The video the event is about, when it is about one."""
    owner_id: str | None = None
    """The account the event belongs to."""
    id: str | None = None
    """The event's own id (the same on every retry of one delivery: deduplicate by it)."""
    timestamp: int | None = None
    """When it happened, UNIX seconds."""
    data: Mapping[str, Any] = attrs.field(factory=dict, repr=False)
    """The payload's ``data`` object, as sent."""

    @property
    def is_ready(self) -> bool:
        """The video became playable."""
        return self.type in READY_EVENTS

    @property
    def failed(self) -> bool:
        """The video will not become playable (encoding failed, or it was deleted)."""
        return self.type in FAILED_EVENTS


def sign(body: bytes, secret: str, timestamp: int) -> str:
    """The ``X-Vidapi-Signature`` value for ``body`` sent at ``timestamp``."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp},v1={mac.hexdigest()}"


def _verify(
    body: bytes, header: str | None, secret: str, tolerance: float, now: float | None
) -> None:
    if not header:
        raise WebhookSignatureError(f"no {SIGNATURE_HEADER} header")
    stamp, macs = None, []
    for part in header.split(","):
        key, _, value = part.strip().partition("=")
        if key == "t" and value.isascii() and value.isdigit() and len(value) <= STAMP_DIGITS:
            stamp = int(value)
        elif key == "v1" and _MAC.fullmatch(value.strip()):  # hex digits, nothing else
            macs.append(value.strip())
    if stamp is None or not macs:
        raise WebhookSignatureError(f"{SIGNATURE_HEADER} does not parse")
    expected = sign(body, secret, stamp).rpartition("v1=")[2]
    if not any(hmac.compare_digest(expected.encode(), m.encode()) for m in macs):
        raise WebhookSignatureError("the signature does not verify with the secret")
    if abs((time.time() if now is None else now) - stamp) > tolerance:
        raise WebhookSignatureError(f"the signature is older than {tolerance:g} s")


def _text(data: Mapping[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = data.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def parse_event(
    body: bytes,
    headers: Mapping[str, str] | None = None,
    *,
    secret: str | None = None,
    tolerance: float = TOLERANCE,
    now: float | None = None,
) -> WebhookEvent:
    """The event in a webhook request's ``body``, or a ``WebhookError``.

    With ``secret``, the signature header in ``headers`` must verify (else a
    ``WebhookSignatureError``) before the body is even decoded. Pure: no I/O. A
    ``tolerance`` that is not a number of seconds above 0 is an ``InvalidArgumentError``.
    """
    tolerance = positive_number(tolerance, "tolerance")
    if not isinstance(body, bytes | bytearray):
        raise WebhookError("the body must be bytes")
    if len(body) > MAX_BODY_BYTES:
        raise WebhookError(f"the body is larger than {MAX_BODY_BYTES} bytes")
    check_secret(secret)
    if secret is not None:
        found = {k.lower(): v for k, v in (headers or {}).items()}
        _verify(bytes(body), found.get(SIGNATURE_HEADER.lower()), secret, tolerance, now)
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):  # UnicodeDecodeError too; nesting too deep
        raise WebhookError("the body is not JSON (or nests too deep)") from None
    if not isinstance(payload, dict):
        raise WebhookError("the body is not a JSON object")
    kind = _text(payload, "type", "event")
    if kind is None:
        raise WebhookError("the event has no type")
    data = payload.get("data")
    data = data if isinstance(data, dict) else {}
    stamp = payload.get("timestamp")
    return WebhookEvent(
        type=kind,
        video_id=_text(data, "video_id") or _text(payload, "video_id"),
        owner_id=_text(data, "owner_id", "owner") or _text(payload, "owner_id"),
        id=_text(payload, "id"),
        timestamp=stamp if isinstance(stamp, int) and not isinstance(stamp, bool) else None,
        data=data,
    )


Callback = Callable[[WebhookEvent], Awaitable[None] | None]


class WebhookEvents:
    """A source of events for the same event loop: give it to a handler factory (it is
    a callback) and to ``client.wait_until_ready(..., events=source)``, which then
    looks at the video as soon as an event about it arrives instead of waiting for its
    next poll. Events nobody waits for are dropped."""

    def __init__(self) -> None:
        self._waiters: dict[str, set[asyncio.Event]] = {}

    def __call__(self, event: WebhookEvent) -> None:
        """Publish ``event`` to whoever waits for its video."""
        for wake in self._waiters.get(event.video_id or "", ()):
            wake.set()

    @contextlib.contextmanager
    def watch(self, video_id: str) -> Iterator[asyncio.Event]:
        """An ``asyncio.Event`` set whenever an event about ``video_id`` arrives."""
        wake = asyncio.Event()
        self._waiters.setdefault(video_id, set()).add(wake)
        try:
            yield wake
        finally:
            waiters = self._waiters.get(video_id, set())
            waiters.discard(wake)
            if not waiters:
                self._waiters.pop(video_id, None)


async def deliver(callback: Callback, event: WebhookEvent) -> None:
    """Run a sync or async callback."""
    result = callback(event)
    if result is not None:
        await result


def answer_for(error: WebhookError) -> tuple[int, bytes]:
    """The status and body a handler answers a refused event with."""
    status = 401 if isinstance(error, WebhookSignatureError) else 400
    return status, json.dumps({"error": str(error)}).encode()


def check_handler_options(
    secret: object, tolerance: object, body_timeout: object, max_concurrent_bodies: object
) -> tuple[float, float, int]:
    """A handler factory's options, checked before it makes its handler: ``tolerance``,
    ``body_timeout`` and ``max_concurrent_bodies`` as used."""
    check_secret(secret)
    return (
        positive_number(tolerance, "tolerance"),
        positive_number(body_timeout, "body_timeout"),
        positive_int(max_concurrent_bodies, "max_concurrent_bodies"),
    )


BUSY: Final = (503, b'{"error": "too many events being received at once"}', {"Retry-After": "1"})
"""The status, body and extra headers of the answer past ``max_concurrent_bodies``."""


def late_body(body_timeout: float) -> bytes:
    """The body of the 408 a handler answers a body that did not arrive in time with."""
    return json.dumps({"error": f"the body did not arrive within {body_timeout:g} s"}).encode()


ASGIReceive = Callable[[], Awaitable[Mapping[str, Any]]]
ASGISend = Callable[[Mapping[str, Any]], Awaitable[None]]


def asgi_app(
    callback: Callback,
    *,
    secret: str | None = None,
    tolerance: float = TOLERANCE,
    body_timeout: float = BODY_TIMEOUT,
    max_concurrent_bodies: int = MAX_CONCURRENT_BODIES,
) -> Callable[[Mapping[str, Any], ASGIReceive, ASGISend], Awaitable[None]]:
    """An ASGI 3 application that takes POSTed events at any path: each event is parsed
    (and its signature checked with ``secret``), handed to ``callback`` (sync or
    async), and answered 204; a refused one 400 (401 for a signature), not a POST 405
    (with ``Allow: POST``), a body over 1 MiB 413, a body not whole within
    ``body_timeout`` seconds 408, one past ``max_concurrent_bodies`` being read at once
    503 (with ``Retry-After``). A WebSocket is refused (closed before it is accepted:
    the server answers 403); the lifespan protocol is answered. Mount it under your
    framework's router (Starlette's ``Mount``, ...). An empty ``secret`` is an
    ``InvalidArgumentError``, and so is a ``tolerance`` or ``body_timeout`` that is not
    a number above 0 or a ``max_concurrent_bodies`` that is not a whole number above 0."""
    tolerance, body_timeout, most = check_handler_options(
        secret, tolerance, body_timeout, max_concurrent_bodies
    )
    reading = 0

    async def app(scope: Mapping[str, Any], receive: ASGIReceive, send: ASGISend) -> None:
        if scope["type"] != "http":
            await _asgi_other(scope, receive, send)
            return
        if scope.get("method") != "POST":
            await _asgi_respond(send, 405, more={"Allow": "POST"})
            return
        nonlocal reading
        if reading >= most:
            status, text, headers = BUSY
            await _asgi_respond(send, status, text, close=True, more=headers)
            return
        reading += 1
        try:
            chunks = await _asgi_read(receive, send, body_timeout)
        finally:
            reading -= 1
        if chunks is None:
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", [])}
        try:
            event = parse_event(b"".join(chunks), headers, secret=secret, tolerance=tolerance)
        except WebhookError as exc:
            await _asgi_respond(send, *answer_for(exc))
            return
        await deliver(callback, event)
        await _asgi_respond(send, 204)

    return app


async def _asgi_other(scope: Mapping[str, Any], receive: ASGIReceive, send: ASGISend) -> None:
    """What is not an HTTP request: the lifespan protocol answered, a WebSocket refused."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    # A WebSocket: returning without a word leaves the handshake to the server, which
    # answers 500; a close before the accept is the ASGI way to refuse it (403).
    if scope["type"] == "websocket" and (await receive())["type"] == "websocket.connect":
        await send({"type": "websocket.close", "code": 1008})


async def _asgi_respond(
    send: ASGISend,
    status: int,
    body: bytes = b"",
    close: bool = False,
    more: Mapping[str, str] | None = None,
) -> None:
    headers = [(b"content-type", b"application/json")] if body else []
    if close:
        headers.append((b"connection", b"close"))
    headers += [(k.lower().encode(), v.encode()) for k, v in (more or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _asgi_read(
    receive: ASGIReceive, send: ASGISend, body_timeout: float
) -> list[bytes] | None:
    """The body's pieces, or ``None`` when it was answered (or its client left)."""
    chunks: list[bytes] = []
    size, more = 0, True
    try:
        async with asyncio.timeout(body_timeout):  # a body that stops short
            while more and size <= MAX_BODY_BYTES:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return None
                chunk = bytes(message.get("body", b""))
                size += len(chunk)
                chunks.append(chunk)
                more = bool(message.get("more_body", False))
    except TimeoutError:
        await _asgi_respond(send, 408, late_body(body_timeout), close=True)
        return None
    if size > MAX_BODY_BYTES:
        await _asgi_respond(send, 413)
        return None
    return chunks
