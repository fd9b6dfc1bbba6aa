"""Live streams in API v2: v2's separate livestream resource (spec api-v2 §4
"Livestreams") behind the same ``client.live`` operations and the same ``Video``
model. On the wire at tests/wire.py's scripted server (answers written by hand from
the spec), against the emulator's v2 (its own code), and read back by the legacy
dialect from the same backend."""

from __future__ import annotations

import datetime as dt
import json

import aiohttp
import pytest

import vidapi_async as va
from tests.wire import Reply, Seen, WireServer
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

INGEST = "rtmp://ingest.example/live/stream-key-secret"


def live_server(seen: Seen) -> Reply:
    if (seen.method, seen.path) == ("GET", "/v2/me"):
        return Reply.json({"user_id": "u1", "profiles": [{"profile_id": "p1", "name": "M"}]})
    if (seen.method, seen.path) in (
        ("POST", "/v2/profiles/p1/livestreams"),
        ("GET", "/v2/livestreams/x9"),
    ):
        return Reply.json(
            {
                "livestream_id": "x9",
                "title": "Tonight",
                "category": "news",
                "visibility": "private",
                "is_for_kids": False,
                "start_at": "2026-06-01T20:00:00Z",
                "end_at": None,
                "livestream_url": "https://www.example/video/x9",
                "ingest": {"rtmp_url": INGEST, "srt_url": "srt://ingest.example:9710"},
                "status": "idle",
            },
            status=201 if seen.method == "POST" else 200,
        )
    return Reply.json({"error": {"code": "RESOURCE_NOT_FOUND", "message": "no"}}, status=404)


async def test_create_and_get_live_stream_speak_the_livestream_resource() -> None:
    start = dt.datetime(2026, 6, 1, 22, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    async with WireServer(live_server) as srv:
        async with va.Client(access_token="t0", api="v2", base_url=f"{srv.url}/v2") as client:
            live = await client.create_live_stream(
                title="Tonight",
                channel="news",
                published=False,
                start_time=int(start.timestamp()),
            )
            again = await client.live.get(live)
    create, read = srv.seen[1:]
    assert (create.method, create.path) == ("POST", "/v2/profiles/p1/livestreams")
    assert create.headers["content-type"] == "application/json"
    assert json.loads(create.body) == {
        "title": "Tonight",
        "category": "news",
        "visibility": "private",
        "is_for_kids": False,
        "start_at": "2026-06-01T20:00:00Z",
    }
    assert (read.method, read.path, read.body) == ("GET", "/v2/livestreams/x9", b"")
    for video in (live, again):
        assert (video.id, video.mode, video.is_live, video.channel) == ("x9", "live", True, "news")
        assert video.live_publish_url == INGEST and INGEST not in repr(video)
        assert video.start_time == int(start.timestamp()) and video.end_time is None
        assert video.private is True and video.url == "https://www.example/video/x9"
        assert video.status is None  # a livestream's status is not a video's processing


async def test_make_live_stays_refused_in_v2() -> None:
    async with va.Client(access_token="t", api="v2", base_url="http://127.0.0.1:9") as client:
        with pytest.raises(va.UnsupportedOperationError, match="make_live"):
            await client.make_live("x1")


async def test_the_emulator_serves_v2_livestreams_from_the_same_backend(
    emulator: Emulator,
) -> None:
    async with client_for(emulator, api="v2") as v2client, client_for(emulator) as legacy:
        live = await v2client.create_live_stream(
            title="Tonight", channel="news", start_time=1_900_000_000
        )
        read = await v2client.get_live_stream(live.id)
        seen = await legacy.get_live_stream(live.id)
    assert live.mode == read.mode == seen.mode == "live"
    assert live.id == read.id == seen.id
    assert live.live_publish_url and live.live_publish_url == seen.live_publish_url
    assert live.start_time == read.start_time == seen.start_time == 1_900_000_000
    assert (seen.title, seen.channel) == ("Tonight", "news")


async def test_the_emulators_livestream_rules(emulator: Emulator) -> None:
    """Raw HTTP, not the client: scope ``live.manage``, the required fields, a read of a
    video that is not live is a 404 in v2's error shape."""
    base = emulator.v2_base_url
    async with aiohttp.ClientSession() as http:

        async def token(scope: str) -> str:
            form = {
                "grant_type": "client_credentials",
                "client_id": "demo-api-key",
                "client_secret": "demo-api-secret",
                "scope": scope,
            }
            async with http.post(f"{base}/token", data=form, ssl=emulator.ssl_context()) as r:
                return str((await r.json())["access_token"])

        async def call(method: str, path: str, tok: str, body: object = None) -> tuple[int, dict]:  # type: ignore[type-arg]
            headers = {"Authorization": f"Bearer {tok}"}
            async with http.request(
                method, f"{base}{path}", json=body, headers=headers, ssl=emulator.ssl_context()
            ) as r:
                return r.status, await r.json()

        full = await token("account.read live.manage live.read video.manage")
        narrow = await token("account.read video.manage")
        owner = (await call("GET", "/me", full))[1]["user_id"]
        path = f"/profiles/{owner}/livestreams"
        body = {"title": "T", "category": "news", "visibility": "public", "is_for_kids": False}
        status, answer = await call("POST", path, narrow, body)
        assert (status, answer["error"]["code"]) == (403, "MISSING_PERMISSIONS")
        status, answer = await call("POST", path, full, {"title": "T", "category": "news"})
        assert (status, answer["error"]["code"]) == (400, "MISSING_PARAMETER")
        status, answer = await call("POST", path, full, {**body, "is_for_kids": "no"})
        assert (status, answer["error"]["code"]) == (400, "INVALID_PARAMETER")
        status, answer = await call("POST", path, full, {**body, "start_at": "2026-06-01T20:00Z"})
        assert status == 201, answer
        assert answer["ingest"]["rtmp_url"].startswith("rtmp://")
        assert answer["start_at"] == "2026-06-01T20:00:00Z" and answer["status"] == "idle"
        made = next(iter(emulator.videos()), None)
        assert made is not None and made["mode"] == "live"
        status, answer = await call("GET", f"/livestreams/{answer['livestream_id']}", full)
        assert status == 200 and answer["title"] == "T"
        status, answer = await call("GET", "/livestreams/xnope", full)
        assert (status, answer["error"]["code"]) == (404, "RESOURCE_NOT_FOUND")
        assert answer["error"]["correlation_id"]
