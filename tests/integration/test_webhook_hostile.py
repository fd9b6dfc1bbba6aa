"""The webhook receivers against a hostile reviewer's requests (second round): header
bytes that are not text, a body that does not decode, a client that hangs up, many
bodies at once, a bad ``tolerance``. The aiohttp handler runs in a real server and is
sent raw bytes (no aiohttp client); the ASGI app is driven message by message."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

import pytest

import vidapi_async as va
from tests.raw_http import exchange as _raw
from tests.raw_http import serving as _serve
from vidapi_async import webhooks

SECRET = "whsec-test"
EVENT = json.dumps({"id": "e1", "type": "video.format.ready", "data": {"video_id": "x1"}})
SAFETY = 20.0  # a hung test fails after this; never what a test measures


@pytest.mark.parametrize("mac", ["\udcff", "é" * 64, "z" * 64, "0" * 63])
def test_a_signature_that_is_not_hex_is_a_signature_error(mac: str) -> None:
    """Before: a v1 value with a byte that is not text (aiohttp hands it on as a lone
    surrogate) raised UnicodeEncodeError, which the handler answered 500."""
    headers = {webhooks.SIGNATURE_HEADER: f"t={int(time.time())},v1={mac}"}
    with pytest.raises(va.WebhookSignatureError):
        webhooks.parse_event(EVENT.encode(), headers, secret=SECRET)


@pytest.mark.parametrize("bad", [float("nan"), "300", -1, 0, True, float("inf"), None])
def test_a_tolerance_that_is_not_a_positive_number_is_refused(bad: object) -> None:
    """Before: NaN accepted a year-old signature, "300" answered every event 500, -1
    refused every one."""
    for make in (webhooks.asgi_app, webhooks.aiohttp_handler):
        with pytest.raises(va.InvalidArgumentError, match="tolerance"):
            make(lambda _: None, secret=SECRET, tolerance=bad)  # type: ignore[arg-type]
    with pytest.raises(va.InvalidArgumentError, match="tolerance"):
        webhooks.parse_event(b"{}", {}, secret=SECRET, tolerance=bad)  # type: ignore[arg-type]


def _post(body: bytes, *more: bytes) -> bytes:
    head = [b"POST /hooks HTTP/1.1", b"Host: x", b"Connection: close", *more]
    head.append(b"Content-Length: %d" % len(body))
    return b"\r\n".join(head) + b"\r\n\r\n" + body


async def test_the_aiohttp_handler_answers_malformed_input_4xx_never_500(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Before: a signature byte that is not text, and a body that does not decode as its
    Content-Encoding, were answered 500 with a traceback in the log."""
    got: list[webhooks.WebhookEvent] = []
    async with _serve(webhooks.aiohttp_handler(got.append, secret=SECRET)) as port:
        stamp = str(int(time.time())).encode()
        answer = await _raw(
            port, _post(EVENT.encode(), b"X-Vidapi-Signature: t=" + stamp + b",v1=\xff")
        )
        assert answer.startswith(b"HTTP/1.1 401 "), answer[:100]
        answer = await _raw(port, _post(b"abcd", b"Content-Encoding: gzip"))
        assert answer.startswith(b"HTTP/1.1 400 "), answer[:100]
    assert got == []
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == [], [r.getMessage() for r in errors]


async def test_a_client_hanging_up_mid_body_logs_no_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Before: each such client made aiohttp log a 20-line ConnectionResetError
    traceback at ERROR (anyone could flood the log)."""
    async with _serve(webhooks.aiohttp_handler(lambda _: None, body_timeout=SAFETY)) as port:
        for _ in range(3):
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"POST /hooks HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
            await writer.drain()
            await asyncio.sleep(0.05)  # the handler reads; not a measurement
            writer.close()
            await writer.wait_closed()
        assert (await _raw(port, _post(EVENT.encode()))).startswith(b"HTTP/1.1 204 ")
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == [], [r.getMessage() for r in errors]


async def test_bodies_past_the_bound_are_answered_503() -> None:
    """Before: no bound on the bodies read at once (150 stalled 1 MiB bodies: +180 MB
    for their whole ``body_timeout``). Past ``max_concurrent_bodies`` a request is
    answered 503 at once; once the others are done one is taken again."""
    handler = webhooks.aiohttp_handler(lambda _: None, body_timeout=SAFETY, max_concurrent_bodies=1)
    async with _serve(handler) as port:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"POST /hooks HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
        await writer.drain()
        answer = b""
        for _ in range(int(SAFETY / 0.05)):  # until the stalled one is being read
            answer = await _raw(port, _post(EVENT.encode()))
            if not answer.startswith(b"HTTP/1.1 204 "):
                break
            await asyncio.sleep(0.05)
        assert answer.startswith(b"HTTP/1.1 503 "), answer[:100]
        assert b"\r\nretry-after: " in answer.lower()
        writer.close()
        await writer.wait_closed()
        for _ in range(int(SAFETY / 0.05)):
            answer = await _raw(port, _post(EVENT.encode()))
            if answer.startswith(b"HTTP/1.1 204 "):
                break
            await asyncio.sleep(0.05)
        assert answer.startswith(b"HTTP/1.1 204 "), answer[:100]


class _Peer:
    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.messages = messages
        self.sent: list[dict[str, Any]] = []
        self.stalled = asyncio.Event()

    async def receive(self) -> dict[str, Any]:
        if self.messages:
            return self.messages.pop(0)
        self.stalled.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)


def _scope(method: str = "POST") -> dict[str, Any]:
    return {"type": "http", "method": method, "path": "/hooks", "headers": []}


async def test_the_asgi_app_bounds_the_bodies_it_reads_at_once() -> None:
    app = webhooks.asgi_app(lambda _: None, body_timeout=SAFETY, max_concurrent_bodies=1)
    stalled = _Peer([{"type": "http.request", "body": b"{", "more_body": True}])
    reading = asyncio.ensure_future(app(_scope(), stalled.receive, stalled.send))
    try:
        await asyncio.wait_for(stalled.stalled.wait(), SAFETY)  # its body being read
        other = _Peer([{"type": "http.request", "body": EVENT.encode()}])
        await asyncio.wait_for(app(_scope(), other.receive, other.send), SAFETY)
        assert other.sent[0]["status"] == 503
    finally:
        reading.cancel()
        await asyncio.gather(reading, return_exceptions=True)
    after = _Peer([{"type": "http.request", "body": EVENT.encode()}])
    await asyncio.wait_for(app(_scope(), after.receive, after.send), SAFETY)
    assert after.sent[0]["status"] == 204


async def test_the_asgi_apps_405_says_what_is_allowed() -> None:
    app = webhooks.asgi_app(lambda _: None)
    peer = _Peer([])
    await asyncio.wait_for(app(_scope("GET"), peer.receive, peer.send), SAFETY)
    assert peer.sent[0]["status"] == 405
    assert (b"allow", b"POST") in peer.sent[0]["headers"]


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "8"])
def test_a_bad_bound_on_bodies_is_refused(bad: object) -> None:
    for make in (webhooks.asgi_app, webhooks.aiohttp_handler):
        with pytest.raises(va.InvalidArgumentError, match="max_concurrent_bodies"):
            make(lambda _: None, max_concurrent_bodies=bad)  # type: ignore[arg-type]
