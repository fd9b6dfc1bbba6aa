"""``Client(api="v2")`` on the wire: each v2 request's method, path, JSON body and
headers as they arrive at tests/wire.py's scripted server (no code shared with the
client, nor with the emulator's v2), with answers written by hand from the spec."""

from __future__ import annotations

import datetime as dt
import json
import urllib.parse
from typing import Any

import pytest

import vidapi_async as va
from tests.wire import Reply, Seen, WireServer

KEY, SECRET = "key-1", "secret-very-private-1"
TOKEN = "v2-token-0123456789"
PASSWORD = "pw-secret-42"


def v2_server(srv_url: list[str], pages: int = 1) -> Any:
    """A scripted v2 platform: answers by method and path."""

    def handle(seen: Seen) -> Reply:
        base = srv_url[0]
        path, query = seen.path, urllib.parse.parse_qs(seen.raw_query)
        if (seen.method, path) == ("POST", "/v2/token"):
            return Reply.json({"access_token": TOKEN, "expires_in": 1800, "token_type": "Bearer"})
        if (seen.method, path) == ("GET", "/v2/me"):
            return Reply.json({"user_id": "u1", "profiles": [{"profile_id": "p1", "name": "M"}]})
        if (seen.method, path) == ("POST", "/v2/files/upload_sessions"):
            return Reply.json(
                {
                    "upload_url": f"{base}/upload?uuid=1&seal=a%2Fb",
                    "progress_url": f"{base}/progress?uuid=1",
                },
                status=201,
            )
        if (seen.method, path) == ("POST", "/upload"):
            return Reply.json({"url": "https://files.example/f.mp4#h", "size": 7})
        if (seen.method, path) == ("POST", "/v2/profiles/p1/videos"):
            body = json.loads(seen.body)
            return Reply.json(
                {
                    "video_id": "x1",
                    "title": body["title"],
                    "category": body["category"],
                    "visibility": body["visibility"],
                    "created_at": "2026-06-01T12:00:00Z",
                },
                status=201,
            )
        if (seen.method, path) == ("PATCH", "/v2/videos/x1"):
            if b"too-long" in seen.body:
                error = {"code": "INVALID_PARAMETER", "message": f"bad: {seen.body.decode()}"}
                return Reply.json({"error": {**error, "correlation_id": "c-1"}}, status=400)
            return Reply(204)
        if (seen.method, path) == ("GET", "/v2/videos/x1"):
            return Reply.json({"video_id": "x1", "title": "New", "visibility": "password"})
        if (seen.method, path) == ("DELETE", "/v2/videos/x1"):
            return Reply(204)
        if (seen.method, path) == ("GET", "/v2/profiles/p1/videos"):
            page = int(query.get("cursor", ["1"])[0])
            nxt = f"{base}/v2/profiles/p1/videos?cursor={page + 1}" if page < pages else None
            return Reply.json({"data": [{"video_id": f"x{page}"}], "page": page, "next": nxt})
        return Reply.json({"error": {"code": "RESOURCE_NOT_FOUND", "message": "no"}}, status=404)

    return handle


async def test_upload_video_sends_v2_requests() -> None:
    url: list[str] = []
    async with WireServer(v2_server(url)) as srv:
        url.append(srv.url)
        auth = va.ApiKey(KEY, SECRET)
        async with va.Client(auth=auth, api="v2", base_url=f"{srv.url}/v2") as client:
            video = await client.upload_video(
                b"movie!!", title="Hi", channel="news", tags=["a"], filename="m.mp4"
            )
    assert (video.id, video.title, video.channel, video.private) == ("x1", "Hi", "news", False)
    assert video.created_time == dt.datetime(2026, 6, 1, 12, tzinfo=dt.UTC)
    token = srv.seen[0]
    assert (token.method, token.path) == ("POST", "/v2/token")
    assert token.headers["content-type"] == "application/x-www-form-urlencoded"
    assert "authorization" not in token.headers
    assert urllib.parse.parse_qs(token.body.decode()) == {
        "grant_type": ["client_credentials"],
        "client_id": [KEY],
        "client_secret": [SECRET],
        "scope": ["account.read video.read video.manage"],
    }
    assert [(s.method, s.path) for s in srv.seen[1:]] == [
        ("GET", "/v2/me"),
        ("POST", "/v2/files/upload_sessions"),
        ("POST", "/upload"),
        ("POST", "/v2/profiles/p1/videos"),
    ]
    me, session, upload, create = srv.seen[1:]
    for seen in (me, session, create):
        assert seen.headers["authorization"] == f"Bearer {TOKEN}"
        assert seen.headers["accept"] == "application/json"
    assert session.body == b"" and session.headers["content-length"] == "0"
    assert "authorization" not in upload.headers and upload.target == "/upload?uuid=1&seal=a%2Fb"
    assert b"movie!!" in upload.body
    assert create.headers["content-type"] == "application/json"
    assert json.loads(create.body) == {
        "title": "Hi",
        "category": "news",
        "tags": ["a"],
        "visibility": "public",
        "is_for_kids": False,
        "source": {"file_url": "https://files.example/f.mp4#h"},
    }


async def test_set_password_patches_then_reads_and_delete_is_a_delete() -> None:
    url: list[str] = []
    async with WireServer(v2_server(url)) as srv:
        url.append(srv.url)
        async with va.Client(access_token="t0", api="v2", base_url=f"{srv.url}/v2") as client:
            video = await client.set_password("x1", PASSWORD)
            await client.delete_video("x1")
    assert video.password_protected is True
    patch, get, delete = srv.seen
    assert (patch.method, patch.path) == ("PATCH", "/v2/videos/x1")
    assert patch.headers["content-type"] == "application/json"
    assert json.loads(patch.body) == {"visibility": "password", "password": PASSWORD}
    assert (get.method, get.path) == ("GET", "/v2/videos/x1")
    assert urllib.parse.parse_qs(get.raw_query)["fields"] == ["video_id,visibility"]
    assert (delete.method, delete.path, delete.body) == ("DELETE", "/v2/videos/x1", b"")


async def test_update_video_patches_only_what_is_given() -> None:
    url: list[str] = []
    async with WireServer(v2_server(url)) as srv:
        url.append(srv.url)
        async with va.Client(access_token="t0", api="v2", base_url=f"{srv.url}/v2") as client:
            await client.update_video("x1", is_created_for_kids=True, geoblocking=["deny", "fr"])
    body = json.loads(srv.seen[0].body)
    assert body == {"is_for_kids": True, "geo_restriction": {"mode": "deny", "countries": ["FR"]}}


async def test_an_error_echoing_the_password_never_shows_it() -> None:
    url: list[str] = []
    async with WireServer(v2_server(url)) as srv:
        url.append(srv.url)
        async with va.Client(access_token="t0", api="v2", base_url=f"{srv.url}/v2") as client:
            with pytest.raises(va.InvalidParameterError) as info:
                await client.update_video("x1", title="too-long", private=False)
            with pytest.raises(va.APIError) as echoed:
                await client.set_password("x1", "too-long")
    assert info.value.correlation_id == "c-1" and "c-1" in str(info.value)
    assert "too-long" not in str(echoed.value)


async def test_iter_videos_follows_next_until_null() -> None:
    url: list[str] = []
    async with WireServer(v2_server(url, pages=3)) as srv:
        url.append(srv.url)
        async with va.Client(access_token="t0", api="v2", base_url=f"{srv.url}/v2") as client:
            ids = [v.id async for v in client.iter_videos()]
    assert ids == ["x1", "x2", "x3"]
    first = srv.seen[1]
    assert urllib.parse.parse_qs(first.raw_query)["page_size"] == ["100"]
    assert [s.target for s in srv.seen[2:]] == [
        "/v2/profiles/p1/videos?cursor=2",
        "/v2/profiles/p1/videos?cursor=3",
    ]
