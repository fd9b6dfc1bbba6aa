"""Webhooks: the parser and signature (pure), the client's set/get/remove, the emulator's
deliveries (events, signature, retries, log) to a real aiohttp.web receiver on
127.0.0.1, the ASGI app, and ``wait_until_ready(events=...)``."""

from __future__ import annotations

import asyncio
import io
import json
import time
import urllib.parse
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

import vidapi_async as va
from tests.conftest import make_file
from tests.integration.test_client_wire import TOKEN
from tests.wire import Reply, Seen, WireServer
from vidapi_async import webhooks
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

SECRET = "whsec-0123456789"
EVENT = {
    "id": "e1",
    "type": "video.format.ready",
    "timestamp": 1_700_000_000,
    "data": {"video_id": "x84sh87", "owner_id": "xdemou", "status": "ready"},
}

# --- pure ----------------------------------------------------------------------------------


def test_an_event_is_parsed_and_its_signature_checked() -> None:
    body = json.dumps(EVENT).encode()
    headers = {"x-vidapi-signature": webhooks.sign(body, SECRET, 1_700_000_000)}
    event = webhooks.parse_event(body, headers, secret=SECRET, now=1_700_000_010)
    assert (event.type, event.video_id, event.owner_id, event.id) == (
        "video.format.ready",
        "x84sh87",
        "xdemou",
        "e1",
    )
    assert event.is_ready and not event.failed
    assert webhooks.parse_event(body).timestamp == 1_700_000_000  # unsigned, no secret


@pytest.mark.parametrize(
    ("mutate", "error"),
    [
        (lambda b, h: (b + b" ", h), va.WebhookSignatureError),  # body changed
        (lambda b, h: (b, {}), va.WebhookSignatureError),  # no header
        (lambda b, h: (b, {"X-Vidapi-Signature": "t=x,v1=zz"}), va.WebhookSignatureError),
        (
            lambda b, h: (
                b,
                {"X-Vidapi-Signature": webhooks.sign(b, "other-secret", 1_700_000_000)},
            ),
            va.WebhookSignatureError,
        ),
        (
            lambda b, h: (b, {"X-Vidapi-Signature": webhooks.sign(b, SECRET, 1_699_990_000)}),
            va.WebhookSignatureError,
        ),  # too old: a replay
    ],
)
def test_a_bad_signature_is_refused(
    mutate: Callable[[bytes, dict[str, str]], tuple[bytes, dict[str, str]]], error: type
) -> None:
    body = json.dumps(EVENT).encode()
    headers = {"X-Vidapi-Signature": webhooks.sign(body, SECRET, 1_700_000_000)}
    body, headers = mutate(body, headers)
    with pytest.raises(error):
        webhooks.parse_event(body, headers, secret=SECRET, now=1_700_000_010)


@pytest.mark.parametrize(
    "body", [b"not json", b"[1]", b'{"data": {}}', b'{"type": 3}', b"{" + b" " * (1 << 20) + b"}"]
)
def test_a_body_that_is_not_an_event_is_refused(body: bytes) -> None:
    with pytest.raises(va.WebhookError):
        webhooks.parse_event(body)


# --- the client's calls --------------------------------------------------------------------


async def test_set_get_and_remove_the_webhook(emulator: Emulator, client: va.Client) -> None:
    assert await client.get_webhook() is None
    hook = await client.set_webhook(
        "https://hooks.example/h1", events=["video.created", "video.format.ready"], secret="s3"
    )
    assert hook == va.Webhook("https://hooks.example/h1", ("video.created", "video.format.ready"))
    assert await client.get_webhook() == hook
    me = await client.get("/me", fields="id,webhook_url")
    assert "s3" not in json.dumps(me)  # the secret is write-only
    await client.remove_webhook()
    assert await client.get_webhook() is None
    for bad in ({"events": []}, {"events": "video.created"}, {"events": ["Bad Name"]}):
        with pytest.raises(va.InvalidArgumentError):
            await client.set_webhook("https://hooks.example/h", **bad)
    with pytest.raises(va.InvalidArgumentError):
        await client.set_webhook("ftp://x/", events=["video.created"])


async def test_set_webhook_sends_the_platforms_form() -> None:
    def handler(seen: Seen) -> Reply:
        form = urllib.parse.parse_qs(seen.body.decode())
        return Reply.json({"webhook_url": form["webhook_url"][0], "webhook_events": "a.b,c.d"})

    async with WireServer(handler) as srv, va.Client(TOKEN, base_url=srv.url) as client:
        hook = await client.set_webhook("https://h.example/x?k=1&j=2", events=["a.b", "c.d"])
    assert hook.events == ("a.b", "c.d")
    (seen,) = srv.seen
    assert (seen.method, seen.path) == ("POST", "/me")
    assert urllib.parse.parse_qs(seen.body.decode()) == {
        "webhook_url": ["https://h.example/x?k=1&j=2"],
        "webhook_events": ["a.b,c.d"],
    }


# --- deliveries to a real receiver ---------------------------------------------------------


class Receiver:
    """An aiohttp.web app on 127.0.0.1 built with the library's handler factory."""

    def __init__(self, callback: Any, *, secret: str | None = SECRET, fail_first: int = 0):
        self.events: list[webhooks.WebhookEvent] = []
        self.statuses: list[int] = []
        self.got = asyncio.Event()
        self._fail_first = fail_first
        self._callback = callback
        self._secret = secret
        self.url = ""

    async def __aenter__(self) -> Receiver:
        inner = webhooks.aiohttp_handler(self._record, secret=self._secret)

        async def handler(request: web.Request) -> web.StreamResponse:
            if self._fail_first:
                self._fail_first -= 1
                self.statuses.append(500)
                return web.Response(status=500)
            resp = await inner(request)
            self.statuses.append(resp.status)
            return resp

        app = web.Application()
        app.router.add_post("/hooks", handler)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}/hooks"
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._runner.cleanup()

    async def _record(self, event: webhooks.WebhookEvent) -> None:
        self.events.append(event)
        self.got.set()
        await asyncio.sleep(0)
        self._callback(event)

    async def wait_for(self, predicate: Callable[[list[webhooks.WebhookEvent]], bool]) -> None:
        async with asyncio.timeout(30):
            while not predicate(self.events):
                self.got.clear()
                await self.got.wait()


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    async with Receiver(lambda _: None) as r:
        yield r


async def test_the_emulator_sends_signed_events(
    emulator: Emulator, client: va.Client, receiver: Receiver, tmp_path: Path
) -> None:
    await client.set_webhook(
        receiver.url,
        events=["video.created", "video.format.ready", "video.format.error", "video.deleted"],
        secret=SECRET,
    )
    uploaded = await client.upload_file(make_file(tmp_path / "v.mp4", 1000))
    good = await client.create_video(url=uploaded.url, title="good", channel="news")
    bad = await client.create_video(url=uploaded.url, title="bad", channel="news")
    emulator.fail_encoding(bad.id)
    await receiver.wait_for(lambda ev: len(ev) >= 4)
    await client.delete_video(good.id)
    await receiver.wait_for(lambda ev: len(ev) >= 5)
    seen = sorted((e.video_id == good.id, e.type) for e in receiver.events)
    assert seen == [
        (False, "video.created"),
        (False, "video.format.error"),
        (True, "video.created"),
        (True, "video.deleted"),
        (True, "video.format.ready"),
    ]
    assert all(e.owner_id == good.owner for e in receiver.events)
    assert set(receiver.statuses) == {204}
    assert all(d["status"] == 204 and d["attempt"] == 1 for d in emulator.webhook_deliveries)


async def test_only_the_asked_events_are_sent_and_a_wrong_secret_is_refused(
    emulator: Emulator, client: va.Client, tmp_path: Path
) -> None:
    async with Receiver(lambda _: None, secret="not-the-secret") as receiver:
        await client.set_webhook(receiver.url, events=["video.created"], secret=SECRET)
        uploaded = await client.upload_file(make_file(tmp_path / "v.mp4", 1000))
        await client.create_video(url=uploaded.url, title="t", channel="news")
        async with asyncio.timeout(30):
            # The log has no event to wait on: look at it until every attempt is in.
            while len(emulator.webhook_deliveries) < 5:  # noqa: ASYNC110
                await asyncio.sleep(0.05)
    assert receiver.events == []
    assert {d["status"] for d in emulator.webhook_deliveries} == {401}
    assert {d["type"] for d in emulator.webhook_deliveries} == {"video.created"}


async def test_a_failed_delivery_is_retried_with_the_same_event_id(tmp_path: Path) -> None:
    async with (
        Emulator(webhook_retry_delay=0.01, encoding_delay=3600) as emulator,
        Receiver(lambda _: None, fail_first=2) as receiver,
    ):
        async with client_for(emulator) as client:
            await client.set_webhook(receiver.url, events=["video.created"], secret=SECRET)
            uploaded = await client.upload_file(make_file(tmp_path / "v.mp4", 1000))
            await client.create_video(url=uploaded.url, title="t", channel="news")
            await receiver.wait_for(lambda ev: len(ev) == 1)
        log = emulator.webhook_deliveries
    assert [(d["attempt"], d["status"]) for d in log] == [(1, 500), (2, 500), (3, 204)]
    assert len({d["event"] for d in log}) == 1
    assert receiver.events[0].id == log[0]["event"]


# --- ASGI ----------------------------------------------------------------------------------


async def _asgi(app: Any, method: str, body: bytes, headers: dict[str, str]) -> int:
    sent: list[dict[str, Any]] = []
    pieces = [body[: len(body) // 2], body[len(body) // 2 :]]

    async def receive() -> dict[str, Any]:
        piece = pieces.pop(0)
        return {"type": "http.request", "body": piece, "more_body": bool(pieces)}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": method,
        "path": "/hooks",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
    }
    await app(scope, receive, send)
    return int(sent[0]["status"])


async def test_the_asgi_app_takes_events_and_refuses_the_rest() -> None:
    got: list[webhooks.WebhookEvent] = []
    app = webhooks.asgi_app(got.append, secret=SECRET)
    body = json.dumps(EVENT).encode()
    good = {"X-Vidapi-Signature": webhooks.sign(body, SECRET, int(time.time()))}
    assert await _asgi(app, "POST", body, good) == 204
    assert await _asgi(app, "POST", body, {}) == 401
    assert await _asgi(app, "POST", b"nope", good) == 401
    assert await _asgi(webhooks.asgi_app(got.append), "POST", b"nope", {}) == 400
    assert await _asgi(app, "GET", b"", {}) == 405
    assert [e.id for e in got] == ["e1"]


# --- wait_until_ready with events ----------------------------------------------------------


async def test_wait_until_ready_wakes_on_an_event(tmp_path: Path) -> None:
    events = webhooks.WebhookEvents()
    async with (
        Emulator(encoding_delay=0.5) as emulator,
        Receiver(events) as receiver,
        client_for(emulator) as client,
    ):
        await client.set_webhook(receiver.url, events=["video.format.ready"], secret=SECRET)
        uploaded = await client.upload_file(make_file(tmp_path / "v.mp4", 1000))
        video = await client.create_video(url=uploaded.url, title="t", channel="news")
        # The first poll would be an hour away: only the event can make it look sooner.
        waiting = client.wait_until_ready(video.id, poll=3600, timeout=7200, events=events)
        ready = await asyncio.wait_for(waiting, 60)  # a guard against hanging, not a timing
        looks = [r for r in emulator.requests if r.path == f"/video/{video.id}"]
    assert ready.is_ready
    assert len(looks) == 1


async def test_wait_until_ready_polls_when_no_event_comes(
    emulator: Emulator, tmp_path: Path
) -> None:
    events = webhooks.WebhookEvents()  # no webhook set: nothing will ever arrive
    async with client_for(emulator) as client:
        uploaded = await client.upload_file(make_file(tmp_path / "v.mp4", 1000))
        video = await client.create_video(url=uploaded.url, title="t", channel="news")
        ready = await client.wait_until_ready(video.id, poll=0.05, events=events)
    assert ready.is_ready


# --- hostile input: always a typed refusal, never a 500 ------------------------------------

HUGE_STAMP = {"X-Vidapi-Signature": "t=" + "1" * 4400 + ",v1=ab"}
HOSTILE_HEADERS = [
    HUGE_STAMP,
    {"X-Vidapi-Signature": "t=1700000000,v1=\u00e9\u00e9"},
    {"X-Vidapi-Signature": "t=\u0661\u0662,v1=ab"},
    {"X-Vidapi-Signature": "=,=,t=,v1"},
]
HOSTILE_BODIES = [
    b"[" * 300_000,
    b"{" * 300_000,
    b"1" * 5000,
    b'{"type": "video.created", "timestamp": ' + b"9" * 5000 + b"}",
    b"\xff\xfe{}",
]


@pytest.mark.parametrize("headers", HOSTILE_HEADERS)
def test_a_hostile_signature_header_is_a_signature_error(headers: dict[str, str]) -> None:
    with pytest.raises(va.WebhookSignatureError):
        webhooks.parse_event(json.dumps(EVENT).encode(), headers, secret=SECRET)


@pytest.mark.parametrize("body", HOSTILE_BODIES)
def test_a_hostile_body_is_a_webhook_error(body: bytes) -> None:
    with pytest.raises(va.WebhookError):
        webhooks.parse_event(body)


async def test_the_handlers_answer_hostile_input_401_or_400() -> None:
    import aiohttp

    async with Receiver(lambda _: None) as signed, Receiver(lambda _: None, secret=None) as bare:
        async with aiohttp.ClientSession() as http:
            for headers in HOSTILE_HEADERS:
                async with http.post(signed.url, data=b"{}", headers=headers) as resp:
                    assert resp.status == 401
            for body in HOSTILE_BODIES:
                async with http.post(bare.url, data=io.BytesIO(body)) as resp:
                    assert resp.status == 400
            async with http.post(bare.url, data=io.BytesIO(b" " * ((1 << 20) + 1))) as resp:
                assert resp.status == 413
    assert signed.events == [] and bare.events == []
    app = webhooks.asgi_app(lambda _: None, secret=SECRET)
    for headers in HOSTILE_HEADERS:
        assert await _asgi(app, "POST", b"{}", headers) == 401
    for body in HOSTILE_BODIES:
        assert await _asgi(webhooks.asgi_app(lambda _: None), "POST", body, {}) == 400


def test_an_empty_secret_is_refused_where_it_is_given() -> None:
    body = json.dumps(EVENT).encode()
    headers = {"X-Vidapi-Signature": webhooks.sign(body, "", 1_700_000_000)}
    with pytest.raises(va.InvalidArgumentError, match="secret"):
        webhooks.parse_event(body, headers, secret="", now=1_700_000_000)
    with pytest.raises(va.InvalidArgumentError, match="secret"):
        webhooks.aiohttp_handler(lambda _: None, secret="")
    with pytest.raises(va.InvalidArgumentError, match="secret"):
        webhooks.asgi_app(lambda _: None, secret="")
