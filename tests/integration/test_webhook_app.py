"""The webhook receivers against what is not an event request: a WebSocket upgrade, the
lifespan protocol, a body that never arrives whole (issue 29). The ASGI app is driven
directly, message by message; the aiohttp handler through a real server and a raw
socket (bytes on the wire, no aiohttp client)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

import vidapi_async as va
from tests.raw_http import exchange as _raw
from tests.raw_http import serving
from vidapi_async import webhooks

SECRET = "whsec-test"
EVENT = {"id": "e1", "type": "video.format.ready", "data": {"video_id": "x1"}}
SAFETY = 30.0  # a hung test fails after this; never what a test measures


class _Peer:
    """The server's side of one ASGI connection: what the app is sent, what it sends."""

    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.messages = messages
        self.sent: list[dict[str, Any]] = []
        self.received = 0

    async def receive(self) -> dict[str, Any]:
        self.received += 1
        if self.messages:
            return self.messages.pop(0)
        await asyncio.Event().wait()  # the peer sends nothing more, and never hangs up
        raise AssertionError("unreachable")

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)


async def _run(app: Any, scope: dict[str, Any], peer: _Peer) -> None:
    await asyncio.wait_for(app(scope, peer.receive, peer.send), SAFETY)


async def test_a_websocket_upgrade_is_closed_not_left_to_the_server() -> None:
    """Before: the app returned without a word, which an ASGI server answers 500; now
    it closes the handshake (``websocket.close`` before ``websocket.accept``: the
    server answers 403), the ASGI way to refuse a WebSocket."""
    got: list[webhooks.WebhookEvent] = []
    app = webhooks.asgi_app(got.append, secret=SECRET)
    peer = _Peer([{"type": "websocket.connect"}])
    scope = {"type": "websocket", "path": "/hooks", "headers": [], "subprotocols": []}
    await _run(app, scope, peer)
    assert peer.sent == [{"type": "websocket.close", "code": 1008}]
    assert got == []


async def test_the_lifespan_protocol_is_answered() -> None:
    app = webhooks.asgi_app(lambda _: None)
    peer = _Peer([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])
    await _run(app, {"type": "lifespan", "asgi": {"version": "3.0"}}, peer)
    assert [m["type"] for m in peer.sent] == [
        "lifespan.startup.complete",
        "lifespan.shutdown.complete",
    ]


def _http(headers: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "type": "http",
        "method": "POST",
        "path": "/hooks",
        "headers": [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()],
    }


async def test_a_body_that_stops_short_is_answered_408_at_the_deadline() -> None:
    """A body declared 100 bytes of which 10 come: before, the app waited for the rest
    for ever (the connection and its task held); now ``body_timeout`` ends the wait
    with a 408 (and ``connection: close``)."""
    got: list[webhooks.WebhookEvent] = []
    app = webhooks.asgi_app(got.append, body_timeout=0.2)
    peer = _Peer([{"type": "http.request", "body": b"0123456789", "more_body": True}])
    await _run(app, _http({"Content-Length": "100"}), peer)
    assert peer.sent[0]["type"] == "http.response.start"
    assert peer.sent[0]["status"] == 408
    assert (b"connection", b"close") in peer.sent[0]["headers"]
    assert got == []


async def test_a_body_that_arrives_in_time_is_still_an_event() -> None:
    got: list[webhooks.WebhookEvent] = []
    app = webhooks.asgi_app(got.append, body_timeout=SAFETY)
    body = json.dumps(EVENT).encode()
    pieces = [body[:5], body[5:]]
    peer = _Peer(
        [
            {"type": "http.request", "body": pieces[0], "more_body": True},
            {"type": "http.request", "body": pieces[1], "more_body": False},
        ]
    )
    await _run(app, _http(), peer)
    assert peer.sent[0]["status"] == 204
    assert [e.id for e in got] == ["e1"]


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), True, "10"])
def test_a_body_timeout_that_is_not_a_positive_number_is_refused(bad: object) -> None:
    for make in (webhooks.asgi_app, webhooks.aiohttp_handler):
        with pytest.raises(va.InvalidArgumentError, match="body_timeout"):
            make(lambda _: None, body_timeout=bad)  # type: ignore[arg-type]


async def test_the_aiohttp_handler_answers_a_short_body_408_at_the_deadline() -> None:
    """The same hole in the aiohttp handler: a body that stops short held the request
    (aiohttp sets no deadline for a body); now 408 after ``body_timeout``."""
    got: list[webhooks.WebhookEvent] = []
    async with serving(webhooks.aiohttp_handler(got.append, body_timeout=0.2)) as port:
        head = b"POST /hooks HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n"
        answer = await _raw(port, head + b"0123456789")
        assert answer.startswith(b"HTTP/1.1 408 "), answer
        body = json.dumps(EVENT).encode()
        whole = (
            b"POST /hooks HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        assert (await _raw(port, whole)).startswith(b"HTTP/1.1 204 ")
    assert [e.id for e in got] == ["e1"]
